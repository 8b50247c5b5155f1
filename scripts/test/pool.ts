// Runs jobs in a bounded number of slots, each when its locks allow (schedule.ts decides), printing each
// file's whole output when it ends and, every minute, which files are running and for how long.
import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { inPriorityOrder, nextJob, type Job, type RunningJob } from './schedule.ts';
import { runFile, type FileRun } from './run-file.ts';

export interface PoolJob extends Job {
  timeoutMs: number;
}

export interface PoolOptions {
  root: string;
  reports: string;
  slots: number;
  env: NodeJS.ProcessEnv;
  /** Runs after a file ends and before its locks are free again (puts back what a lock holder changed). */
  afterFile?: (job: PoolJob, run: FileRun) => Promise<void>;
  log: (line: string) => void;
}

export interface PoolResult extends FileRun {
  /** What went wrong around the file (it never started, or putting back what it held failed); one more failure. */
  problem?: string;
}

function mark(run: PoolResult): string {
  return run.failed > 0 || run.problem ? '✖' : '✔';
}

export function describeRun(root: string, run: PoolResult): string {
  const counts = [`${run.passed} passed`, ...(run.failed ? [`${run.failed} failed`] : []), ...(run.environmentSkips.length ? [`${run.environmentSkips.length} skipped for the environment`] : [])];
  const why = run.timedOut ? ', TIMED OUT' : !run.complete ? `, ended without its report (exit ${run.exitCode})` : '';
  return `${mark(run)} ${relative(root, run.file)} in ${run.seconds.toFixed(1)} s (${counts.join(', ')}${why})`;
}

export async function runPool(jobs: readonly PoolJob[], options: PoolOptions): Promise<PoolResult[]> {
  const waiting = inPriorityOrder(jobs);
  const running = new Map<PoolJob, { started: number; done: Promise<PoolResult> }>();
  const results: PoolResult[] = [];
  const heartbeat = setInterval(() => {
    const now = performance.now();
    const list = [...running].map(([job, r]) => `${relative(options.root, job.file)} (${Math.round((now - r.started) / 1000)} s)`);
    if (list.length > 0) options.log(`running: ${list.join(', ')}; ${waiting.length} waiting`);
  }, 60_000);
  try {
    while (waiting.length > 0 || running.size > 0) {
      for (let job = nextJob(waiting, runningNow(running), options.slots); job; job = nextJob(waiting, runningNow(running), options.slots)) {
        waiting.splice(waiting.indexOf(job), 1);
        running.set(job, { started: performance.now(), done: start(job, options) });
      }
      if (running.size === 0) {
        // Nothing runs and nothing may start: cannot happen with slots ≥ 1, but no file is ever dropped unseen.
        for (const job of waiting.splice(0)) results.push(neverStarted(job, options.slots));
        break;
      }
      const [job, result] = await Promise.race([...running].map(([j, r]) => r.done.then((res) => [j, res] as const)));
      running.delete(job);
      results.push(result);
    }
  } finally {
    clearInterval(heartbeat);
  }
  return results;
}

/** The running files with the time each is still expected to take, for backfilling (schedule.ts). */
function runningNow(running: ReadonlyMap<PoolJob, { started: number }>): RunningJob[] {
  const now = performance.now();
  return [...running].map(([job, r]) => ({ ...job, remainingMs: Math.max(0, r.started + job.expectedMs - now) }));
}

function neverStarted(job: PoolJob, slots: number): PoolResult {
  return { file: job.file, seconds: 0, timedOut: false, exitCode: null, log: '', passed: 0, failed: 0, environmentSkips: [], unexplainedSkips: [], complete: false, problem: `never started (${slots} slots)` };
}

async function start(job: PoolJob, options: PoolOptions): Promise<PoolResult> {
  const run: PoolResult = await runFile(job.file, { root: options.root, reports: options.reports, timeoutMs: job.timeoutMs, env: options.env }).catch(
    (err: Error): PoolResult => ({ ...neverStarted(job, options.slots), problem: `the harness could not run it: ${err.message}` }),
  );
  const output = await readFile(run.log, 'utf8').catch(() => '');
  options.log(`── ${relative(options.root, job.file)} ──\n${output.trimEnd()}\n${describeRun(options.root, run)}`);
  if (options.afterFile) {
    try {
      await options.afterFile(job, run);
    } catch (err) {
      run.problem = `putting back what it held: ${(err as Error).message}`;
      options.log(`✖ after ${relative(options.root, job.file)}: ${run.problem}`);
    }
  }
  return run;
}
