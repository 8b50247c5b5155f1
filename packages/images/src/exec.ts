import { access } from 'node:fs/promises';
// Running host commands: captured output, and errors that name the command and show what it said.
import { spawn } from 'node:child_process';
import { hostCommand } from './host.ts';

export class CommandError extends Error {
  readonly command: string;
  readonly exitCode: number | null;
  readonly output: string;
  constructor(command: string, exitCode: number | null, output: string) {
    super(`${command} failed (exit ${exitCode ?? 'signal'}): ${output.trim().split('\n').slice(-15).join('\n')}`);
    this.name = 'CommandError';
    this.command = command;
    this.exitCode = exitCode;
    this.output = output;
  }
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string | Buffer;
  signal?: AbortSignal;
  /** Called with each line of combined output as it arrives (for progress on long builds). */
  onLine?: (line: string) => void;
  /** Resolve with the result instead of throwing on a non-zero exit. */
  allowFailure?: boolean;
}

export interface RunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

export function run(command: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      signal: options.signal,
    });
    let stdout = '';
    let stderr = '';
    let pending = '';
    const feed = (chunk: string): void => {
      if (!options.onLine) return;
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) options.onLine(line);
    };
    child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; feed(d); });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; feed(d); });
    child.on('error', (err: NodeJS.ErrnoException) => {
      reject(err.code === 'ENOENT' ? new Error(`${command}: command not found`) : err);
    });
    child.on('close', (code) => {
      if (pending && options.onLine) options.onLine(pending);
      if (code !== 0 && !options.allowFailure) {
        reject(new CommandError([command, ...args].join(' '), code, stderr || stdout));
      } else {
        resolvePromise({ exitCode: code, stdout, stderr });
      }
    });
    // A command that exits without reading its input closes the pipe: not an error of ours.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/** Like `run`, but returns trimmed stdout. */
export async function output(command: string, args: readonly string[], options: RunOptions = {}): Promise<string> {
  return (await run(command, args, options)).stdout.trim();
}

// `command -v` is a shell builtin, so the check runs through the host's sh.
const SH = hostCommand('sh', 'dash', 'looking commands up on PATH');

export async function commandExists(command: string): Promise<boolean> {
  const result = await run(SH, ['-c', `command -v ${command}`], { allowFailure: true });
  return result.exitCode === 0;
}

/** Whether a path exists (a cached build's output, say). */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
