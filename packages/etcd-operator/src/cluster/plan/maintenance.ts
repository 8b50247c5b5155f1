// Maintenance: the cluster's certificates (issued before any pod, a CA rotated step by step) and its storage
// (recovery from etcd's NOSPACE alarm, defragmentation by threshold or schedule).
import { DEFRAG_COOLDOWN_MS, DEFRAG_MIN_FREE_BYTES, type DefragReason } from '../../api/etcdcluster.ts';
import { memberIndex } from '../../names.ts';
import type { Action, Observed, ObservedMember } from './types.ts';

// Declared with the API, whose spec.maintenance.defrag.thresholdPercent description states them.
export { DEFRAG_COOLDOWN_MS, DEFRAG_MIN_FREE_BYTES };
/** The NOSPACE alarm is disarmed only when the data in use fits this share of the quota, or it would be raised again at once. */
export const NOSPACE_FIT = 0.9;

/** How long one member's defragmentation may take: a minute, plus its file rewritten at 10 MiB/s. */
export function defragTimeoutMs(dbSize: number): number {
  return 60_000 + Math.ceil((dbSize / (10 * 1024 * 1024)) * 1000);
}

/**
 * TLS material comes before any pod: a member must never start (or restart) without the certificates its
 * flags name, and certificates that fail their check are a person's to fix, not something to retry around.
 */
export function certificatesStep(o: Observed): Action | undefined {
  if (o.tls?.invalid) return { type: 'wait', reason: 'TLSSecretInvalid', detail: o.tls.invalid, requeueAfterMs: 30_000 };
  if (o.tls && o.tls.issue.length > 0) {
    return { type: 'issueTLSSecrets', secrets: o.tls.issue, detail: `issuing ${o.tls.issue.map((s) => `${s.name} (${s.reason})`).join(', ')}` };
  }
  return undefined;
}

const MiB = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Followers by index, then the leader: the leader's defragmentation stalls every write, so it goes last. */
function leaderLast(o: Observed, members: ObservedMember[]): ObservedMember[] {
  const leaderId = o.membership?.leaderId;
  return [...members].sort((a, b) => Number(a.id === leaderId) - Number(b.id === leaderId) || (memberIndex(o.cluster, a.member) ?? 0) - (memberIndex(o.cluster, b.member) ?? 0));
}

/**
 * Recovery from etcd's NOSPACE alarm (writes refused cluster-wide once a member's backend reached its quota):
 * compact to the current revision, defragment every member one at a time (followers first, the leader last),
 * then disarm, once the data in use fits the quota again. Compacting to the current revision drops every
 * older revision of every key, not only what auto-compaction would have dropped: under NOSPACE nobody can
 * write, so history is the only thing there is to give back, and watchers that need older revisions would
 * have had them compacted by auto-compaction soon anyway. Undefined without the alarm, and while a member
 * does not serve (a defragmentation would then cost the quorum more than one member).
 */
export function noSpaceStep(o: Observed, members: ObservedMember[], serving: (m: ObservedMember) => boolean): Action | undefined {
  const space = o.space;
  const raised = space?.alarms.filter((a) => a.alarm === 'NOSPACE') ?? [];
  if (!space || raised.length === 0) return undefined;
  if (!members.every(serving)) return undefined;
  const heading = `NOSPACE alarm raised (${[...new Set(raised.map((a) => a.member))].join(', ')}): etcd refuses writes`;
  const compactedAt = space.noSpace?.compactedAt;
  if (compactedAt === undefined) {
    const via = leaderLast(o, members).at(-1)!;
    if (!space.revision) return { type: 'wait', reason: 'NoSpace', detail: `${heading}; no member reported its revision to compact to`, requeueAfterMs: 2000 };
    return { type: 'compact', revision: space.revision, via: via.member, detail: `${heading}: compacting to revision ${space.revision}, then every member is defragmented and the alarm disarmed` };
  }
  const size = (m: string): number => space.sizes.find((x) => x.member === m)?.dbSize ?? 0;
  const next = leaderLast(o, members).find((m) => (space.lastDefrag[m.member] ?? 0) < compactedAt);
  if (next) {
    const done = members.filter((m) => (space.lastDefrag[m.member] ?? 0) >= compactedAt).length;
    return { type: 'defragment', member: next.member, reason: 'NoSpace', dbSize: size(next.member), timeoutMs: defragTimeoutMs(size(next.member)), detail: `${heading}: defragmenting ${next.member} (${MiB(size(next.member))}; ${done}/${members.length} done)` };
  }
  const inUse = Math.max(0, ...space.sizes.map((x) => x.dbSizeInUse ?? x.dbSize));
  if (inUse >= space.quotaBytes * NOSPACE_FIT) {
    return {
      type: 'wait', reason: 'NoSpace', requeueAfterMs: 30_000,
      detail: `${heading}; compacted and defragmented, the data still takes ${MiB(inUse)} of the ${MiB(space.quotaBytes)} quota, so the alarm would come back at once: raise spec.etcd.quotaBackendBytes (rolled out even under the alarm) or delete data; the alarm is disarmed once it fits`,
    };
  }
  const via = leaderLast(o, members).at(-1)!;
  return { type: 'disarmAlarm', alarms: raised, via: via.member, detail: `${heading}: every member is compacted and defragmented (${MiB(inUse)} in use of ${MiB(space.quotaBytes)}): disarming the alarm` };
}

/**
 * Defragmentation by spec.maintenance.defrag: a member whose free pages reached thresholdPercent of its file
 * (and DEFRAG_MIN_FREE_BYTES, not within DEFRAG_COOLDOWN_MS of its last), or every member not defragmented
 * since the schedule last fired. One member per step, followers first, the leader last. The caller has checked
 * that every member serves and nothing else is under way; no alarm may be raised either (CORRUPT: the data is
 * suspect; NOSPACE has its own recovery).
 */
export function defragStep(o: Observed, members: ObservedMember[]): Action | undefined {
  const space = o.space;
  if (!space || space.alarms.length > 0 || o.rollout.record || o.rollout.outdated.length > 0 || o.tls?.caRotation) return undefined;
  if (members.length !== o.replicas || members.some((m) => m.learner || !m.healthy)) return undefined;
  for (const m of leaderLast(o, members)) {
    const s = space.sizes.find((x) => x.member === m.member);
    if (!s) continue;
    const last = space.lastDefrag[m.member];
    const free = s.dbSizeInUse === undefined ? 0 : s.dbSize - s.dbSizeInUse;
    const percent = s.dbSize > 0 ? (free / s.dbSize) * 100 : 0;
    const action = (reason: DefragReason, why: string): Action => ({ type: 'defragment', member: m.member, reason, dbSize: s.dbSize, timeoutMs: defragTimeoutMs(s.dbSize), detail: `defragmenting ${m.member}: ${why}` });
    if (space.scheduledAt !== undefined && (last ?? 0) < space.scheduledAt) {
      return action('Schedule', `spec.maintenance.defrag.schedule fired at ${new Date(space.scheduledAt).toISOString()} (${MiB(s.dbSize)}, ${Math.round(percent)} % free)`);
    }
    const threshold = space.thresholdPercent;
    if (threshold !== undefined && percent >= threshold && free >= DEFRAG_MIN_FREE_BYTES && (last === undefined || o.now - last >= DEFRAG_COOLDOWN_MS)) {
      return action('Threshold', `${MiB(free)} of its ${MiB(s.dbSize)} backend are free pages (${Math.round(percent)} %, threshold ${threshold} %)`);
    }
  }
  return undefined;
}

/**
 * The next step of an operator-managed CA rotation (docs/tls.md "Rotating a CA"), once every member serves and no
 * rollout is under way: TrustNew (the new CA joins every bundle; the bundle is part of each member pod's template,
 * so the members roll), then Reissue (signing moves to the new CA; leaves are issued again and read live), then,
 * once every member serves a certificate of the new CA and the overlap has passed, DropOld (the members roll again).
 * The overlap is not a step: the cluster is steady meanwhile, and status.tls says until when.
 */
export function caRotationStep(o: Observed, allServe: boolean): Action | undefined {
  const r = o.tls?.caRotation;
  if (!r || !allServe || o.rollout.record || o.rollout.outdated.length > 0) return undefined;
  const name = `the ${r.ca} CA`;
  if (r.phase === 'Start') return { type: 'rotateCA', ca: r.ca, step: 'TrustNew', detail: `rotating ${name} (${r.why}): a new CA joins every bundle beside the old one; the members restart one at a time to trust both` };
  if (r.phase === 'TrustNew') return { type: 'rotateCA', ca: r.ca, step: 'Reissue', detail: `rotating ${name}: every member trusts both CAs; certificates are signed by the new CA from now on` };
  if (r.notServedByNew === undefined) return undefined;
  if (r.notServedByNew.length > 0) {
    return { type: 'wait', reason: 'CARotation', detail: `rotating ${name}: waiting for ${r.notServedByNew.join(', ')} to serve a certificate of the new CA (the kubelet refreshes mounted Secrets within about a minute) before the old CA is dropped`, requeueAfterMs: 5000 };
  }
  if (r.rotatedAt !== undefined && o.now - r.rotatedAt < (o.tls?.caOverlapMs ?? 0)) return undefined;
  return { type: 'rotateCA', ca: r.ca, step: 'DropOld', detail: `rotating ${name}: every member serves certificates of the new CA and the overlap has passed; the old CA leaves the bundles, and the members restart one at a time` };
}
