// How the step handlers reach etcd: which member to call through (membership changes go through each voting
// member in turn, the leader first), and the checks read from etcd at the last moment before a step.
import { EtcdUnavailableError, QuorumUnavailableError } from '../../etcd/errors.ts';
import type { EtcdClient, EtcdStatus } from '../../etcd/client.ts';
import type { MemberEndpoint } from '../membership.ts';
import { LABELS } from '../../names.ts';
import type { PodObject } from '../observe-members.ts';
import { clientEndpoint, type MemberEndpoint as ClientEndpoint } from '../../tls/members.ts';
import { clusterKey, StepError, type ActContext } from './context.ts';

function dial(c: ActContext, p: PodObject): ClientEndpoint | undefined {
  const { name, namespace } = clusterKey(c);
  return clientEndpoint(p, name, namespace, c.tls?.credentials);
}

/** Voting members that have a pod IP, the leader first: membership changes go through each in turn. */
export function votingEndpoints(c: ActContext): MemberEndpoint[] {
  const leader = c.view.membership?.leaderId;
  const voters = (c.view.membership?.members ?? []).filter((m) => !m.learner && m.started);
  const byMember = new Map(c.pods.filter((p) => p.status?.podIP && !p.metadata.deletionTimestamp).map((p) => [p.metadata.labels?.[LABELS.member] ?? '', dial(c, p)!]));
  return voters
    .sort((x, y) => Number(y.id === leader) - Number(x.id === leader))
    .flatMap((m) => (byMember.has(m.member) ? [{ member: m.member, endpoint: byMember.get(m.member)! }] : []));
}

/** The client endpoint of a member's running pod. */
export function endpointOf(c: ActContext, member: string): ClientEndpoint | undefined {
  const p = c.pods.find((x) => x.metadata.labels?.[LABELS.member] === member && x.status?.podIP && !x.metadata.deletionTimestamp);
  return p ? dial(c, p) : undefined;
}

/** The endpoint of a member a step must go through, or the refusal that says it has none. */
export function requireEndpoint(c: ActContext, member: string, what: string): ClientEndpoint {
  const endpoint = endpointOf(c, member);
  if (!endpoint) throw new StepError('MemberUnreachable', `${member} has no running pod to ${what}`);
  return endpoint;
}

/** " through <member>, after <refusals>", when a membership change went through another member than the first. */
export function through(r: { through: string; refusals: { member: string; error: string }[] }): string {
  return r.refusals.length ? ` through ${r.through}, after ${r.refusals.map((x) => `${x.member}: ${x.error}`).join('; ')}` : '';
}

/** The minor ("3.5") etcd has a downgrade enabled to, from a member's status; undefined when none is (or 3.5, which does not say). */
export function downgradeEnabledTo(status: EtcdStatus): string | undefined {
  const d = status.downgrade;
  return d?.enabled && d.targetVersion ? d.targetVersion.split('.').slice(0, 2).join('.') : undefined;
}

/**
 * Every member runs `minor`: a downgrade to it that etcd still has enabled is over, and it would keep a new
 * member from joining (see the addMember action). 3.6 says in its status whether one is enabled; 3.5 does
 * not, and answers CANCEL with "no inflight downgrade job" when none is.
 */
export async function endFinishedDowngrade(c: ActContext, minor: string): Promise<void> {
  const { signal } = c;
  // Through the first voting member that answers, the leader first (as the add itself goes).
  let client: EtcdClient | undefined;
  let status: EtcdStatus | undefined;
  let lastError: Error = new StepError('MemberUnreachable', 'no voting member has a pod to end a finished downgrade through');
  for (const { endpoint } of votingEndpoints(c)) {
    client = c.etcd.get(endpoint);
    status = await client.status({ signal }).catch((err: unknown) => void (lastError = err as Error));
    if (status) break;
  }
  if (!client || !status) throw lastError;
  if (status.downgrade && downgradeEnabledTo(status) !== minor) return;
  const noneEnabled = (err: unknown): boolean => /no inflight downgrade job/.test((err as Error).message);
  try {
    await client.downgrade('CANCEL', '', { signal });
  } catch (err) {
    if (noneEnabled(err)) return;
    // 3.5 applies a CANCEL but never answers it (the request times out): a second one says whether it took.
    // Any other failure may not have reached raft, and a second "none enabled" would not mean it ended one.
    const timedOut = err instanceof QuorumUnavailableError || (err instanceof EtcdUnavailableError && err.reason === 'timeout');
    if (!timedOut) throw err;
    try {
      await client.downgrade('CANCEL', '', { signal });
    } catch (again) {
      if (!noneEnabled(again)) throw again;
    }
  }
  await c.wrote(`etcd downgrade cancel (finished)`);
  c.event('Normal', 'DowngradeFinished', `etcd still had its downgrade to ${minor} enabled with every member on ${minor}: ended it before adding a member (a new member cannot join while it is enabled)`);
}

/**
 * A rollback to an older minor is safe only while etcd's cluster version is still that minor: once it has
 * moved up, an older binary refuses to start ("server version is lower than determined cluster version").
 * Read again right before the member goes, since the plan's reading may be seconds old.
 */
export async function checkClusterVersion(c: ActContext, atMost: string): Promise<void> {
  const endpoint = c.view.health.filter((h) => h.healthy).map((h) => endpointOf(c, h.member)).find(Boolean);
  if (!endpoint) throw new StepError('ClusterVersionUnknown', 'no member serves to read the cluster version from before a rollback');
  const version = (await c.etcd.get(endpoint).version({ signal: c.signal })).cluster;
  if (!version) throw new StepError('ClusterVersionUnknown', 'etcd has not decided its cluster version yet; a rollback waits for it');
  const minor = (v: string): number => Number(v.split('.')[1]);
  if (minor(version) > minor(atMost)) {
    throw new StepError('ClusterVersionMoved', `etcd's cluster version moved to ${version}: members can no longer go back to ${atMost} binaries`);
  }
}
