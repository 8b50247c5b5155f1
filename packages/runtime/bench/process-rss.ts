// An operator's whole process, started against a kubeconfig for the operators' RSS benches
// (etcd-operator/bench/operator-rss.bench.ts, recorder/bench/recorder-rss.bench.ts), as its container runs it
// (the bench gives the image's node arguments and environment, its files unpacked here by @quorum/kit/image):
// ready when its /readyz answers 200; its RSS read from /proc/<pid>/status, as the kernel (and a pod's memory
// accounting) sees it, with no GC forced.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { eventually, TestEnv } from '@quorum/localkube/testing';

export const MiB = 1024 * 1024;

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** A TCP port free right now, for a probe server the process is told to listen on. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || !address) throw new Error('no port');
  return address.port;
}

export async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (!kb) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kb) * 1024;
}

/** After `settleMs`, the median of `samples` RSS readings of `pid` one second apart. */
export async function idleRss(pid: number, settleMs = 20_000, samples = 10): Promise<number> {
  await new Promise((r) => setTimeout(r, settleMs));
  const readings: number[] = [];
  for (let i = 0; i < samples; i++) {
    readings.push(await rssBytes(pid));
    await new Promise((r) => setTimeout(r, 1000));
  }
  return median(readings);
}

/**
 * The processes of this machine whose command line has `argument` among its arguments: a container's process,
 * which localkube's nodes run as processes of this machine (their PID namespaces are nested in ours).
 */
export async function pidsWithArgument(argument: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.split('\0').includes(argument)) pids.push(Number(name));
  }
  return pids;
}

/** How a process is started: node's arguments (flags, then the script) and the environment it adds. */
export interface NodeCommand {
  args: string[];
  env: Record<string, string>;
}

/**
 * QUORUM_RSS_FROM=sources: the operator from its TypeScript sources, stripped at start, as the images ran it
 * before issue 24 (for a before/after on the same machine); otherwise the bench runs what its image runs.
 */
export const fromSources = process.env['QUORUM_RSS_FROM'] === 'sources';

/** `node main.ts` with the repository's condition, which resolves the workspace packages to their sources. */
export function sourcesCommand(main: string): NodeCommand {
  return { args: [main], env: { NODE_OPTIONS: '--conditions=@quorum/source' } };
}

export class OperatorProcess {
  readonly #proc: ChildProcess;
  readonly #exited: Promise<number | null>;
  #stderrTail = '';

  private constructor(proc: ChildProcess) {
    this.#proc = proc;
    this.#exited = new Promise((resolve) => proc.on('exit', resolve));
    proc.stderr?.setEncoding('utf8').on('data', (d: string) => (this.#stderrTail = (this.#stderrTail + d).slice(-4000)));
  }

  /**
   * Starts `node ...args` and waits for /readyz. NODE_OPTIONS is what `env` says, or none: not the repository's
   * (which resolves the workspace packages to their sources), so that a process runs as its image runs it.
   */
  static async start(args: readonly string[], env: NodeJS.ProcessEnv, probePort: number, timeoutMs = 120_000): Promise<OperatorProcess> {
    const script = args.at(-1) ?? '';
    const childEnv = { ...process.env, NODE_OPTIONS: '', ...env, PROBE_PORT: String(probePort) };
    const proc = new OperatorProcess(spawn(process.execPath, args, { env: childEnv, stdio: ['ignore', 'ignore', 'pipe'] }));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (proc.#proc.exitCode !== null) throw new Error(`${script} exited ${proc.#proc.exitCode} before it was ready:\n${proc.#stderrTail}`);
      const ok = await fetch(`http://127.0.0.1:${probePort}/readyz`).then((r) => r.ok, () => false);
      if (ok) return proc;
      if (Date.now() > deadline) {
        await proc.stop();
        throw new Error(`${script} not ready within ${timeoutMs / 1000} s:\n${proc.#stderrTail}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** After `settleMs`, the median of `samples` RSS readings one second apart. */
  idleRss(settleMs = 20_000, samples = 10): Promise<number> {
    return idleRss(this.#proc.pid!, settleMs, samples);
  }

  async stop(): Promise<void> {
    if (this.#proc.exitCode !== null) return;
    this.#proc.kill('SIGTERM');
    const timer = setTimeout(() => this.#proc.kill('SIGKILL'), 15_000);
    await this.#exited;
    clearTimeout(timer);
  }
}

/** An operator installed from its manifests, as users run it, for its pod's RSS (the `_in_cluster` figures). */
export interface InstalledOperator {
  /** The script of its container's command (`/app/packages/<operator>/dist/operator/main.js`), which names its process on the node. */
  podMain: string;
  /** Installs it (its image already loaded into the cluster) and waits until it is ready. */
  install(): Promise<void>;
  uninstall(): Promise<void>;
}

/**
 * Installs the operator, waits for `reached` (what it must have done first), reads its pod's process idle RSS
 * (idleRss), then removes it and waits until the process is gone. One pod: a second process running its script
 * is an error (localkube's containers are processes of this machine, their PID namespaces nested in ours).
 */
export async function installedPodRss(operator: InstalledOperator, reached: () => Promise<unknown> = () => Promise.resolve()): Promise<number> {
  await operator.install();
  try {
    await reached();
    const [pid, ...more] = await eventually("the operator pod's process", async () => {
      const pids = await pidsWithArgument(operator.podMain);
      return pids.length > 0 ? pids : undefined;
    });
    if (more.length > 0) throw new Error(`more than one process runs ${operator.podMain}: ${[pid, ...more].join(', ')}`);
    return await idleRss(pid!);
  } finally {
    await operator.uninstall();
    await eventually("the operator pod's process gone", async () => (await pidsWithArgument(operator.podMain)).length === 0, { timeoutMs: 120_000 });
  }
}

/** The median, in MiB, of `runs` values of `once` (bytes), each told to `progress` as it comes. */
export async function medianOfRuns(runs: number, label: string, progress: (message: string) => void, once: () => Promise<number>): Promise<number> {
  const values: number[] = [];
  for (let i = 0; i < runs; i++) {
    values.push(await once());
    progress(`${label}, run ${i + 1}/${runs}: ${(values.at(-1)! / MiB).toFixed(1)} MiB`);
  }
  return median(values) / MiB;
}

/** QUORUM_RSS_OUT_OF_CLUSTER=false: only the installed pods are measured (the figures users compare), not the processes started here. */
export const outOfCluster = process.env['QUORUM_RSS_OUT_OF_CLUSTER'] !== 'false';

/**
 * A bench of one figure, `<figure>` in MiB: the operator's image built and loaded into a fresh localkube, then
 * the median of QUORUM_BENCH_RUNS (default 3) installs' idle pod RSS (installedPodRss), each in `namespace`.
 */
export async function installedIdleRssBench(options: {
  figure: string;
  namespace: string;
  build: () => Promise<{ name: string; archive: string }>;
  operator: (env: TestEnv, image: string, namespace: string) => InstalledOperator;
}): Promise<void> {
  const runs = Number(process.env['QUORUM_BENCH_RUNS'] ?? 3);
  const progress = (msg: string): void => void process.stderr.write(`[${options.figure}] ${msg}\n`);
  progress('building the image');
  const built = await options.build();
  const env = await TestEnv.start({ nodes: 1 });
  try {
    await env.kube.loadImage(built.archive);
    const operator = options.operator(env, built.name, await env.namespace(options.namespace));
    const mib = await medianOfRuns(runs, 'idle, in cluster', progress, () => installedPodRss(operator));
    process.stdout.write(JSON.stringify({ bench: options.figure, value: Math.round(mib * 1000) / 1000, unit: 'MiB' }) + '\n');
  } finally {
    await env.stop();
  }
}
