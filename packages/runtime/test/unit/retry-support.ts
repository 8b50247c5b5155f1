// Shared by the retry tests: a log that keeps its lines, a metric's value, and a scripted HTTPS API server.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '../../src/client/client.ts';
import type { RuntimeMetrics } from '../../src/manager/metrics.ts';
import type { RetryLog } from '../../src/watch/retry-reporter.ts';
import { generateCertificates } from '../../src/webhook/certs.ts';

export interface Line {
  level: 'debug' | 'info' | 'warn';
  msg: string;
  fields: Record<string, unknown>;
}

/** A RetryLog that keeps every line. */
export function recordingLog(): RetryLog & { lines: Line[]; at: (level: Line['level']) => Line[] } {
  const lines: Line[] = [];
  const push = (level: Line['level']) => (fields: Record<string, unknown>, msg: string) => void lines.push({ level, msg, fields });
  return { lines, debug: push('debug'), info: push('info'), warn: push('warn'), at: (level) => lines.filter((l) => l.level === level) };
}

/** The value of one series in a registry, or undefined when it has none. */
export async function metricValue(metrics: RuntimeMetrics, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = metrics.registry.getSingleMetric(name);
  if (!metric) return undefined;
  const { values } = await metric.get();
  const found = values.find((v) => Object.entries(labels).every(([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want));
  return found?.value;
}

/** A fake API server: `handle` answers each request; the client trusts its CA. */
export async function scriptedServer(handle: (req: IncomingMessage, res: ServerResponse, url: URL) => void): Promise<{ client: Client; server: Server; requests: URL[]; close: () => Promise<void> }> {
  const certs = await generateCertificates({ ipAddresses: ['127.0.0.1'] });
  const requests: URL[] = [];
  const server = createServer({ cert: certs.cert, key: certs.key }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    requests.push(url);
    handle(req, res, url);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const client = new Client({ server: `https://127.0.0.1:${port}`, tls: { ca: certs.caCert }, headers: () => Promise.resolve({}) });
  return {
    client,
    server,
    requests,
    close: async () => {
      client.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answers with a Kubernetes Status, as the API server does for errors. */
export function status(res: ServerResponse, code: number, reason: string, message: string): void {
  res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message }));
}

export function json(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
