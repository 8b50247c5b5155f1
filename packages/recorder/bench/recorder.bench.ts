// The change recorder's figures on localkube (issue 11), `npm run bench -- recorder`. The recorder runs in a
// child process (recorder-child.ts, as main.ts builds it, with its Lease), recording one namespace of
// QUORUM_RECORDER_OBJECTS ConfigMaps (default 10,000, 1 KiB each, like runtime.cache's) into a local directory.
// Each of QUORUM_BENCH_RUNS runs (default 5) updates every ConfigMap once, QUORUM_RECORDER_CONCURRENCY (default
// 64) updates in flight, as fast as the API server accepts them, after a warm-up of 1,000 updates that is not
// counted; then the record of each update is looked for on disk by its name (`…-<the replaced resourceVersion>.yaml`).
// Every figure is the median over the runs.
//
//   recorder.changes_per_s            updates / (the last record's file written − the first update sent):
//                                     the rate sustained with every change recorded. A run in which a record
//                                     is missing (none within 10 minutes) is counted in changes_missed.
//   recorder.floor_updates_per_s      the floor: updates / (the last update accepted − the first sent), the
//                                     rate the API server took them at in the same run; the recorder cannot
//                                     record faster than changes are made.
//   recorder.changes_ratio            median of the per-run ratios changes_per_s / floor_updates_per_s.
//   recorder.changes_missed           updates without a record, summed over the runs (must be 0).
//   recorder.lag_p99_ms, lag_p50_ms   from an update sent to its record's file written (its mtime; the file is
//                                     renamed into place after, the directory flushed), the 99th and 50th
//                                     percentiles over the run's updates. Measured from the request, not its
//                                     response: a watch event can arrive before the response does.
//   recorder.heap_bytes_per_object    after each run, the recorder's heap after a full GC, minus its heap before
//                                     any ChangeRecorder existed (leader, idle), / the objects it watches
//                                     (status.objects). To compare with runtime.cache.heap_bytes_per_object.
//   recorder.cache_floor_heap_bytes_per_object  the floor, after each run: the runtime's own cache measurement
//                                     (packages/runtime/bench/cache-memory-child.ts, which runtime.cache.heap_bytes_per_object
//                                     reports) over the same namespace, in a fresh process.
//   recorder.heap_ratio_to_cache      median of the per-run ratios heap_bytes_per_object / its floor: what the
//                                     recorder keeps per object beyond the informer's cache (issue 11: stay within
//                                     the runtime.cache figures).
//   recorder.idle.requests_per_min    API requests that are not watches, per minute, over QUORUM_RECORDER_IDLE_WINDOWS
//                                     windows (default 5) of 60 s with nothing changing (goal: 0 beyond watches).
//   recorder.idle.lease_requests_per_min  the part of them that renews the leader's Lease.
//   recorder.idle.watch_opens_per_min     watches opened (a watch the API server ends is opened again).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigMaps, CustomResourceDefinitions, type Client } from '@quorum/runtime';
import { eventually, TestEnv } from '@quorum/localkube/testing';
import { API_VERSION, KIND } from '../src/api/changerecorder.ts';
import { changeRecorderCRD } from '../src/api/crd.ts';
import { ChangeRecorders } from '../src/resources.ts';
import { kindFolder } from '../src/store/layout.ts';
import type { ChildReply, ChildRequest } from './recorder-child.ts';

const report = (bench: string, value: number, unit: string): void => void process.stdout.write(JSON.stringify({ bench, value: Math.round(value * 1000) / 1000, unit }) + '\n');
const progress = (msg: string): void => void process.stderr.write(`[recorder bench] ${msg}\n`);
const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
/** Nearest-rank percentile. */
const percentile = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};

const OBJECTS = Number(process.env['QUORUM_RECORDER_OBJECTS'] ?? 10_000);
const RUNS = Number(process.env['QUORUM_BENCH_RUNS'] ?? 5);
const CONCURRENCY = Number(process.env['QUORUM_RECORDER_CONCURRENCY'] ?? 64);
const IDLE_WINDOWS = Number(process.env['QUORUM_RECORDER_IDLE_WINDOWS'] ?? 5);
const WARM_UP = Math.min(1000, OBJECTS);
const RECORD_TIMEOUT_MS = 600_000;
if (RUNS < 5) progress(`QUORUM_BENCH_RUNS=${RUNS}: medians are reported over at least 5 runs; these figures are not comparable`);

const cmName = (i: number): string => `cm-${String(i).padStart(5, '0')}`;

/** The recorder process, and its answers over IPC, in order. */
class Child {
  readonly #proc: ChildProcess;
  readonly #waiting: { resolve: (reply: ChildReply) => void; reject: (err: Error) => void }[] = [];
  readonly ready: Promise<number>;

  constructor(env: NodeJS.ProcessEnv) {
    this.#proc = spawn(process.execPath, ['--expose-gc', join(import.meta.dirname, 'recorder-child.ts')], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.#proc.on('message', (reply: ChildReply) => this.#waiting.shift()?.resolve(reply));
    this.#proc.once('exit', (code) => {
      for (const w of this.#waiting.splice(0)) w.reject(new Error(`the recorder process exited (${code})`));
    });
    this.ready = this.#next('ready').then((r) => r.heapUsed);
  }

  #next<T extends ChildReply['type']>(type: T): Promise<Extract<ChildReply, { type: T }>> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({
        resolve: (reply) => (reply.type === type ? resolve(reply as Extract<ChildReply, { type: T }>) : reject(new Error(`expected ${type} from the recorder process, got ${reply.type}`))),
        reject,
      });
    });
  }

  ask<T extends ChildReply['type']>(request: ChildRequest, type: T): Promise<Extract<ChildReply, { type: T }>> {
    const reply = this.#next(type);
    this.#proc.send(request);
    return reply;
  }
}

/** The runtime's cache measurement over `namespace` (what runtime.cache.heap_bytes_per_object reports): heap bytes per cached object. */
async function cacheFloor(kubeconfig: string, namespace: string): Promise<number> {
  const proc = spawn(process.execPath, ['--expose-gc', join(import.meta.dirname, '..', '..', 'runtime', 'bench', 'cache-memory-child.ts')], {
    env: { ...process.env, KUBECONFIG: kubeconfig, NAMESPACE: namespace },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  proc.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
  if (code !== 0) throw new Error(`the cache measurement exited ${code}`);
  const mem = JSON.parse(out) as { objects: number; heapBytes: number };
  return mem.heapBytes / mem.objects;
}

/** Runs `work(i)` for i in [0, count) with `concurrency` in flight. */
async function pool(count: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, async () => {
    for (let i = next++; i < count; i = next++) await work(i);
  }));
}

interface Pass {
  sentAt: number[];
  replaced: string[];
  firstSent: number;
  lastAccepted: number;
}

/** Updates ConfigMaps [0, count) once each: data.v = value. resourceVersions[i] is the version each replaces, and becomes the new one. */
async function updatePass(client: Client, ns: string, count: number, value: string, resourceVersions: string[]): Promise<Pass> {
  const sentAt: number[] = new Array<number>(count);
  const replaced = resourceVersions.slice(0, count);
  let lastAccepted = 0;
  const firstSent = Date.now();
  await pool(count, CONCURRENCY, async (i) => {
    sentAt[i] = Date.now();
    const updated = await client.mergePatch(ConfigMaps, { namespace: ns, name: cmName(i) }, { data: { v: value } }, { fieldManager: 'recorder-bench' });
    resourceVersions[i] = updated.metadata.resourceVersion!;
    lastAccepted = Math.max(lastAccepted, Date.now());
  });
  return { sentAt, replaced, firstSent, lastAccepted };
}

/** Waits for the record of each update (`*-<replaced>.yaml` in its object's folder); the write time of each, or undefined if missing. */
async function recordTimes(folder: string, pass: Pass): Promise<(number | undefined)[]> {
  const times: (number | undefined)[] = new Array<number | undefined>(pass.replaced.length);
  let pending = pass.replaced.map((_, i) => i);
  const deadline = Date.now() + RECORD_TIMEOUT_MS;
  while (pending.length > 0 && Date.now() < deadline) {
    const still: number[] = [];
    await pool(pending.length, 64, async (k) => {
      const i = pending[k]!;
      const dir = join(folder, cmName(i));
      const file = (await readdir(dir).catch(() => [] as string[])).find((f) => f.endsWith(`-${pass.replaced[i]}.yaml`));
      if (file) times[i] = (await stat(join(dir, file))).mtimeMs;
      else still.push(i);
    });
    pending = still;
    // Each record's own write time counts, not when it is found: polling less often costs the recorder less CPU.
    if (pending.length > 0) await new Promise((r) => setTimeout(r, 1000));
  }
  return times;
}

const env = await TestEnv.start({ nodes: 1 });
const storageRoot = await mkdtemp(join(tmpdir(), 'recorder-bench-'));
const recorderName = `bench-${Date.now().toString(36)}`;
let child: Child | undefined;
let failed = false;
try {
  const crd = changeRecorderCRD();
  await env.client.apply(CustomResourceDefinitions, crd, { fieldManager: 'recorder-bench', force: true });
  await eventually('the ChangeRecorder CRD established', async () => {
    const got = (await env.client.get(CustomResourceDefinitions, crd.metadata.name)) as { status?: { conditions?: { type: string; status: string }[] } };
    return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  });
  const ns = await env.namespace('bench-recorder');
  progress(`creating ${OBJECTS} ConfigMaps of 1 KiB in ${ns}`);
  const resourceVersions: string[] = new Array<string>(OBJECTS);
  await pool(OBJECTS, CONCURRENCY, async (i) => {
    const created = await env.client.create(ConfigMaps, { metadata: { name: cmName(i), namespace: ns }, data: { payload: 'x'.repeat(1024), v: '0' } });
    resourceVersions[i] = created.metadata.resourceVersion!;
  });

  child = new Child({ ...process.env, KUBECONFIG: env.kubeconfig, STORAGE_ROOT: storageRoot, LEASE_NAMESPACE: ns });
  const baseline = await child.ready;
  progress(`recorder started (heap ${(baseline / 1024 / 1024).toFixed(1)} MiB); recording ${ns}`);
  await env.client.create(ChangeRecorders, {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: recorderName },
    spec: { namespaces: { names: [ns] }, resources: [{ group: '', kind: 'ConfigMap' }], retention: { maxVersionsPerObject: RUNS + 2 } },
  }, { fieldValidation: 'Strict' });
  const t0 = performance.now();
  const objects = await eventually('the ChangeRecorder Ready, every ConfigMap listed', async () => {
    const r = await env.client.get(ChangeRecorders, recorderName);
    const ready = r.status?.conditions?.find((c) => c.type === 'Ready');
    return ready?.status === 'True' && (r.status?.objects ?? 0) >= OBJECTS ? r.status!.objects! : undefined;
  }, { timeoutMs: RECORD_TIMEOUT_MS, intervalMs: 1000 });
  progress(`Ready over ${objects} objects after ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const folder = join(storageRoot, recorderName, ns, kindFolder('', 'ConfigMap'));

  progress(`warm-up: ${WARM_UP} updates (not counted)`);
  const warm = await updatePass(env.client, ns, WARM_UP, 'warm-up', resourceVersions);
  const warmMissing = (await recordTimes(folder, warm)).filter((t) => t === undefined).length;
  if (warmMissing > 0) throw new Error(`warm-up: ${warmMissing} of ${WARM_UP} updates have no record after ${RECORD_TIMEOUT_MS / 1000} s`);

  const rates: number[] = [];
  const floors: number[] = [];
  const ratios: number[] = [];
  const p99s: number[] = [];
  const p50s: number[] = [];
  const heaps: number[] = [];
  const cacheFloors: number[] = [];
  const heapRatios: number[] = [];
  let missed = 0;
  for (let run = 0; run < RUNS; run++) {
    const pass = await updatePass(env.client, ns, OBJECTS, `run-${run}`, resourceVersions);
    const times = await recordTimes(folder, pass);
    const missing = times.filter((t) => t === undefined).length;
    missed += missing;
    const written = times.filter((t): t is number => t !== undefined);
    const lags = times.flatMap((t, i) => (t === undefined ? [] : [Math.max(0, t - pass.sentAt[i]!)]));
    const rate = OBJECTS / ((Math.max(...written) - pass.firstSent) / 1000);
    const floor = OBJECTS / ((pass.lastAccepted - pass.firstSent) / 1000);
    const heap = ((await child.ask({ type: 'heap' }, 'heap')).heapUsed - baseline) / objects;
    const floorHeap = await cacheFloor(env.kubeconfig, ns);
    progress(`run ${run + 1}/${RUNS}: ${rate.toFixed(0)} changes/s recorded, updates accepted at ${floor.toFixed(0)}/s, lag p50 ${percentile(lags, 50).toFixed(0)} ms p99 ${percentile(lags, 99).toFixed(0)} ms, heap ${heap.toFixed(0)} B/object (the cache alone ${floorHeap.toFixed(0)})${missing ? `, ${missing} MISSED` : ''}`);
    if (missing === 0) {
      rates.push(rate);
      floors.push(floor);
      ratios.push(rate / floor);
    }
    p99s.push(percentile(lags, 99));
    p50s.push(percentile(lags, 50));
    heaps.push(heap);
    cacheFloors.push(floorHeap);
    heapRatios.push(heap / floorHeap);
  }
  if (rates.length > 0) {
    report('recorder.changes_per_s', median(rates), 'changes/s');
    report('recorder.floor_updates_per_s', median(floors), 'updates/s');
    report('recorder.changes_ratio', median(ratios), 'ratio');
  }
  report('recorder.changes_missed', missed, 'changes');
  report('recorder.lag_p99_ms', median(p99s), 'ms');
  report('recorder.lag_p50_ms', median(p50s), 'ms');
  report('recorder.heap_bytes_per_object', median(heaps), 'bytes');
  report('recorder.cache_floor_heap_bytes_per_object', median(cacheFloors), 'bytes');
  report('recorder.heap_ratio_to_cache', median(heapRatios), 'ratio');
  if (missed > 0) {
    progress(`${missed} update(s) left no record: changes_per_s is reported only over runs with none missed`);
    failed = true;
  }

  // Idle: nothing changes. Status refreshes end within STATUS_REFRESH_MS of the last record; let them.
  await new Promise((r) => setTimeout(r, 10_000));
  const other: number[] = [];
  const lease: number[] = [];
  const watches: number[] = [];
  for (let w = 0; w < IDLE_WINDOWS; w++) {
    const before = await child.ask({ type: 'requests' }, 'requests');
    await new Promise((r) => setTimeout(r, 60_000));
    const after = await child.ask({ type: 'requests' }, 'requests');
    other.push(after.other + after.lease - before.other - before.lease);
    lease.push(after.lease - before.lease);
    watches.push(after.watches - before.watches);
    progress(`idle minute ${w + 1}/${IDLE_WINDOWS}: ${after.other - before.other} requests besides the Lease's ${after.lease - before.lease}, ${after.watches - before.watches} watch(es) opened`);
  }
  report('recorder.idle.requests_per_min', median(other), 'requests/min');
  report('recorder.idle.lease_requests_per_min', median(lease), 'requests/min');
  report('recorder.idle.watch_opens_per_min', median(watches), 'watches/min');
} catch (err) {
  progress(`failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
  failed = true;
} finally {
  await child?.ask({ type: 'stop' }, 'stopped').catch(() => undefined);
  await env.client.delete(ChangeRecorders, recorderName).catch(() => undefined);
  await env.stop();
  await rm(storageRoot, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
