// The chaos run: K EtcdClusters under the data checker's writes, a seeded sequence of faults, and after each
// fault a bounded wait for every cluster to converge again (Available, members as in spec, no step under way
// or stalled, a write accepted). At the end every acknowledged write is read back from one consistent read
// (one revision) per cluster. Each fault is appended to a JSON-lines log as it ends, from which `--replay`
// runs the same sequence again.
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Events, PersistentVolumeClaims, Pods, Secrets, Services, type KubeObject } from '@quorum/runtime';
import { eventually, type TestEnv } from '@quorum/localkube/testing';
import { EtcdClient, type EtcdTls } from '../src/etcd/client.ts';
import { EtcdClusters } from '../src/resources.ts';
import { LABELS, clusterSelector, memberHost } from '../src/names.ts';
import { clientTLSSecretName } from '../src/tls/secrets.ts';
import { DataChecker } from '../src/testing/data-checker.ts';
import type { EtcdCluster } from '../src/api/etcdcluster.ts';
import { inject, type ChaosContext, type Injected } from './faults.ts';
import type { FaultDraw } from './sequence.ts';

export interface ChaosOptions {
  seed: number;
  draws: FaultDraw[];
  clusters: number;
  /** The two etcd versions a version change moves between; clusters start on the first. */
  versions: readonly [string, string];
  /** Each fault's bound: the clusters must converge within it, counted from when healing could begin. */
  convergeTimeoutMs: number;
  /** The replay log (JSON lines), appended as the run goes. */
  logFile: string;
  log: (message: string) => void;
}

export interface FaultRecord {
  fault: FaultDraw;
  target: string;
  detail?: string;
  converged: boolean;
  /** Seconds from when healing could begin until every cluster converged. */
  convergeSeconds?: number;
  /** Why it did not converge, or what failed while injecting. */
  error?: string;
}

export interface ChaosResult {
  namespace: string;
  records: FaultRecord[];
  acknowledged: number;
  lost: number;
  corrupted: number;
  /** Steps seen stalled in a status, plus StepStalled events. */
  stalls: number;
  stalledSeen: string[];
}

const MiB = 1024 * 1024;
const POLL_MS = 1000;

/** Every cluster's spec at the start: TLS on both sides (so certificates can be rotated) and a small quota (so NOSPACE is reachable). */
function clusterSpec(version: string): Record<string, unknown> {
  return { replicas: 3, version, tls: { peer: {}, client: {} }, etcd: { quotaBackendBytes: 96 * MiB } };
}

export async function runChaos(env: TestEnv, options: ChaosOptions): Promise<ChaosResult> {
  const { client, kube } = env;
  const log = options.log;
  const namespace = await env.namespace('chaos');
  const names = Array.from({ length: options.clusters }, (_, i) => `c${i}`);
  const backupClaim = 'chaos-backups';
  await mkdir(dirname(options.logFile), { recursive: true });
  await appendFile(options.logFile, JSON.stringify({ run: { seed: options.seed, faults: options.draws.length, clusters: options.clusters, versions: options.versions, namespace, startedAt: new Date().toISOString() } }) + '\n');

  await client.create(PersistentVolumeClaims, {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: backupClaim, namespace },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } },
  });
  log(`creating ${names.length} clusters of 3 (etcd ${options.versions[0]}, TLS, quota 96 MiB) in ${namespace}`);
  for (const name of names) {
    await client.apply(EtcdClusters, { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name, namespace }, spec: clusterSpec(options.versions[0]) }, { fieldManager: 'quorum-chaos', force: true });
  }
  // Each cluster's client Service and client certificate, read once its TLS Secrets exist (first convergence).
  const identities = new Map<string, { endpoint: string; tls: EtcdTls }>();
  const loadIdentities = async (): Promise<void> => {
    for (const name of names) {
      if (identities.has(name)) continue;
      const svc = (await client.get(Services, { namespace, name: `${name}-client` })) as unknown as { spec: { clusterIP: string } };
      const secret = await client.get(Secrets, { namespace, name: clientTLSSecretName(name) });
      const data = (k: string): string => Buffer.from(secret.data?.[k] ?? '', 'base64').toString('utf8');
      identities.set(name, { endpoint: `https://${svc.spec.clusterIP}:2379`, tls: { ca: data('ca.crt'), cert: data('tls.crt'), key: data('tls.key'), servername: `${name}-client.${namespace}.svc` } });
    }
  };
  const etcd = (name: string): EtcdClient => {
    const id = identities.get(name)!;
    return new EtcdClient({ endpoint: id.endpoint, tls: id.tls, timeoutMs: 10_000 });
  };
  const stalledSeen = new Set<string>();
  const initial = await converge(undefined, performance.now(), 15 * 60_000);
  if (initial.error) throw new Error(`the clusters did not become Available: ${initial.error}`);

  // An application's client: it retries a failed write 3 times before giving up (the write then counts as
  // unacknowledged, and is not expected). The checker keeps the cluster's first client certificate, which
  // stays valid across leaf rotations (same CA).
  const checkers = new Map(names.map((name) => {
    const id = identities.get(name)!;
    return [name, new DataChecker({ endpoints: [id.endpoint], tls: id.tls, ratePerSecond: 4, retries: 3, timeoutMs: 5000 })];
  }));
  for (const c of checkers.values()) c.start();
  await eventually('the data checkers writing', () => [...checkers.values()].every((c) => c.stats().acknowledged >= 5), { timeoutMs: 120_000 });

  const ctx: ChaosContext = { kube, client, namespace, clusters: names, versions: options.versions, backupClaim, seed: options.seed, etcd, log };
  const records: FaultRecord[] = [];
  for (const draw of options.draws) {
    const where = draw.kind === 'stop-node' || draw.kind === 'cut-node-network' || draw.kind === 'kill-operator-pod' || draw.kind === 'restart-apiserver' || draw.kind === 'dns-outage' ? 'localkube' : names[draw.cluster];
    log(`fault ${draw.index}/${options.draws.length}: ${draw.kind} (${where})`);
    let injected: Injected | undefined;
    let injectError: string | undefined;
    const t0 = performance.now();
    try {
      injected = await inject(ctx, draw);
    } catch (err) {
      injectError = `injecting: ${(err as Error).message}`;
    }
    const outcome = await converge(injected?.done, injected?.healFrom ?? t0, options.convergeTimeoutMs);
    const record: FaultRecord = {
      fault: draw,
      target: injected?.target ?? where ?? '?',
      ...(injected?.detail ? { detail: injected.detail } : {}),
      converged: !injectError && !outcome.error,
      ...(outcome.error ? {} : { convergeSeconds: Math.round(outcome.seconds * 10) / 10 }),
      ...(injectError || outcome.error ? { error: [injectError, outcome.error].filter(Boolean).join('; ') } : {}),
    };
    records.push(record);
    await appendFile(options.logFile, JSON.stringify(record) + '\n');
    log(`  ${record.target}${record.detail ? ` (${record.detail})` : ''}: ${record.converged ? `converged in ${record.convergeSeconds} s` : `NOT converged: ${record.error}`}; checker ${[...checkers.values()].map((c) => c.stats().acknowledged).join('/')} acknowledged`);
    // A cluster that did not converge makes every later fault wait out its bound too, and the run has
    // failed already: stop injecting, and still read every acknowledged write back.
    if (!record.converged) {
      log(`stopping after fault ${draw.index}: it did not converge (replay: --replay ${options.logFile}, or --seed ${options.seed} --faults ${draw.index})`);
      break;
    }
  }

  log('stopping the writers and reading every acknowledged write back');
  let acknowledged = 0;
  let lost = 0;
  let corrupted = 0;
  for (const [name, checker] of checkers) {
    await checker.stop();
    const report = await checker.verify({ timeoutMs: 180_000 });
    log(`  ${name}: ${report.acknowledged} acknowledged, ${report.unacknowledged} unacknowledged, lost ${report.lost.length}, corrupted ${report.corrupted.length}`);
    acknowledged += report.acknowledged;
    lost += report.lost.length;
    corrupted += report.corrupted.length;
    await checker.close();
  }
  const stalledEvents = ((await client.list(Events, { namespace })).items as (KubeObject & { reason?: string; series?: { count?: number }; note?: string; regarding?: { name?: string } })[])
    .filter((e) => e.reason === 'StepStalled');
  for (const e of stalledEvents) stalledSeen.add(`${e.regarding?.name}: event StepStalled: ${e.note}`);
  const stalls = stalledEvents.reduce((n, e) => n + (e.series?.count ?? 1), 0) + [...stalledSeen].filter((s) => !s.includes('event StepStalled')).length;
  await appendFile(options.logFile, JSON.stringify({ end: { acknowledged, lost, corrupted, stalls } }) + '\n');
  return { namespace, records, acknowledged, lost, corrupted, stalls, stalledSeen: [...stalledSeen] };

  /**
   * Polls until every cluster has converged and `done` (the fault's own condition) holds, or `timeoutMs`
   * passes: seconds since `from`, or the reason it did not.
   */
  async function converge(done: (() => Promise<string | undefined>) | undefined, from: number, timeoutMs: number): Promise<{ seconds: number; error?: string }> {
    let why = 'not checked yet';
    let reported = performance.now();
    for (;;) {
      try {
        why = (await notConverged()) ?? (done ? await done() : undefined) ?? '';
        if (!why) return { seconds: (performance.now() - from) / 1000 };
      } catch (err) {
        // The API server restarting, a list timing out: retried until the bound.
        why = `reading state: ${(err as Error).message}`;
      }
      if (performance.now() - from > timeoutMs) return { seconds: (performance.now() - from) / 1000, error: `not converged within ${timeoutMs / 1000} s: ${why}` };
      // A slow fault says what it is waiting for as it waits, not only once it misses its bound.
      if (performance.now() - reported >= 30_000) {
        reported = performance.now();
        log(`  waiting ${Math.round((reported - from) / 1000)} s: ${why}`);
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  /** Why some cluster has not converged, or undefined. Also records any step seen stalled. */
  async function notConverged(): Promise<string | undefined> {
    const items = new Map((await client.list(EtcdClusters, { namespace })).items.map((c) => [c.metadata.name!, c]));
    const reasons: string[] = [];
    for (const name of names) {
      const c = items.get(name);
      if (!c) {
        reasons.push(`${name} missing`);
        continue;
      }
      const step = c.status?.step;
      if (step?.stalled) stalledSeen.add(`${name}: ${step.name} stalled since ${step.startedAt}: ${step.lastError ?? 'no error recorded'}`);
      const why = clusterNotConverged(c);
      if (why) reasons.push(`${name}: ${why}`);
    }
    if (reasons.length > 0) return reasons.join('; ');
    // The status says so; etcd must agree. The status may not have noticed a fault yet (a node back from an
    // outage), so each member is asked directly: its /health over TLS at its pod's address. Then a write
    // through each client Service must be accepted.
    await loadIdentities();
    for (const name of names) {
      const pods = ((await client.list(Pods, { namespace, labelSelector: clusterSelector(name) })).items as (KubeObject & { status?: { podIP?: string } })[])
        .filter((p) => p.metadata.labels?.[LABELS.member] && !p.metadata.deletionTimestamp);
      for (const member of items.get(name)!.status!.members!) {
        const ip = pods.find((p) => p.metadata.name === member.name)?.status?.podIP;
        if (!ip) return `${name}: ${member.name} has no pod address`;
        const id = identities.get(name)!;
        const direct = new EtcdClient({ endpoint: `https://${ip}:2379`, tls: { ...id.tls, servername: memberHost(name, namespace, member.name) }, timeoutMs: 5000 });
        try {
          if (!(await direct.health())) return `${name}: ${member.name} answers /health false`;
        } catch (err) {
          return `${name}: ${member.name}'s /health: ${(err as Error).message}`;
        } finally {
          direct.close();
        }
      }
    }
    for (const name of names) {
      const e = etcd(name);
      try {
        await e.put('/chaos/probe', new Date().toISOString(), { timeoutMs: 5000 });
      } catch (err) {
        return `${name}: a write through its client Service failed: ${(err as Error).message}`;
      } finally {
        e.close();
      }
    }
    return undefined;
  }
}

/** Why one cluster is not converged (Available, as many ready voting members as spec.replicas, the spec observed, nothing under way, not Degraded), or undefined. */
export function clusterNotConverged(c: EtcdCluster): string | undefined {
  const s = c.status;
  const want = c.spec.replicas ?? 3;
  const condition = (type: string): { status: string; reason?: string; message?: string } | undefined => s?.conditions?.find((x) => x.type === type);
  const members = s?.members ?? [];
  const ready = members.filter((m) => m.ready && !m.learner).length;
  if (!s || s.observedGeneration !== c.metadata.generation) return `generation ${c.metadata.generation} not yet observed (${s?.observedGeneration ?? 'no status'})`;
  if (condition('Available')?.status !== 'True') return `not Available (${condition('Available')?.reason ?? 'no condition'})`;
  if (members.length !== want || ready !== want) return `${ready} ready voting members of ${members.length}, spec ${want}`;
  if (s.step) return `step ${s.step.name} under way since ${s.step.startedAt}${s.step.lastError ? ` (${s.step.lastError})` : ''}`;
  if (s.rollout) return 'a rollout under way';
  const degraded = condition('Degraded');
  if (degraded?.status === 'True') return `Degraded ${degraded.reason}: ${degraded.message}`;
  return undefined;
}
