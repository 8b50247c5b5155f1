// Observation: what Kubernetes (from the informer caches) and etcd (from a quorum) say about a cluster.
// Each member is asked at its pod IP, so the operator works in the cluster and from a developer's machine.
import type { KubeObject } from '@quorum/runtime';
import { EtcdClient } from '../etcd/client.ts';
import { memberFromPeerURL, LABELS } from './names.ts';
import type { Membership, ObservedMember, ObservedPod } from './plan.ts';

export interface PodObject extends KubeObject {
  spec?: { nodeName?: string };
  status?: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string; lastTransitionTime?: string }[];
    containerStatuses?: { name: string; ready: boolean; restartCount: number; state?: { waiting?: { reason?: string }; running?: { startedAt?: string } }; lastState?: { terminated?: { finishedAt?: string; exitCode?: number } } }[];
  };
}

export interface MemberHealth {
  member: string;
  id: string;
  healthy: boolean;
  learner: boolean;
  leaderId?: string;
  version?: string;
  dbSize?: number;
  revision?: string;
  error?: string;
}

export function observePod(pod: PodObject, now: number, previousCrashSince?: number): ObservedPod {
  const status = pod.status?.containerStatuses?.find((c) => c.name === 'etcd');
  // Restarted more than once and still not ready: the kubelet's own restarts are not fixing it.
  const crashLooping = !status?.ready && (status?.restartCount ?? 0) >= 2 && (status?.state?.waiting?.reason === 'CrashLoopBackOff' || status?.state?.waiting !== undefined);
  return {
    member: pod.metadata.labels?.[LABELS.member] ?? pod.metadata.name ?? '',
    phase: pod.status?.phase ?? 'Pending',
    ready: pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    deleting: pod.metadata.deletionTimestamp !== undefined,
    ...(crashLooping ? { crashLoopingSince: previousCrashSince ?? now } : {}),
  };
}

/** One client per endpoint, reused across reconciles (keep-alive connections). */
export class EtcdClients {
  readonly #clients = new Map<string, EtcdClient>();
  get(endpoint: string): EtcdClient {
    let c = this.#clients.get(endpoint);
    if (!c) this.#clients.set(endpoint, (c = new EtcdClient({ endpoint, timeoutMs: 3000 })));
    return c;
  }
}

export interface EtcdView {
  membership: Membership | undefined;
  health: MemberHealth[];
  clusterId?: string;
  /** Endpoint of a member that answered: where membership calls go. */
  endpoint?: string;
  leaderEndpoint?: string;
}

/**
 * Asks the running members for the member list with a linearizable read (answered only through a quorum),
 * then each member for its own status. No answer means "unknown", never "gone".
 */
export async function observeEtcd(cluster: string, namespace: string, pods: PodObject[], clients: EtcdClients, signal: AbortSignal): Promise<EtcdView> {
  const endpoints = pods
    .filter((p) => p.status?.podIP && p.status.phase === 'Running' && !p.metadata.deletionTimestamp)
    .sort((a, b) => Number(isReady(b)) - Number(isReady(a)))
    .map((p) => ({ member: p.metadata.labels?.[LABELS.member] ?? '', endpoint: `http://${p.status!.podIP}:2379` }));
  let list: { id: string; name: string; peerURLs: string[]; isLearner: boolean }[] | undefined;
  let answered: string | undefined;
  for (const { endpoint } of endpoints) {
    try {
      list = await clients.get(endpoint).memberList({ linearizable: true, signal });
      answered = endpoint;
      break;
    } catch {
      /* try the next member: one that cannot reach a quorum cannot answer */
    }
  }
  if (!list) return { membership: undefined, health: [] };

  const byMember = new Map(endpoints.map((e) => [e.member, e.endpoint]));
  const health = await Promise.all(
    list.map(async (m): Promise<MemberHealth> => {
      const member = m.peerURLs.map((u) => memberFromPeerURL(cluster, namespace, u)).find(Boolean) ?? m.name;
      const endpoint = byMember.get(member);
      if (!endpoint || !m.name) return { member, id: m.id, healthy: false, learner: m.isLearner };
      try {
        const s = await clients.get(endpoint).status({ signal });
        return { member, id: m.id, healthy: s.errors.length === 0 && s.leaderId !== '0' && s.leaderId !== '', learner: s.isLearner, leaderId: s.leaderId, version: s.version, dbSize: s.dbSize, revision: s.revision };
      } catch (err) {
        return { member, id: m.id, healthy: false, learner: m.isLearner, error: (err as Error).message };
      }
    }),
  );
  const leaderId = mostCommon(health.map((h) => h.leaderId).filter((l): l is string => !!l && l !== '0'));
  const members: ObservedMember[] = list.map((m, i) => ({ id: m.id, member: health[i]!.member, started: m.name !== '', learner: m.isLearner, healthy: health[i]!.healthy }));
  const leaderMember = health.find((h) => h.id === leaderId)?.member;
  let clusterId: string | undefined;
  try {
    clusterId = (await clients.get(answered!).status({ signal })).clusterId;
  } catch {
    /* reported next time */
  }
  return {
    membership: { members, leaderId },
    health,
    clusterId,
    endpoint: answered,
    leaderEndpoint: leaderMember ? byMember.get(leaderMember) : undefined,
  };
}

function isReady(p: PodObject): boolean {
  return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

function mostCommon(values: string[]): string | undefined {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
}
