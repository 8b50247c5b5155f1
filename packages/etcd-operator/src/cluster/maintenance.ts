// Storage maintenance around the planner (plan.ts noSpaceStep, defragStep): what it decides from, gathered from
// the statuses observeEtcd reads anyway, and what status.maintenance records of what was done.
import { DEFRAG_SCHEDULE_SEED } from '../api/defaults.ts';
import { ETCD_DEFAULT_QUOTA_BYTES, type DefragRecord, type MaintenanceStatus } from '../api/etcdcluster.ts';
import { latestTime, parseSchedule } from '@quorum/kit';
import type { MaintenanceResult } from './act/context.ts';
import type { EtcdView } from './observe-members.ts';
import type { ObservedSpace } from './plan/types.ts';
import type { DefaultedSpec } from './spec.ts';

export function observeSpace(spec: DefaultedSpec, createdAt: number | undefined, view: EtcdView, previous: MaintenanceStatus | undefined, now: number): ObservedSpace {
  const ids = new Map((view.membership?.members ?? []).map((m) => [m.id, m.member]));
  // Every member lists the same (replicated) alarms; one entry per alarm and member it is raised for.
  const alarms = new Map<string, ObservedSpace['alarms'][number]>();
  for (const h of view.health) for (const a of h.alarms ?? []) alarms.set(`${a.memberId}/${a.alarm}`, { member: ids.get(a.memberId) ?? a.memberId, memberId: a.memberId, alarm: a.alarm });
  const revisions = view.health.map((h) => h.revision).filter((r): r is string => r !== undefined && r !== '0');
  const revision = revisions.sort((a, b) => (BigInt(a) < BigInt(b) ? 1 : BigInt(a) > BigInt(b) ? -1 : 0))[0];
  const defrag = spec.maintenance?.defrag;
  let scheduledAt: number | undefined;
  if (defrag?.schedule) {
    const parsed = parseSchedule(defrag.schedule, DEFRAG_SCHEDULE_SEED);
    const latest = parsed.ok ? latestTime(parsed.expression, now) : undefined;
    // Not a time before the cluster existed: a new cluster is not defragmented on its first reconcile.
    if (latest !== undefined && (createdAt === undefined || latest > createdAt)) scheduledAt = latest;
  }
  const compactedAt = previous?.noSpace?.compactedAt ? Date.parse(previous.noSpace.compactedAt) : undefined;
  return {
    sizes: view.health.filter((h) => h.dbSize !== undefined).map((h) => ({ member: h.member, dbSize: h.dbSize!, ...(h.dbSizeInUse !== undefined ? { dbSizeInUse: h.dbSizeInUse } : {}) })),
    alarms: [...alarms.values()],
    ...(revision ? { revision } : {}),
    quotaBytes: spec.etcd?.quotaBackendBytes ?? ETCD_DEFAULT_QUOTA_BYTES,
    ...(defrag?.thresholdPercent !== undefined ? { thresholdPercent: defrag.thresholdPercent } : {}),
    ...(scheduledAt !== undefined ? { scheduledAt } : {}),
    lastDefrag: Object.fromEntries((previous?.lastDefrag ?? []).map((d) => [d.member, Date.parse(d.at)])),
    ...(previous?.noSpace ? { noSpace: compactedAt !== undefined ? { compactedAt } : {} } : {}),
  };
}

/**
 * status.maintenance after this reconcile: the results of the last maintenance step (known only after it, so
 * recorded by the next status write), the NOSPACE recovery while the alarm is raised (gone with it), and each
 * current member's last defragmentation.
 */
export function maintenanceStatus(previous: MaintenanceStatus | undefined, results: readonly MaintenanceResult[], noSpaceRaised: boolean, members: readonly string[] | undefined, now: Date): MaintenanceStatus | undefined {
  const byMember = new Map<string, DefragRecord>((previous?.lastDefrag ?? []).map((d) => [d.member, d]));
  let noSpace = noSpaceRaised ? (previous?.noSpace ?? { since: now.toISOString() }) : undefined;
  for (const r of results) {
    if (r.kind === 'compacted') {
      if (noSpace) noSpace = { ...noSpace, compactedRevision: r.revision, compactedAt: r.at.toISOString() };
    } else {
      byMember.set(r.member, {
        member: r.member, at: r.at.toISOString(), durationMs: r.durationMs, reason: r.reason, dbSizeBefore: r.dbSizeBefore, ...(r.dbSizeAfter !== undefined ? { dbSizeAfter: r.dbSizeAfter } : {}),
      });
    }
  }
  // Without a member list (no quorum answered) nothing is dropped: the members may all come back.
  const lastDefrag = [...byMember.values()].filter((d) => !members || members.includes(d.member)).sort((a, b) => a.member.localeCompare(b.member));
  if (lastDefrag.length === 0 && !noSpace) return undefined;
  return { ...(lastDefrag.length > 0 ? { lastDefrag } : {}), ...(noSpace ? { noSpace } : {}) };
}
