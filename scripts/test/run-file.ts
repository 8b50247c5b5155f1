// Runs one test file in its own node:test process, bounded by its timeout. Its output goes to a log file
// (files run side by side, so their lines are printed whole when each ends), its TAP report to another.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { countTap, type FileCounts } from './tap.ts';

export interface FileRun extends FileCounts {
  file: string;
  seconds: number;
  timedOut: boolean;
  exitCode: number | null;
  log: string;
}

export interface RunFileOptions {
  root: string;
  reports: string;
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
  /** Grace between SIGTERM and SIGKILL once the timeout passed. */
  killGraceMs?: number;
}

/** A report name unique per file: the path inside the repository with slashes made dashes. */
export function reportName(root: string, file: string): string {
  return relative(root, file).replace(/\.test\.ts$|\.ts$/, '').replace(/[^a-zA-Z0-9.-]+/g, '-');
}

/** A node:test process started from inside a test (the harness's own tests) would otherwise refuse to run files. */
function withoutTestContext(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _, ...rest } = env;
  return rest;
}

/** The files' processes under way, so that a harness that is itself stopped stops them too (each has its own group). */
const running = new Set<ChildProcess>();

/** Stops every file's process group (the harness got SIGINT or SIGTERM). */
export function stopAllFiles(signal: NodeJS.Signals = 'SIGTERM'): void {
  for (const child of running) {
    try {
      if (child.pid) process.kill(-child.pid, signal);
    } catch {
      // Already gone.
    }
  }
}

export async function runFile(file: string, options: RunFileOptions): Promise<FileRun> {
  const name = reportName(options.root, file);
  const tap = join(options.reports, 'tap', `${name}.tap`);
  const log = join(options.reports, 'logs', `${name}.log`);
  await mkdir(dirname(tap), { recursive: true });
  await mkdir(dirname(log), { recursive: true });
  const out = createWriteStream(log);
  const t0 = performance.now();
  // Its own process group, so that a timeout stops the file and everything it started.
  const child = spawn(process.execPath, ['--test', '--test-reporter=spec', '--test-reporter-destination=stdout', '--test-reporter=tap', `--test-reporter-destination=${tap}`, file], {
    cwd: options.root,
    env: withoutTestContext(options.env ?? process.env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout.pipe(out, { end: false });
  child.stderr.pipe(out, { end: false });
  let timedOut = false;
  const kill = (signal: NodeJS.Signals): void => {
    try {
      if (child.pid) process.kill(-child.pid, signal);
    } catch {
      // Already gone.
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    out.write(`\n[test harness] ${basename(file)} passed its timeout of ${Math.round(options.timeoutMs / 1000)} s: stopped\n`);
    kill('SIGTERM');
    setTimeout(() => kill('SIGKILL'), options.killGraceMs ?? 10_000).unref();
  }, options.timeoutMs);
  running.add(child);
  out.on('error', () => undefined); // a log that cannot be written loses lines, not the file's verdict
  const exitCode = await new Promise<number | null>((resolve) => {
    child.on('error', (err) => {
      out.write(`\n[test harness] could not run ${basename(file)}: ${err.message}\n`);
      resolve(null);
    });
    // A process the file left behind in its group would hold the output open: once the file's own process
    // has exited, whatever is left of the group goes too.
    child.on('exit', () => setTimeout(() => kill('SIGKILL'), 2000).unref());
    child.on('close', (code) => resolve(code));
  });
  running.delete(child);
  clearTimeout(timer);
  await new Promise<void>((resolve) => out.end(resolve));
  const counts = countTap(await readFile(tap, 'utf8').catch(() => ''));
  // A file that ends abnormally with no failure in its report (a crash outside any test, a timeout, no
  // report at all) fails once by name, so that no file's trouble is lost.
  const abnormal = timedOut || !counts.complete || (exitCode !== 0 && counts.failed === 0);
  const failed = counts.failed + (abnormal ? 1 : 0);
  return { ...counts, failed, file, seconds: (performance.now() - t0) / 1000, timedOut, exitCode, log };
}
