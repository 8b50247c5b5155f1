// Structured JSON logs (pino). Every reconcile's lines carry the controller and the request key.
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(options: { name?: string; level?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  return pino(
    {
      name: options.name,
      level: options.level ?? process.env['LOG_LEVEL'] ?? 'info',
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Secrets must never reach logs, whatever object a caller passes.
      redact: { paths: ['*.data', '*.stringData', '*.token', '*.password', 'headers.authorization'], censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    options.destination ?? pino.destination({ dest: 2, sync: true }),
  );
}
