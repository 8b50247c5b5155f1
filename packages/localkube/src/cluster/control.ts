// The supervisor's control channel: HTTP over a Unix socket in the state directory, and its status file.
// The CLI and the TypeScript API are both clients of it.
import { request } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export const controlSocket = (stateDir: string): string => join(stateDir, 'control.sock');
export const statusFile = (stateDir: string): string => join(stateDir, 'status.json');

export interface SupervisorStatus {
  phase: 'starting' | 'ready' | 'stopping' | 'stopped' | 'failed';
  step: string;
  pid: number;
  nodes: string[];
  kubeconfig: string;
  error?: string;
  /** Seconds from the supervisor's start to Ready. */
  upSeconds?: number;
}

export async function readStatus(stateDir: string): Promise<SupervisorStatus | undefined> {
  try {
    return JSON.parse(await readFile(statusFile(stateDir), 'utf8')) as SupervisorStatus;
  } catch {
    return undefined;
  }
}

/** Sends one command to the supervisor; resolves with its JSON answer, rejects with its error message. */
export function control<T = unknown>(stateDir: string, command: string, args: Record<string, unknown> = {}, timeoutMs = 300_000): Promise<T> {
  const body = JSON.stringify(args);
  return new Promise<T>((resolve, reject) => {
    const req = request(
      { socketPath: controlSocket(stateDir), path: `/${command}`, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, timeout: timeoutMs },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => {
          const parsed = (text ? JSON.parse(text) : {}) as { error?: string; result?: T };
          if (res.statusCode !== 200) reject(new Error(parsed.error ?? `localkube ${command}: HTTP ${res.statusCode}`));
          else resolve(parsed.result as T);
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`localkube ${command}: no answer in ${timeoutMs / 1000}s`)));
    req.on('error', reject);
    req.end(body);
  });
}
