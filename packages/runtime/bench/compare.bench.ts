// The runtime side by side with controller-runtime (issue 24), `npm run bench -- runtime` (or `-- compare`): the
// same tiny controller (a no-op reconcile of one namespace's ConfigMaps, 4 workers) written with @quorum/runtime
// (compare-child.ts) and with controller-runtime (tools/controller-runtime-compare, built from the module proxy),
// against one localkube. The Node side runs as the operator images ship it: the runtime's built JavaScript with
// plain node and --max-semi-space-size=1 (OPERATOR_NODE_FLAGS in @quorum/kit/image). Beside it, for what each
// choice costs or saves: `_v8_default` the same without the flag, `_ts_sources` from the TypeScript sources
// with V8's defaults (as the monorepo runs, and the images did before issue 24), `_malloc_arena_2` the shipped
// side with MALLOC_ARENA_MAX=2 (glibc's malloc arenas capped: fewer per-thread arenas left holding freed
// memory); QUORUM_COMPARE_SIDES picks some of them. Each of QUORUM_BENCH_RUNS runs (default 5) starts every
// side in turn, the order rotated run to run, twice:
//   - over 10,000 ConfigMaps of 1 KiB: everything reconciled, then RSS and heap after a full GC;
//   - over 1,000 ConfigMaps: manager start → all reconciled; then a burst of 3,000 updates (every ConfigMap three
//     times, 64 in flight) and the time from the first update event to every touched key reconciled since.
// Figures are medians over the runs; a ratio is the median of the per-run ratios quorum / controller-runtime
// (≤ 1 is better for memory and time, ≥ 1 for events/s). V8 lets the young generation grow to 16 MiB per
// semi-space while a sync allocates and keeps those pages committed after it (heapTotal far above heapUsed):
// that one flag decides much of a controller's RSS, hence `_v8_default`.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { stripTypeScriptTypes } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { ConfigMaps, Namespaces, type KubeObject } from '../src/index.ts';
import { controllerRuntimeCompareBinary } from '@quorum/localkube';
import { TestEnv } from '@quorum/localkube/testing';
import type { CompareLine } from './compare-child.ts';

const RUNS = Number(process.env['QUORUM_BENCH_RUNS'] ?? 5);
const BIG = 10_000;
const SMALL = 1_000;
const BURST_ROUNDS = 3;
const CHILD_TIMEOUT_MS = 180_000;
const MiB = 1024 * 1024;

const report = (bench: string, value: number, unit: string): void =>
  void process.stdout.write(JSON.stringify({ bench, value: Math.round(value * 1000) / 1000, unit }) + '\n');
const progress = (msg: string): void => void process.stderr.write(`[runtime compare] ${msg}\n`);
const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

type Side = 'quorum' | 'quorum_v8_default' | 'quorum_ts_sources' | 'quorum_malloc_arena_2' | 'controller_runtime';
/** The Node sides and the suffix of their figures. */
const NODE_SIDES: [Side, string][] = [
  ['quorum', ''],
  ['quorum_v8_default', '_v8_default'],
  ['quorum_ts_sources', '_ts_sources'],
  ['quorum_malloc_arena_2', '_malloc_arena_2'],
];
/**
 * QUORUM_COMPARE_SIDES: which Node sides run beside controller-runtime, by name (`quorum,quorum_v8_default`);
 * default all. The shipped side (`quorum`), which the rss_ratio goal is about, always runs.
 */
const chosenSides = process.env['QUORUM_COMPARE_SIDES']?.split(',').map((s) => s.trim());
const nodeSides = NODE_SIDES.filter(([side]) => side === 'quorum' || !chosenSides || chosenSides.includes(side));
/** The node flags of the operator images (OPERATOR_NODE_FLAGS in @quorum/kit/image, which the runtime does not import). */
const SHIPPED_NODE_FLAGS = ['--max-semi-space-size=1'];
interface Launch {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}
interface RunFigures {
  rssBytes: number;
  heapBytes: number;
  startupS: number;
  processStartupS: number;
  eventsPerS: number;
  cpuUsPerEvent: number;
  writesPerS: number;
}

const root = join(import.meta.dirname, '..');
const repo = join(root, '..', '..');

/**
 * The runtime built as it ships (tsconfig.build.json, into a temp dir rather than the package's dist/, which
 * `npm pack` rebuilds under other processes), and the child stripped of its types beside it. The temp dir's
 * node_modules is the workspace's, where the runtime's dependencies are hoisted.
 */
async function buildJavaScriptSide(work: string): Promise<Launch> {
  progress('building @quorum/runtime as it ships (tsconfig.build.json)');
  const outDir = join(work, 'runtime');
  await symlink(join(repo, 'node_modules'), join(work, 'node_modules'));
  const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
  const code = await exitCode(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', outDir, '--declaration', 'false', '--declarationMap', 'false']);
  // tsc emits despite type errors: work in progress elsewhere in the tree must not stop the measurement.
  if (code !== 0) progress(`tsc exited ${code}; measuring the JavaScript it emitted anyway`);
  const child = join(work, 'compare-child.mjs');
  await writeFile(child, stripTypeScriptTypes(await readFile(join(import.meta.dirname, 'compare-child.ts'), 'utf8')));
  // Plain node: no type stripping, no source condition (scripts/node24 puts it in NODE_OPTIONS).
  const nodeOptions = (process.env['NODE_OPTIONS'] ?? '').replace('--conditions=@quorum/source', '').trim();
  return { command: process.execPath, args: ['--expose-gc', child], env: { NODE_OPTIONS: nodeOptions, RUNTIME_ENTRY: pathToFileURL(join(outDir, 'index.js')).href } };
}

async function exitCode(command: string, args: string[]): Promise<number | null> {
  return new Promise((resolve) => spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'] }).on('exit', resolve));
}

async function createMany(env: TestEnv, ns: string, count: number, data: Record<string, string>): Promise<void> {
  for (let i = 0; i < count; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) => env.client.create(ConfigMaps, { metadata: { name: `cm-${i + j}`, namespace: ns }, data })));
  }
}

/** Every ConfigMap of `ns` updated `rounds` times, 64 in flight; returns the updates per second the API server took. */
async function burst(env: TestEnv, ns: string, rounds: number, tag: string): Promise<number> {
  const keys = Array.from({ length: rounds * SMALL }, (_, i) => ({ name: `cm-${i % SMALL}`, value: `${tag}-${Math.floor(i / SMALL)}` }));
  const t0 = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < keys.length) {
      const { name, value } = keys[next++]!;
      await env.client.mergePatch<KubeObject>(ConfigMaps, { namespace: ns, name }, { data: { k: value } });
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
  return keys.length / ((performance.now() - t0) / 1000);
}

/** Starts one side's child; `onLine` sees every line; resolves when it exits 0. */
async function runChild(launch: Launch, kubeconfig: string, vars: Record<string, string>, onLine: (line: CompareLine) => void): Promise<void> {
  const child = spawn(launch.command, launch.args, { env: { ...process.env, ...launch.env, KUBECONFIG: kubeconfig, ...vars }, stdio: ['ignore', 'pipe', 'inherit'] });
  const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT_MS);
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (l) => onLine(JSON.parse(l) as CompareLine));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`${launch.command} ${launch.args.join(' ')} exited ${code} (NAMESPACE=${vars['NAMESPACE']})`);
}

async function measureSide(env: TestEnv, launch: Launch, namespaces: { big: string; small: string }, tag: string): Promise<RunFigures> {
  let memory: { rssBytes: number; heapBytes: number } | undefined;
  await runChild(launch, env.kubeconfig, { NAMESPACE: namespaces.big, EXPECT: String(BIG), BURST: '0' }, (l) => {
    if (l.event === 'memory') memory = l;
  });
  let startup: { startupS: number; processStartupS: number } | undefined;
  let burstLine: Extract<CompareLine, { event: 'burst' }> | undefined;
  let writing: Promise<number> | undefined;
  const spawned = performance.now();
  await runChild(launch, env.kubeconfig, { NAMESPACE: namespaces.small, EXPECT: String(SMALL), BURST: String(BURST_ROUNDS * SMALL) }, (l) => {
    if (l.event === 'reconciled') startup = { startupS: l.sinceStartS, processStartupS: (performance.now() - spawned) / 1000 };
    if (l.event === 'memory') writing = burst(env, namespaces.small, BURST_ROUNDS, tag);
    if (l.event === 'burst') burstLine = l;
  });
  const writesPerS = await writing;
  if (!memory || !startup || !burstLine || writesPerS === undefined) throw new Error(`${launch.command}: a child ended without all its figures`);
  return {
    ...memory,
    ...startup,
    eventsPerS: burstLine.updates / burstLine.seconds,
    cpuUsPerEvent: (burstLine.cpuSeconds * 1e6) / burstLine.updates,
    writesPerS,
  };
}

function reportAll(results: Record<Side, RunFigures[]>): void {
  const figures: [keyof RunFigures, string, string, (v: number) => number][] = [
    ['rssBytes', 'rss_mib', 'MiB', (v) => v / MiB],
    ['heapBytes', 'heap_mib', 'MiB', (v) => v / MiB],
    ['startupS', 'startup_s', 's', (v) => v],
    ['processStartupS', 'process_startup_s', 's', (v) => v],
    ['eventsPerS', 'burst_events_per_s', 'events/s', (v) => v],
    ['cpuUsPerEvent', 'burst_cpu_us_per_event', 'µs', (v) => v],
  ];
  for (const [key, name, unit, scale] of figures) {
    report(`runtime.compare.controller_runtime_${name}`, median(results.controller_runtime.map((r) => scale(r[key]))), unit);
    for (const [side, suffix] of nodeSides) report(`runtime.compare.quorum_${name}${suffix}`, median(results[side].map((r) => scale(r[key]))), unit);
  }
  const ratio = (side: Side, key: keyof RunFigures): number => median(results[side].map((r, i) => r[key] / results.controller_runtime[i]![key]));
  const ratios: [keyof RunFigures, string][] = [
    ['rssBytes', 'rss_ratio'],
    ['heapBytes', 'heap_ratio'],
    ['startupS', 'startup_ratio'],
    ['processStartupS', 'process_startup_ratio'],
    ['eventsPerS', 'burst_events_per_s_ratio'],
    ['cpuUsPerEvent', 'burst_cpu_ratio'],
  ];
  for (const [key, name] of ratios) {
    for (const [side, suffix] of nodeSides) report(`runtime.compare.${name}${suffix}`, ratio(side, key), 'ratio');
  }
  const writes = Object.values(results).flatMap((runs) => runs.map((r) => r.writesPerS));
  report('runtime.compare.burst_api_writes_per_s', median(writes), 'writes/s');
}

const work = await mkdtemp(join(tmpdir(), 'quorum-compare-'));
const env = await TestEnv.start({ nodes: 1 });
try {
  const javaScript = await buildJavaScriptSide(work);
  const shipped = { ...javaScript, args: [...SHIPPED_NODE_FLAGS, ...javaScript.args] };
  const launches: Record<Side, Launch> = {
    quorum: shipped,
    quorum_v8_default: javaScript,
    quorum_malloc_arena_2: { ...shipped, env: { ...shipped.env, MALLOC_ARENA_MAX: '2' } },
    quorum_ts_sources: {
      command: process.execPath,
      args: ['--expose-gc', join(import.meta.dirname, 'compare-child.ts')],
      env: { RUNTIME_ENTRY: pathToFileURL(join(root, 'src', 'index.ts')).href },
    },
    controller_runtime: { command: await controllerRuntimeCompareBinary(), args: [], env: {} },
  };
  const namespaces = { big: await env.namespace('compare-big'), small: await env.namespace('compare-small') };
  progress(`creating ${BIG} ConfigMaps of 1 KiB and ${SMALL} small ones`);
  await createMany(env, namespaces.big, BIG, { payload: 'x'.repeat(1024) });
  await createMany(env, namespaces.small, SMALL, { k: 'v' });
  const order: Side[] = ['controller_runtime', ...(['quorum', 'quorum_v8_default', 'quorum_ts_sources', 'quorum_malloc_arena_2'] as const).filter((side) => nodeSides.some(([s]) => s === side))];
  const results: Record<Side, RunFigures[]> = { quorum: [], quorum_v8_default: [], quorum_ts_sources: [], quorum_malloc_arena_2: [], controller_runtime: [] };
  for (let run = 0; run < RUNS; run++) {
    for (let i = 0; i < order.length; i++) {
      const side = order[(run + i) % order.length]!;
      const figures = await measureSide(env, launches[side], namespaces, `${run}-${side}`);
      results[side].push(figures);
      progress(`run ${run + 1}/${RUNS} ${side}: RSS ${(figures.rssBytes / MiB).toFixed(1)} MiB, heap ${(figures.heapBytes / MiB).toFixed(1)} MiB, start → reconciled ${figures.startupS.toFixed(3)} s (process ${figures.processStartupS.toFixed(3)} s), burst ${figures.eventsPerS.toFixed(0)} events/s at ${figures.cpuUsPerEvent.toFixed(0)} µs CPU each (API took ${figures.writesPerS.toFixed(0)} writes/s)`);
    }
  }
  reportAll(results);
  await Promise.all(Object.values(namespaces).map((ns) => env.client.delete(Namespaces, ns).catch(() => undefined)));
} finally {
  await env.stop();
  await rm(work, { recursive: true, force: true });
}
