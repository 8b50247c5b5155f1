// Rolling updates of member pods, one member at a time behind a gate, with etcd's downgrade API and peer TLS
// switched in place. docs/upgrades.md tells the same story for users.
import { RETRY_ROLLOUT_ANNOTATION } from '../../names.ts';
import { byIndex, compareVersions, minorOf, podLookup, seconds } from './core.ts';
import type { Action, HaltReason, Observed, ObservedMember, ObservedPod, ObservedRollout, RolloutRecord } from './types.ts';

const retryRequested = (r: ObservedRollout): boolean => r.retryToken !== undefined && r.retryToken !== r.record?.retryToken;

/** The halted record that still holds: the spec it halted on is still the spec, and no retry was asked for since. */
export function haltedRollout(r: ObservedRollout): RolloutRecord | undefined {
  const record = r.record;
  return record?.halted && record.target === r.target && !retryRequested(r) ? record : undefined;
}

/** What a person reads when a rollout has halted: where, why in etcd's or the kubelet's words, and the ways on. */
export function haltMessage(record: RolloutRecord): string {
  const halted = record.halted;
  if (!halted) return `rolling update to ${record.targetVersion}`;
  const back = record.fromVersion && record.fromVersion !== record.targetVersion ? `set spec.version back to ${record.fromVersion}` : 'revert the spec change';
  return `rolling update to ${record.targetVersion} halted at ${halted.member} (${halted.reason}): ${halted.message}. No further member is updated. To roll back, ${back}; to try again after fixing the cause, set the annotation ${RETRY_ROLLOUT_ANNOTATION} to a new value`;
}

/** The member etcd's downgrade API is called through: one that reports downgrades (3.6+), the leader first. */
function downgradeVia(o: Observed, members: ObservedMember[]): string | undefined {
  const able = members.filter((m) => m.healthy && m.downgrade !== undefined);
  return (able.find((m) => m.id === o.membership?.leaderId) ?? able[0])?.member;
}

/** A rollout under way (its record is written): what each part of it decides from. */
interface Rollout {
  o: Observed;
  r: ObservedRollout;
  record: RolloutRecord;
  members: ObservedMember[];
  serving: (m: ObservedMember) => boolean;
  peerSwitch: string[];
  outdated: Map<string, string[]>;
  isOutdated: (m: ObservedMember) => boolean;
  pod: (member: string) => ObservedPod | undefined;
  byIndex: (a: ObservedMember, b: ObservedMember) => number;
  /** "rolling update to <version> (<n>/<m> updated)": how every step of it begins. */
  heading: string;
  versionMove: boolean;
  /** The rollout's member (record.member), if it is still a member. */
  inFlight: ObservedMember | undefined;
  /** Members on the new spec (or about to be), the rollout's member first: each passes its gate before the next goes. */
  gated: ObservedMember[];
  /** Outdated members, by index. */
  candidates: ObservedMember[];
  /** An outdated member whose pod crash-loops or cannot start: it serves nobody, so updating it first costs nothing. */
  broken: (m: ObservedMember) => boolean;
  update: (m: ObservedMember, why: string) => Action;
}

/**
 * Rolling updates of member pods (any change of the spec that shapes them: version, image, podTemplate,
 * antiAffinity, etcd options), one member at a time, only while membership matches the spec. In order:
 * - nothing outdated and nothing recorded: not a rollout (undefined);
 * - a halted rollout waits for a person: a spec change (rollback) or a retry token starts a new one;
 * - a version move etcd would refuse changes nothing (UpgradeBlocked);
 * - a new target is recorded before anything is touched (startRollout), so a crash anywhere resumes it;
 * - every member on the new spec must pass its gate (started, healthy, Ready for minReadyMs, caught up with
 *   the leader's commit index, on spec.version) before the next one goes; a crash-looping updated member, one
 *   on another version, or the rollout's member past the gate's bound halts the rollout;
 * - nothing left outdated: done (steady; status drops the record);
 * - pre-checks: every other member serves; no CORRUPT alarm, and no NOSPACE for a version move;
 * - before the first member of a version change, the backup spec.backup asks for: created, then waited for;
 *   a failed one halts the rollout (BackupFailed) with nothing touched;
 * - the next member: one that serves nobody now (its update costs nothing), then followers by index, then the
 *   leader, after leadership moved to the updated member that has applied the most.
 */
export function rolloutStep(o: Observed, members: ObservedMember[], serving: (m: ObservedMember) => boolean): Action | undefined {
  const r = o.rollout;
  const record = r.record;
  const peerSwitch = r.peerSwitch ?? [];
  if (!record && r.outdated.length === 0 && peerSwitch.length === 0) return undefined;
  const stopped = stoppedStep(o, members);
  if (stopped) return stopped;
  if (!record || record.target !== r.target || retryRequested(r)) return startStep(o, members, peerSwitch);
  const c = rolloutOf(o, members, serving, record, peerSwitch);
  const gate = gateStep(c);
  if (gate) return gate;
  if (c.outdated.size === 0 && peerSwitch.length === 0) return { type: 'steady' };
  return preCheckStep(c) ?? preBackupStep(c) ?? downgradeStep(c) ?? nextMemberStep(c);
}

/** A halted rollout, a version move etcd refuses, or etcd's downgrade to cancel: nothing else moves. */
function stoppedStep(o: Observed, members: ObservedMember[]): Action | undefined {
  const r = o.rollout;
  const halted = haltedRollout(r);
  if (halted) return { type: 'wait', reason: 'UpgradeFailed', detail: haltMessage(halted), requeueAfterMs: 30_000 };
  if (r.outdated.length > 0 && r.path.kind === 'Refused') {
    return { type: 'wait', reason: 'UpgradeBlocked', detail: `spec.version ${r.targetVersion} is not rolled out: ${r.path.why}. No member is changed`, requeueAfterMs: 30_000 };
  }
  // spec.version went back during a downgrade: etcd's downgrade ends first, then members on the lower minor (if
  // any) are upgraded back like any upgrade.
  const downgrading = r.downgrade?.enabled && r.downgrade.targetVersion ? minorOf(r.downgrade.targetVersion) : undefined;
  if (downgrading !== undefined && downgrading !== minorOf(r.targetVersion)) {
    const via = downgradeVia(o, members);
    if (via) return { type: 'downgrade', op: 'cancel', target: downgrading, via, detail: `spec.version ${r.targetVersion} is not ${downgrading}: cancelling etcd's downgrade to ${downgrading}; members already on ${downgrading} are upgraded back` };
  }
  return undefined;
}

/** A new target (or a retry) is recorded before anything is touched, so a crash anywhere resumes it. */
function startStep(o: Observed, members: ObservedMember[], peerSwitch: string[]): Action {
  const r = o.rollout;
  const record = r.record;
  const known = members.map((m) => m.version).filter((v): v is string => v !== undefined).sort(compareVersions);
  const fromVersion = r.currentVersion ?? known[0];
  const now = new Date(o.now).toISOString();
  // A retry of the same target starts again at the member it halted on, with a fresh bound.
  const retried = record?.halted && record.target === r.target ? { member: record.halted.member, memberSince: now } : {};
  return {
    type: 'startRollout',
    record: { target: r.target, ...(fromVersion ? { fromVersion } : {}), targetVersion: r.targetVersion, startedAt: now, ...retried, ...(r.retryToken !== undefined ? { retryToken: r.retryToken } : {}) },
    detail: r.outdated.length > 0
      ? `rolling update of ${r.outdated.length} member${r.outdated.length === 1 ? '' : 's'} to ${r.targetVersion}: ${r.outdated.map((x) => `${x.member} (${x.fields.join(', ')})`).join('; ')}`
      : `rolling update to peer TLS: switching the peer URLs of ${peerSwitch.join(', ')} to https, one member at a time`,
  };
}

function rolloutOf(o: Observed, members: ObservedMember[], serving: (m: ObservedMember) => boolean, record: RolloutRecord, peerSwitch: string[]): Rollout {
  const r = o.rollout;
  const outdated = new Map(r.outdated.map((x) => [x.member, x.fields]));
  const isOutdated = (m: ObservedMember): boolean => outdated.has(m.member);
  const pod = podLookup(o);
  const order = byIndex(o);
  const updatedCount = members.filter((m) => !isOutdated(m) && pod(m.member) && !pod(m.member)!.deleting).length;
  const heading = `rolling update to ${r.targetVersion} (${updatedCount}/${members.length} updated)`;
  // A member not outdated is on the new spec, or about to be (its pod is missing or terminating, and is
  // recreated from the current spec).
  const inFlight = members.find((m) => m.member === record.member);
  const gated = members.filter((m) => !isOutdated(m)).sort((a, b) => Number(b === inFlight) - Number(a === inFlight) || order(a, b));
  const update = (m: ObservedMember, why: string): Action => ({
    type: 'updateMember',
    member: m.member,
    id: m.id,
    via: o.persistent ? 'evict' : 'replace',
    detail: `${heading}: updating ${m.member}, ${why}${isOutdated(m) ? ` (${outdated.get(m.member)?.join(', ') ?? ''})` : ''}`,
    ...(r.path.kind === 'Rollback' || r.path.kind === 'Downgrade' ? { clusterVersionAtMost: minorOf(r.targetVersion) } : {}),
    ...(r.path.kind === 'Downgrade' && m.version !== undefined && minorOf(m.version) !== minorOf(r.targetVersion) ? { storageVersion: `${minorOf(r.targetVersion)}.0` } : {}),
  });
  const broken = (m: ObservedMember): boolean => {
    const p = pod(m.member);
    return isOutdated(m) && !serving(m) && p !== undefined && (p.crashLoopingSince !== undefined || p.cannotStart !== undefined);
  };
  return {
    o, r, record, members, serving, peerSwitch, outdated, isOutdated, pod, byIndex: order, heading,
    versionMove: record.fromVersion !== record.targetVersion,
    inFlight, gated, candidates: members.filter(isOutdated).sort(order), broken, update,
  };
}

/** Why member `m`, on the new spec, has not passed its gate yet; undefined once it has. */
function notThroughGate(c: Rollout, m: ObservedMember): string | undefined {
  const { o, r } = c;
  const p = c.pod(m.member);
  if (!p) return 'its pod is being recreated';
  if (p.deleting) return 'its old pod is terminating';
  if (p.cannotStart) return `it cannot start: ${p.cannotStart}`;
  if (!m.started || !m.healthy) return 'its etcd does not answer yet, or knows no leader';
  if (!p.ready || p.readySince === undefined) return 'its pod is not Ready yet';
  if (o.now - p.readySince < r.minReadyMs) return `its pod has been Ready for ${seconds(o.now - p.readySince)} s of the ${seconds(r.minReadyMs)} s required`;
  if (!m.caughtUp) {
    const commit = o.membership?.leaderCommit;
    return m.appliedIndex && commit ? `it has applied raft index ${m.appliedIndex}, behind the leader's commit index ${commit}` : 'it has not been seen caught up with the leader yet';
  }
  return undefined;
}

type GateCheck = { m: ObservedMember; again?: true; halt?: { reason: HaltReason; message: string }; why?: string };

/** One gated member's gate: passed, waited for, updated again on a fresh pod, or the rollout halts on it. */
function gateCheck(c: Rollout, m: ObservedMember): GateCheck {
  const { o, r, record } = c;
  const p = c.pod(m.member);
  const live = p !== undefined && !p.deleting;
  const since = m === c.inFlight && record.memberSince ? Date.parse(record.memberSince) : undefined;
  // Crash-looping since before its update began: a retry of the member a rollout halted on, whose pod is in
  // the kubelet's back-off. It gets a fresh pod; only a crash of that one halts again.
  if (live && p.crashLoopingSince !== undefined && since !== undefined && p.crashLoopingSince < since) return { m, again: true };
  if (live && p.crashLoopingSince !== undefined) {
    const t = p.lastTermination;
    return { m, halt: { reason: 'CrashLooping', message: t ? `its etcd keeps exiting: exit code ${t.exitCode}: ${t.message}` : 'its etcd keeps exiting' } };
  }
  if (live && c.versionMove && m.version !== undefined && m.version !== record.targetVersion) {
    return { m, halt: { reason: 'VersionMismatch', message: `its image runs etcd ${m.version}, but spec.version is ${record.targetVersion}` } };
  }
  const why = notThroughGate(c, m);
  if (why && since !== undefined && o.now - since > r.gateBoundMs) {
    return { m, halt: { reason: p?.cannotStart ? 'CannotStart' : 'GateTimeout', message: `${why}, ${seconds(o.now - since)} s after its update began (the bound is ${seconds(r.gateBoundMs)} s)` } };
  }
  return { m, why };
}

/** The gate: each member on the new spec must pass before the next member goes. */
function gateStep(c: Rollout): Action | undefined {
  const checks = c.gated.map((m) => gateCheck(c, m));
  const again = checks.find((x) => x.again);
  if (again) return c.update(again.m, 'again, on a fresh pod (a retry)');
  const halt = checks.find((x) => x.halt);
  if (halt?.halt) return { type: 'haltRollout', member: halt.m.member, reason: halt.halt.reason, message: halt.halt.message };
  const waiting = checks.find((x) => x.why);
  if (!waiting?.why) return undefined;
  const what = waiting.m === c.inFlight ? `updating ${waiting.m.member}` : `updated member ${waiting.m.member}`;
  // The Ready dwell ends at a known time, and nothing else wakes the reconciler then: come back exactly at it.
  const readySince = c.pod(waiting.m.member)?.readySince;
  const dwellLeft = readySince !== undefined ? c.r.minReadyMs - (c.o.now - readySince) : 0;
  const requeueAfterMs = dwellLeft > 0 && dwellLeft <= c.r.minReadyMs ? Math.max(50, dwellLeft + 20) : 1000;
  return { type: 'wait', reason: 'RollingUpdate', detail: `${c.heading}: ${what}: ${waiting.why}`, requeueAfterMs, subject: waiting.m.member, boundMs: c.r.gateBoundMs };
}

/**
 * Pre-checks, again before each member: every other member serves (an outdated member whose pod crash-loops
 * or cannot start serves nobody: updating it first costs nothing, and is how a rollback reaches the member a
 * rollout halted on), etcd's alarms were read, and none blocks.
 */
function preCheckStep(c: Rollout): Action | undefined {
  const { r, heading } = c;
  const down = c.members.filter((m) => !(c.serving(m) && c.pod(m.member)?.ready) && !c.broken(m));
  if (down.length > 0) {
    return { type: 'wait', reason: 'RollingUpdate', detail: `${heading}: the next member is updated only while every other member serves; not serving: ${down.map((m) => m.member).join(', ')}`, requeueAfterMs: 2000 };
  }
  if (!r.alarms) return { type: 'wait', reason: 'RollingUpdate', detail: `${heading}: etcd's alarms could not be read (${r.alarmsUnread ?? 'no answer'}); no member is updated until they are`, requeueAfterMs: 2000 };
  // A configuration change goes on under NOSPACE: raising quotaBackendBytes is how NOSPACE is fixed.
  const blocking = r.alarms.filter((a) => a.alarm === 'CORRUPT' || (a.alarm === 'NOSPACE' && r.path.kind !== 'None'));
  if (blocking.length > 0) {
    const advice = blocking.some((a) => a.alarm === 'CORRUPT')
      ? "members' data differ (etcd's corruption check): find the corrupted member (etcdctl endpoint hashkv) and replace it before changing any member"
      : 'the operator compacted and defragmented every member, and the data still does not fit the quota: raise spec.etcd.quotaBackendBytes first (a change of spec.etcd alone is rolled out under the alarm), or delete data';
    return { type: 'wait', reason: 'UpgradeBlocked', detail: `${blocking.map((a) => `${a.alarm} alarm on ${a.member}`).join(', ')}: ${advice}. No member is updated while it is raised`, requeueAfterMs: 10_000 };
  }
  return undefined;
}

/** The backup spec.backup asks for, only before the first member: once one is on the new spec, the data the backup was for has moved on. */
function preBackupStep(c: Rollout): Action | undefined {
  const backup = c.r.preBackup;
  if (!backup || !c.versionMove || c.gated.length > 0 || backup.phase === 'Succeeded') return undefined;
  if (backup.phase === 'Missing') {
    return { type: 'createBackup', name: backup.name, destination: backup.destination, detail: `${c.heading}: taking EtcdBackup ${backup.name} before any member is updated (spec.backup.beforeVersionChange is Always)` };
  }
  if (backup.phase === 'Failed') {
    return { type: 'haltRollout', member: c.candidates[0]!.member, reason: 'BackupFailed', message: `EtcdBackup ${backup.name}, taken before the version change, failed (${backup.message ?? 'no reason given'}); no member was updated` };
  }
  return { type: 'wait', reason: 'BackupBeforeUpgrade', detail: `${c.heading}: waiting for EtcdBackup ${backup.name} (${backup.phase}) to succeed before any member is updated`, requeueAfterMs: 2000, boundMs: backup.boundMs };
}

/**
 * A downgrade: etcd is told first (its cluster version moves down at once), and every member on the newer
 * binary migrates its data to the older storage version before any member goes back (an older binary would
 * not read the newer schema). etcd ends the downgrade itself once every member runs the older minor.
 */
function downgradeStep(c: Rollout): Action | undefined {
  const { o, r, heading } = c;
  if (r.path.kind !== 'Downgrade') return undefined;
  const to = minorOf(r.targetVersion);
  const cluster = `${to}.0`;
  const newer = c.members.filter((m) => m.version !== undefined && minorOf(m.version) !== to);
  if (!r.downgrade?.enabled && c.gated.length === 0 && r.clusterVersion !== undefined && r.clusterVersion !== cluster) {
    const via = downgradeVia(o, c.members);
    if (!via) return { type: 'wait', reason: 'RollingUpdate', detail: `${heading}: no member on ${minorOf(r.clusterVersion)} answers to enable etcd's downgrade through`, requeueAfterMs: 2000 };
    return { type: 'downgrade', op: 'enable', target: to, via, detail: `${heading}: enabling etcd's downgrade to ${to} (its cluster version moves to ${cluster}, and every member migrates its data) before any member goes back` };
  }
  const unmigrated = newer.filter((m) => m.storageVersion !== cluster);
  if (unmigrated.length > 0) {
    return { type: 'wait', reason: 'DowngradeMigratingStorage', detail: `${heading}: waiting for ${unmigrated.map((m) => `${m.member} (storage version ${m.storageVersion ?? 'not read'})`).join(', ')} to migrate its data to storage version ${cluster} before any member goes back`, requeueAfterMs: 1000, boundMs: r.gateBoundMs };
  }
  if (r.clusterVersion !== cluster) {
    return { type: 'wait', reason: 'DowngradeMigratingStorage', detail: `${heading}: etcd's cluster version is ${r.clusterVersion ?? 'not read'}, not ${cluster} yet; no member goes back before it is`, requeueAfterMs: 1000, boundMs: r.gateBoundMs };
  }
  return undefined;
}

/**
 * The next member: one that serves nobody now, then followers by index, then (peer TLS in place) the peer URLs
 * to switch, then the leader, after leadership moved to the updated member that has applied the most.
 */
function nextMemberStep(c: Rollout): Action {
  const { o, members, candidates, heading } = c;
  const leaderId = o.membership?.leaderId;
  if (leaderId === undefined) return { type: 'wait', reason: 'RollingUpdate', detail: `${heading}: no leader is agreed by a quorum; the leader is updated last, so the next member waits for one`, requeueAfterMs: 2000 };
  const idle = candidates.find(c.broken);
  if (idle) return c.update(idle, 'which serves nobody now');
  const follower = candidates.find((m) => m.id !== leaderId);
  if (follower) return c.update(follower, 'a follower');
  // Peer TLS in place: every pod has the peer certificates now (nothing is outdated), so each member with an http
  // peer URL is switched in turn, followers first: the URL, then (as an outdated member) its pod. The leader goes
  // last, after leadership moved: while its URL is https and its listener still http, no follower could reach it.
  const toSwitch = members.filter((m) => c.peerSwitch.includes(m.member)).sort(c.byIndex);
  const switching = toSwitch.find((m) => m.id !== leaderId) ?? (members.length === 1 ? toSwitch[0] : undefined);
  if (candidates.length === 0 && switching) {
    return { type: 'switchPeerURL', member: switching.member, id: switching.id, detail: `${heading}: switching ${switching.member}'s peer URL to https (etcd member update), then updating its pod to listen on it` };
  }
  const leader = candidates.find((m) => m.id === leaderId) ?? (candidates.length === 0 ? toSwitch.find((m) => m.id === leaderId) : undefined);
  if (!leader) return { type: 'steady' };
  if (members.length === 1) return c.update(leader, 'the only member');
  // The leader is updated as a follower: leadership first goes to the updated member that has applied the most
  // (etcd would otherwise hand it, on shutdown, to the longest-connected member, which may be the old leader's next restart).
  const heir = members
    .filter((m) => m.id !== leaderId && !m.learner && !c.isOutdated(m) && m.caughtUp && m.appliedIndex !== undefined)
    .sort((a, b) => (BigInt(b.appliedIndex!) > BigInt(a.appliedIndex!) ? 1 : BigInt(b.appliedIndex!) < BigInt(a.appliedIndex!) ? -1 : c.byIndex(a, b)))[0];
  if (!heir) return { type: 'wait', reason: 'RollingUpdate', detail: `${heading}: no updated member has been seen caught up to take over leadership from ${leader.member}`, requeueAfterMs: 1000 };
  return { type: 'moveLeader', from: leader.member, fromId: leader.id, to: heir.member, toId: heir.id, detail: `${heading}: moving leadership from ${leader.member} to the updated member ${heir.member}, so that ${leader.member} is updated last, as a follower` };
}
