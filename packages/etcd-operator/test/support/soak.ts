// The soak of issue 7, shared by its integration test and the etcd bench: N three-member EtcdClusters
// bootstrapped at once in one namespace, then `rounds` times all of them scaled 3 → 5 and back to 3 at once.
// Every phase has a bound; a cluster that misses it is named with its Progressing message. Afterwards it
// gathers what the operator and etcd said along the way: the StepStalled / StepRetrying events on the
// clusters, and every `peer became inactive` line the members logged (etcd-io/etcd#14523's first symptom).
import { Events, Pods, type KubeObject } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import type { EtcdCluster } from '../../src/api/etcdcluster.ts';
import { LABELS } from '../../src/names.ts';
import { EtcdClusters } from '../../src/resources.ts';
import { applyCluster, PLAINTEXT } from '../integration/support.ts';

export interface SoakOptions {
  clusters: number;
  rounds: number;
  log?: (message: string) => void;
  /** Bound of each phase (every cluster converging); default 10 minutes. */
  phaseTimeoutMs?: number;
  /** Spec fields for every cluster besides replicas (e.g. antiAffinity). */
  spec?: Record<string, unknown>;
}

/** Warning events of one reason on one cluster, with how often each occurred (series counts included). */
export interface SoakEvent {
  cluster: string;
  reason: string;
  note: string;
  count: number;
}

export interface SoakResult {
  namespace: string;
  clusters: string[];
  /** Per cluster: apply → Available with 3 members. */
  bootstrapSeconds: number[];
  /** Per cluster and round: patch to 5 → Available with 5 members. */
  scale35Seconds: number[];
  /** Per cluster and round: patch to 3 → Available with 3 members. */
  scale53Seconds: number[];
  /** StepStalled occurrences on the clusters (a step with no progress for longer than the operator's bound). */
  stalledSteps: number;
  /** StepRetrying occurrences (a step retried for 30 s). */
  retryingSteps: number;
  /** Every Warning event on the clusters, StepStalled and StepRetrying included. */
  warnings: SoakEvent[];
  /** Steps seen in status with `stalled: true` while polling: a second witness besides the events. */
  stalledObserved: string[];
  /** The longest-lived step seen in any status while polling (the operator's clock, from step.startedAt). */
  longestStep: { cluster: string; name: string; seconds: number; lastError?: string } | undefined;
  /** Whether every scale-down's MemberRemoved event was found, i.e. the event list is complete up to the end. */
  eventsComplete: boolean;
  /** `peer became inactive` lines over all member pods' etcd logs, removed pods included (read before removal). */
  peerInactiveEvents: number;
  peerInactiveByCluster: Record<string, number>;
  /** Member pods whose logs were read. */
  podsLogged: number;
}

const DEFAULT_PHASE_TIMEOUT_MS = 10 * 60_000;
const POLL_MS = 500;
const PEER_INACTIVE = 'peer became inactive';

/** The same test as waitAvailable(): Available, exactly `replicas` members, all voting and ready, and the current generation observed. */
export function converged(c: EtcdCluster, replicas: number): boolean {
  const members = c.status?.members ?? [];
  const available = c.status?.conditions?.some((x) => x.type === 'Available' && x.status === 'True') ?? false;
  return available && members.length === replicas && members.every((m) => m.ready && !m.learner) && c.status?.observedGeneration === c.metadata.generation;
}

/** Nearest-rank percentile (p in 0..1) of a non-empty sample; NaN for an empty one. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

type PodLike = KubeObject & { status?: { containerStatuses?: { name: string; restartCount?: number }[] } };
type EventLike = KubeObject & { type?: string; reason?: string; note?: string; regarding?: { kind?: string; name?: string }; series?: { count?: number } };

export async function runSoak(env: TestEnv, options: SoakOptions): Promise<SoakResult> {
  const log = options.log ?? (() => undefined);
  const timeoutMs = options.phaseTimeoutMs ?? DEFAULT_PHASE_TIMEOUT_MS;
  const client = env.client;
  const ns = await env.namespace('soak');
  const names = Array.from({ length: options.clusters }, (_, i) => `s${i}`);
  const stalledObserved = new Set<string>();
  let longestStep: SoakResult['longestStep'];
  // Keyed by pod uid: a later read of the same container's log supersedes an earlier one (logs only grow).
  const inactiveByPod = new Map<string, { cluster: string; count: number }>();

  /**
   * Waits until every cluster has converged to `replicas`, timing each from its own start. One list per
   * poll rather than a get per cluster, so that watching twelve clusters does not itself load the API server.
   */
  const converge = async (what: string, replicas: number, started: Map<string, number>): Promise<number[]> => {
    const done = new Map<string, number>();
    const t0 = performance.now();
    let latest = new Map<string, EtcdCluster>();
    let lastError: unknown;
    let lastReport = t0;
    for (;;) {
      try {
        const items = (await client.list(EtcdClusters, { namespace: ns })).items;
        const now = performance.now();
        latest = new Map(items.map((c) => [c.metadata.name ?? '', c]));
        for (const name of names) {
          const c = latest.get(name);
          if (!c) continue;
          const step = c.status?.step;
          if (step) {
            if (step.stalled) stalledObserved.add(`${name}: ${step.name} (${step.lastError ?? 'no error recorded'})`);
            const age = (Date.now() - Date.parse(step.startedAt)) / 1000;
            if (age > (longestStep?.seconds ?? 0)) longestStep = { cluster: name, name: step.name, seconds: Math.round(age), ...(step.lastError ? { lastError: step.lastError } : {}) };
          }
          if (!done.has(name) && converged(c, replicas)) done.set(name, (now - started.get(name)!) / 1000);
        }
      } catch (err) {
        // A list refused or timed out under load is retried until the phase's bound.
        lastError = err;
      }
      if (done.size === names.length) {
        log(`${what}: all ${names.length} converged in ${Math.round((performance.now() - t0) / 1000)} s`);
        return names.map((n) => done.get(n)!);
      }
      const elapsed = performance.now() - t0;
      if (elapsed > timeoutMs) {
        const pending = names.filter((n) => !done.has(n)).map((n) => `${n} (${describe(latest.get(n), replicas)})`);
        throw new Error(`soak ${what}: ${pending.length}/${names.length} clusters did not converge within ${timeoutMs / 1000} s: ${pending.join('; ')}${lastError ? ` [last list error: ${(lastError as Error).message}]` : ''}`);
      }
      if (performance.now() - lastReport >= 30_000) {
        lastReport = performance.now();
        log(`${what}: ${done.size}/${names.length} converged after ${Math.round(elapsed / 1000)} s; waiting for ${names.filter((n) => !done.has(n)).join(', ')}`);
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  };

  /** Applies `replicas` to every cluster at once; each cluster's clock starts just before its own write. */
  const setReplicas = async (replicas: number, create: boolean): Promise<Map<string, number>> => {
    const started = new Map<string, number>();
    await Promise.all(names.map(async (name) => {
      started.set(name, performance.now());
      if (create) await applyCluster(client, ns, name, { ...PLAINTEXT, ...options.spec, replicas });
      else await client.mergePatch(EtcdClusters, { namespace: ns, name }, { spec: { replicas } });
    }));
    return started;
  };

  /** Reads every member pod's etcd log (and the previous container's, after a restart) and counts the stale-peer symptom. */
  const readLogs = async (): Promise<void> => {
    const pods = (await client.list(Pods, { namespace: ns, labelSelector: `${LABELS.name}=etcd` })).items as unknown as PodLike[];
    const queue = [...pods];
    // A few kubectl processes at a time: the machine is busy running the clusters being measured.
    await Promise.all(Array.from({ length: 4 }, async () => {
      for (let pod = queue.shift(); pod; pod = queue.shift()) {
        const name = pod.metadata.name!;
        const restarts = pod.status?.containerStatuses?.find((s) => s.name === 'etcd')?.restartCount ?? 0;
        const read = (previous: boolean): Promise<string> =>
          env.kube.kubectl(['logs', '-n', ns, name, '-c', 'etcd', ...(previous ? ['--previous'] : [])]).catch(() => '');
        const text = (await read(false)) + (restarts > 0 ? await read(true) : '');
        const count = text.split('\n').filter((l) => l.includes(PEER_INACTIVE)).length;
        inactiveByPod.set(pod.metadata.uid ?? name, { cluster: pod.metadata.labels?.[LABELS.instance] ?? '?', count });
      }
    }));
  };

  log(`bootstrapping ${names.length} clusters of 3 in ${ns}`);
  const bootstrapSeconds = await converge('bootstrap → 3', 3, await setReplicas(3, true));
  const scale35Seconds: number[] = [];
  const scale53Seconds: number[] = [];
  for (let round = 1; round <= options.rounds; round++) {
    log(`round ${round}/${options.rounds}: 3 → 5`);
    scale35Seconds.push(...(await converge(`round ${round} 3 → 5`, 5, await setReplicas(5, false))));
    // The members about to be removed take their logs with them: read everything now.
    await readLogs();
    log(`round ${round}/${options.rounds}: 5 → 3`);
    scale53Seconds.push(...(await converge(`round ${round} 5 → 3`, 3, await setReplicas(3, false))));
  }
  await readLogs();

  // The recorder writes events in the background. Each scale-down recorded two MemberRemoved events per
  // cluster as it happened, at the end of each phase: once they are all listed, any StepStalled or
  // StepRetrying recorded before them has had its chance to be written too.
  const expectedRemovals = 2 * options.rounds;
  let events: EventLike[] = [];
  const removals = (name: string): number => events.filter((e) => e.regarding?.name === name && e.reason === 'MemberRemoved').reduce((s, e) => s + (e.series?.count ?? 1), 0);
  const eventsDeadline = Date.now() + 60_000;
  let eventsComplete = false;
  for (;;) {
    try {
      events = ((await client.list(Events, { namespace: ns })).items as unknown as EventLike[]).filter((e) => e.regarding?.kind === 'EtcdCluster');
    } catch (err) {
      // Retried like the phases' lists; past the deadline the failure is the answer.
      if (Date.now() > eventsDeadline) throw err;
    }
    eventsComplete = names.every((n) => removals(n) >= expectedRemovals);
    if (eventsComplete || Date.now() > eventsDeadline) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  if (!eventsComplete) log(`events: expected ${expectedRemovals} MemberRemoved per cluster within 60 s; short: ${names.filter((n) => removals(n) < expectedRemovals).join(', ')}`);
  const warnings: SoakEvent[] = events
    .filter((e) => e.type === 'Warning')
    .map((e) => ({ cluster: e.regarding?.name ?? '?', reason: e.reason ?? '?', note: e.note ?? '', count: e.series?.count ?? 1 }));
  const occurrences = (reason: string): number => warnings.filter((w) => w.reason === reason).reduce((s, w) => s + w.count, 0);

  const peerInactiveByCluster: Record<string, number> = {};
  for (const { cluster, count } of inactiveByPod.values()) peerInactiveByCluster[cluster] = (peerInactiveByCluster[cluster] ?? 0) + count;

  return {
    namespace: ns,
    clusters: names,
    bootstrapSeconds,
    scale35Seconds,
    scale53Seconds,
    stalledSteps: occurrences('StepStalled'),
    retryingSteps: occurrences('StepRetrying'),
    warnings,
    stalledObserved: [...stalledObserved],
    longestStep,
    eventsComplete,
    peerInactiveEvents: Object.values(peerInactiveByCluster).reduce((s, n) => s + n, 0),
    peerInactiveByCluster,
    podsLogged: inactiveByPod.size,
  };
}

/** What a cluster that missed its bound was doing: Progressing and Degraded messages, the step, the members. */
function describe(c: EtcdCluster | undefined, replicas: number): string {
  if (!c) return 'not listed';
  const cond = (type: string): string | undefined => {
    const x = c.status?.conditions?.find((k) => k.type === type);
    return x ? `${type}=${x.status} ${x.reason ?? ''}: ${x.message ?? ''}` : undefined;
  };
  const members = c.status?.members ?? [];
  const step = c.status?.step;
  return [
    cond('Progressing') ?? 'no Progressing condition',
    cond('Degraded'),
    step ? `step ${step.name} since ${step.startedAt}${step.lastError ? ` (${step.lastError})` : ''}` : undefined,
    `${members.filter((m) => m.ready && !m.learner).length}/${replicas} voting members ready of ${members.length} listed`,
    `observedGeneration ${c.status?.observedGeneration ?? '-'} of ${c.metadata.generation ?? '-'}`,
  ].filter(Boolean).join('; ');
}
