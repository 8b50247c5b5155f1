// What each member says: its pod (from the informer cache) and its etcd (asked at its pod IP, so the operator works
// in the cluster and from a developer's machine), and the member list as a quorum reports it. observe.ts builds the
// whole Observed from these.
import type { Pod } from '@quorum/runtime';
import { alarmsInStatus, type Alarm } from '../etcd/client.ts';
import type { EtcdClients } from '../etcd/clients.ts';
import { activePeers } from '../etcd/metrics.ts';
import { memberFromPeerURL, LABELS, METRICS_PORT } from '../names.ts';
import { quorum } from '../etcd/quorum.ts';
import type { Membership, ObservedMember, ObservedPod } from './plan/types.ts';
import { FORCE_NEW_CLUSTER_ANNOTATION, RESTORE_CONTAINERS } from './resources.ts';
import { clientEndpoint, schemeOf, type ClientCredentials } from '../tls/members.ts';

/** A member's pod as the informer's cache holds it (the runtime's Pod: client-node's model, timestamps as strings). */
export type PodObject = Pod;

export interface MemberHealth {
  member: string;
  id: string;
  healthy: boolean;
  learner: boolean;
  leaderId?: string;
  version?: string;
  dbSize?: number;
  dbSizeInUse?: number;
  /** The cluster's alarms as this member's status names them. */
  alarms?: Alarm[];
  revision?: string;
  clusterId?: string;
  error?: string;
}

/**
 * Whether etcd's last words say that it started on an empty data directory, or a raft log short of what it had
 * acknowledged. For a member that had started before (the cluster knows its name), its data is gone for good:
 * - "member … has already been bootstrapped": started with `--initial-cluster-state new` (an initial member's
 *   pod) on an empty directory, and its peers answered that it had started before;
 * - "error validating peerURLs …": an empty directory, and its pod's --initial-cluster no longer matches the
 *   membership (the pod was made while the membership was another one);
 * - "tocommit(N) is out of range [lastIndex(M)]" (raft's panic): etcd accepted the empty directory, but its
 *   leader still counts it as having acknowledged entries up to N.
 * etcd may also accept an empty directory and be sent a snapshot by its leader: the member then serves again
 * as itself, and nothing here fires (docs/reliability.md, attempt 9).
 */
export function etcdSaysDataLost(lastWords: string): boolean {
  // The kubelet keeps the last 2 KiB of the log: the panic's line may be cut off by its goroutine trace, whose
  // raftLog.commitTo frame names the same panic.
  return /has already been bootstrapped|error validating peerURLs|tocommit\(\d+\) is out of range \[lastIndex\(\d+\)\]|\(\*raftLog\)\.commitTo\(/.test(lastWords);
}

export function observePod(pod: PodObject, now: number, previousCrashSince?: number, peerWaitImage?: string): ObservedPod {
  const status = pod.status?.containerStatuses?.find((c) => c.name === 'etcd');
  // Restarted more than once and still not ready: the kubelet's own restarts are not fixing it.
  const crashLooping = !status?.ready && (status?.restartCount ?? 0) >= 2 && (status?.state?.waiting?.reason === 'CrashLoopBackOff' || status?.state?.waiting !== undefined);
  // The kubelet keeps etcd's last lines as the termination message (FallbackToLogsOnError); an init
  // container that fails (peer names that never resolve) explains itself the same way.
  const init = pod.status?.initContainerStatuses?.find((c) => !c.ready && (c.lastState?.terminated ?? c.state?.terminated)?.exitCode);
  const terminated = (init ? (init.state?.terminated ?? init.lastState?.terminated) : undefined) ?? status?.state?.terminated ?? status?.lastState?.terminated;
  const stuck = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].find((c) => CANNOT_START.has(c.state?.waiting?.reason ?? ''));
  const waitImage = pod.spec?.initContainers?.find((c) => c.name === 'peer-wait')?.image;
  const etcdNeverRan = !status?.state?.running && !status?.state?.terminated && !status?.lastState?.terminated && (status?.restartCount ?? 0) === 0;
  const initOutdated = !!peerWaitImage && !!waitImage && waitImage !== peerWaitImage && etcdNeverRan;
  // deletionTimestamp is when the graceful deletion should be over (request time + grace period): a pod
  // still there after it is one the kubelet has not confirmed gone; that is the moment "stuck" counts from.
  const deletion = pod.metadata.deletionTimestamp ? Date.parse(pod.metadata.deletionTimestamp) : undefined;
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
  const readySince = ready?.lastTransitionTime ? Date.parse(ready.lastTransitionTime) : undefined;
  return {
    member: pod.metadata.labels?.[LABELS.member] ?? pod.metadata.name ?? '',
    phase: pod.status?.phase ?? 'Pending',
    ready: ready !== undefined,
    ...(readySince !== undefined && Number.isFinite(readySince) ? { readySince } : {}),
    deleting: pod.metadata.deletionTimestamp !== undefined,
    ...(deletion !== undefined && Number.isFinite(deletion) ? { deletingSince: deletion } : {}),
    ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}),
    ...(initOutdated ? { initOutdated } : {}),
    ...(stuck ? { cannotStart: clip(`${stuck.name}: ${stuck.state!.waiting!.reason!}${stuck.state?.waiting?.message ? `: ${stuck.state.waiting.message}` : ''}`, 300) } : {}),
    ...(crashLooping || init ? { crashLoopingSince: previousCrashSince ?? now } : {}),
    ...(pod.metadata.annotations?.[FORCE_NEW_CLUSTER_ANNOTATION] === 'true' ? { forcedNewCluster: true } : {}),
    // Only while etcd is not running: a last termination message outlives a later start that went well.
    ...(!status?.state?.running && etcdSaysDataLost(`${status?.state?.terminated?.message ?? ''}\n${status?.lastState?.terminated?.message ?? ''}`) ? { dataLost: true } : {}),
    ...(init && (RESTORE_CONTAINERS as readonly string[]).includes(init.name) ? { restoreFailed: lastLines((init.state?.terminated ?? init.lastState?.terminated)?.message ?? 'exited with an error') } : {}),
    ...(terminated && terminated.exitCode ? { lastTermination: { exitCode: terminated.exitCode, message: `${init ? `init container ${init.name}: ` : ''}${lastLines(terminated.message ?? terminated.reason ?? '')}` } } : {}),
  };
}

/** Waiting reasons that do not end by themselves: the pod needs a person (or a spec change) to start. */
const CANNOT_START = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'CreateContainerConfigError', 'CreateContainerError', 'ErrImageNeverPull']);

const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}…` : text);

/**
 * What explains an exit, from a termination message: the line that names the cause (a Go panic or fatal
 * error, or etcd's own fatal/panic/error log line) and the last line; else the last few lines. A panic's
 * cause is its first line, followed by a stack trace that says nothing to a user.
 */
export function lastLines(message: string, lines = 3, maxChars = 600): string {
  const all = message.trim().split('\n').map((l) => l.trimEnd()).filter(Boolean);
  // Go's flag package names a refused flag first, then prints the whole usage: the flag is the cause (etcd 3.6
  // refuses the flags it dropped this way, e.g. "flag provided but not defined: -enable-v2").
  const cause = all.find((l) => /^(panic: |fatal error: |flag provided but not defined: |flag needs an argument: |invalid value .* for flag )|"level":"(fatal|panic)"/.test(l)) ?? all.find((l) => /"level":"error"/.test(l));
  const kept = cause ? [cause, ...(all.at(-1) !== cause && !/^\s|^goroutine |\.go:\d+/.test(all.at(-1) ?? '') ? [all.at(-1)!] : [])].join('\n') : all.slice(-lines).join('\n');
  return kept.length > maxChars ? `${kept.slice(0, maxChars)}…` : kept;
}

export interface EtcdView {
  membership: Membership | undefined;
  /** Members whose pods could not answer a member list, with why (set when no quorum answered). */
  unreachable: { member: string; error: string }[];
  health: MemberHealth[];
  clusterId?: string;
}

/**
 * Asks the running members for the member list with a linearizable read (answered only through a quorum),
 * then each member for its own status. No answer means "unknown", never "gone".
 */
export async function observeEtcd(cluster: string, namespace: string, pods: PodObject[], clients: EtcdClients, signal: AbortSignal, credentials?: ClientCredentials): Promise<EtcdView> {
  const endpoints = pods
    .filter((p) => p.status?.podIP && p.status.phase === 'Running' && !p.metadata.deletionTimestamp)
    .sort((a, b) => Number(isReady(b)) - Number(isReady(a)))
    .map((p) => ({ member: p.metadata.labels?.[LABELS.member] ?? '', endpoint: clientEndpoint(p, cluster, namespace, credentials)! }));
  let list: { id: string; name: string; peerURLs: string[]; isLearner: boolean }[] | undefined;
  const unreachable: { member: string; error: string }[] = pods
    .filter((p) => !(p.status?.podIP && p.status.phase === 'Running') && !p.metadata.deletionTimestamp)
    .map((p) => {
      const why = observePod(p, 0).cannotStart;
      return { member: p.metadata.labels?.[LABELS.member] ?? '', error: why ?? `pod ${p.status?.phase ?? 'Pending'}, not running yet` };
    });
  for (const { member, endpoint } of endpoints) {
    try {
      list = await clients.get(endpoint).memberList({ linearizable: true, signal });
      break;
    } catch (err) {
      // Try the next member: one that cannot reach a quorum cannot answer.
      unreachable.push({ member, error: shortError(err) });
    }
  }
  if (!list) return { membership: undefined, health: [], unreachable };

  const byMember = new Map(endpoints.map((e) => [e.member, e.endpoint]));
  const health = await Promise.all(
    list.map(async (m): Promise<MemberHealth> => {
      const member = m.peerURLs.map((u) => memberFromPeerURL(cluster, namespace, u)).find(Boolean) ?? m.name;
      const endpoint = byMember.get(member);
      if (!endpoint || !m.name) return { member, id: m.id, healthy: false, learner: m.isLearner };
      try {
        const s = await clients.get(endpoint).status({ signal });
        // etcd lists the cluster's alarms among a member's status errors. NOSPACE is the whole cluster's (writes
        // refused) and says nothing about this member: it is recovered from (plan/maintenance.ts noSpaceStep), not counted
        // as a member down, which would wait for a quorum that is there. Any other error (CORRUPT, no leader) is.
        const alarms = alarmsInStatus(s.errors);
        const errors = s.errors.filter((e) => !alarmsInStatus([e]).some((a) => a.alarm === 'NOSPACE'));
        return {
          member, id: m.id, healthy: errors.length === 0 && s.leaderId !== '0' && s.leaderId !== '', learner: s.isLearner, leaderId: s.leaderId, version: s.version,
          dbSize: s.dbSize, ...(s.dbSizeInUse !== undefined ? { dbSizeInUse: s.dbSizeInUse } : {}), alarms, revision: s.revision, clusterId: s.clusterId,
        };
      } catch (err) {
        return { member, id: m.id, healthy: false, learner: m.isLearner, error: (err as Error).message };
      }
    }),
  );
  // The leader shown is one a quorum of voters names right now: a member cut off from the others may still
  // believe it leads, and its word alone must not decide where membership changes go.
  const voters = list.filter((m) => !m.isLearner).length;
  const named = mostCommon(health.filter((h) => h.healthy && !h.learner).map((h) => h.leaderId).filter((l): l is string => !!l && l !== '0'));
  const leaderId = named && health.filter((h) => h.healthy && !h.learner && h.leaderId === named).length >= quorum(voters) ? named : undefined;
  const members: ObservedMember[] = list.map((m, i) => ({
    id: m.id, member: health[i]!.member, started: m.name !== '', learner: m.isLearner, healthy: health[i]!.healthy, peerScheme: schemeOf(m.peerURLs[0]),
    ...(health[i]!.version ? { version: health[i]!.version } : {}),
  }));
  // Every member that answered its status named the cluster ID: no extra call for it.
  const clusterId = health.find((h) => h.clusterId)?.clusterId;
  return { membership: { members, leaderId }, health, clusterId, unreachable: [] };
}

/**
 * Each member's view of which peers are active, from its metrics port; members whose metrics cannot be
 * read are left out (no view is no evidence). Keys and values are member names.
 */
export async function observePeerActivity(pods: PodObject[], membership: Membership, signal: AbortSignal): Promise<Record<string, string[]>> {
  const byId = new Map(membership.members.map((m) => [m.id, m.member]));
  const views: Record<string, string[]> = {};
  await Promise.all(
    pods
      .filter((p) => p.status?.podIP && !p.metadata.deletionTimestamp)
      .map(async (p) => {
        const member = p.metadata.labels?.[LABELS.member] ?? '';
        if (!membership.members.some((m) => m.member === member)) return;
        try {
          const ids = await activePeers(`http://${p.status!.podIP}:${METRICS_PORT}`, { signal });
          views[member] = ids.map((id) => byId.get(id)).filter((m): m is string => m !== undefined);
        } catch {
          /* no view from this member */
        }
      }),
  );
  return views;
}

function shortError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  // The client prefixes the endpoint and path; the member is named by the caller.
  return message.replace(/^https?:\/\/\S+ \S+: /, '');
}

function isReady(p: PodObject): boolean {
  return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

function mostCommon(values: string[]): string | undefined {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
}

/**
 * Without a quorum, each running member's own revision, asked of it alone (a status answers without a
 * leader): the survivor with the newest data is what a Restore recovery starts from.
 */
export async function observeLocalRevisions(cluster: string, namespace: string, pods: PodObject[], clients: EtcdClients, signal: AbortSignal, credentials?: ClientCredentials): Promise<Record<string, string>> {
  const revisions: Record<string, string> = {};
  await Promise.all(
    pods
      .filter((p) => p.status?.podIP && p.status.phase === 'Running' && !p.metadata.deletionTimestamp)
      .map(async (p) => {
        try {
          const s = await clients.get(clientEndpoint(p, cluster, namespace, credentials)!).status({ signal });
          revisions[p.metadata.labels?.[LABELS.member] ?? ''] = s.revision;
        } catch {
          /* no answer: no revision, never a guess */
        }
      }),
  );
  return revisions;
}
