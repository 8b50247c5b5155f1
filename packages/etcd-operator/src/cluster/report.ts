// Report: the status first (so a crash right after the step still left a record of it), and the voice around
// it: the step's events and logs as it repeats (progress.ts), crashes, NOSPACE raised and cleared, and the
// news a status change carries (a rollout completed or blocked, a recovery done). Status is written only
// when it changed, as a merge patch that removes what it no longer has (the kit's writeStatus).
import { formatAge, progressMessage, stepAgeMs, writeStatus as kitWriteStatus } from '@quorum/kit';
import type { Logger } from '@quorum/runtime';
import type { TlsStatus } from '../api/etcdcluster.ts';
import { EtcdClusters } from '../resources.ts';
import type { ReconcilerDeps } from './deps.ts';
import type { ReconcilerMemory } from './memory.ts';
import { FIELD_MANAGER, memberIndex, type Scheme } from '../names.ts';
import type { Observation } from './observe.ts';
import { nextIndex } from './plan/core.ts';
import type { Action, ObservedTLS } from './plan/types.ts';
import type { StepFailure, StepRecord } from './progress.ts';
import { applyDefaults, type DefaultedSpec, type EtcdCluster } from './spec.ts';
import { actionMessage, buildStatus, type StatusShape } from './status.ts';
import { servedClientStage } from '../tls/members.ts';

export type Say = (type: 'Normal' | 'Warning', reason: string, note: string) => void;

export interface ReportInput {
  deps: ReconcilerDeps;
  memory: ReconcilerMemory;
  cluster: EtcdCluster;
  spec: DefaultedSpec;
  previous: StatusShape | undefined;
  now: Date;
  signal: AbortSignal;
  log: Logger;
  event: Say;
  seen: Observation;
  action: Action;
  /** The step under way (undefined when steady or paused). */
  step: StepRecord | undefined;
  /** The refusal of the last attempt, if it was refused. */
  failure: StepFailure | undefined;
  stepDeadlineMs: number;
}

export async function report(i: ReportInput): Promise<void> {
  const { action, seen } = i;
  // A wait about one member's gate has its own bound (the rollout's), longer than a step's default.
  const bound = action.type === 'wait' && action.boundMs !== undefined ? action.boundMs : i.stepDeadlineMs;
  // Before the status is built: the step's voice marks it (warned, stalled) in what status records.
  reportStep(i, bound);
  const status = statusOf(i, bound);
  reportNoSpace(i, seen.noSpace);
  reportCrashes(i);
  reportNews(i, status);
  await writeStatus(i.deps, i.cluster, i.previous, status, i.signal);
}

/** An invalid spec (possible when the webhooks are off): reported in status, and nothing else changes. */
export async function reportInvalid(deps: ReconcilerDeps, cluster: EtcdCluster, previous: StatusShape | undefined, now: Date, invalid: string, signal: AbortSignal): Promise<void> {
  await writeStatus(deps, cluster, previous, buildStatus({ ...base(cluster, previous, now), pods: [], etcd: { membership: undefined, health: [], unreachable: [] }, action: { type: 'steady' }, invalid }), signal);
}

function statusOf(i: ReportInput, bound: number): StatusShape {
  const { action, step, spec, seen, cluster } = i;
  const name = cluster.metadata.name!;
  const { tls, rolling, maintenance, noSpace } = seen;
  // The client scheme status advertises: https once every member serves it (plaintext to TLS in place).
  const servedClientScheme: Scheme = spec.tls?.client && seen.pods.filter((p) => !p.metadata.deletionTimestamp).every((p) => servedClientStage(p) !== 'off') ? 'https' : 'http';
  const next = nextIndex(seen.observed);
  const rotation = tls?.observed.caRotation;
  const status = buildStatus({
    ...base(cluster, i.previous, i.now),
    pods: seen.observedPods,
    etcd: seen.view,
    action,
    nextMemberIndex: next,
    paused: spec.paused,
    ...(step ? { step } : {}),
    stepDeadlineMs: bound,
    outdated: rolling.rollout.outdated,
    ...(rolling.clusterVersion ? { clusterVersion: rolling.clusterVersion } : {}),
    ...(tls ? { tls: { status: withCARotation(tls.status, rotation, action, i.deps.caRotationOverlapMs ?? 0), clientScheme: servedClientScheme, peerScheme: tls.peerScheme, ...(tls.expiring ? { expiring: tls.expiring } : {}) } } : {}),
    ...(maintenance ? { maintenance } : {}),
    ...(noSpace.length > 0 ? { noSpace } : {}),
  });
  if (action.type === 'startRecovery' && action.method === 'Backup') {
    // The old cluster ends here: a new one (new ID, new member names) is bootstrapped from the backup.
    delete status.clusterID;
    status.bootstrapMembers = [];
    status.members = [];
  }
  if (action.type === 'bootstrap') {
    status.bootstrapMembers = action.members;
    status.nextMemberIndex = Math.max(next, ...action.members.map((m) => (memberIndex(name, m) ?? 0) + 1));
  }
  return status;
}

/** What a status change is news of: said once, when it changes. */
function reportNews(i: ReportInput, status: StatusShape): void {
  const { action, previous, step, event, log } = i;
  const name = i.cluster.metadata.name!;
  if (action.type === 'wait' && action.reason === 'QuorumLost' && previous?.step?.name !== step?.name) {
    event('Warning', 'QuorumLost', action.detail);
    log.warn({ cluster: name }, action.detail);
  }
  if (action.type === 'wait' && action.reason === 'TLSSecretInvalid') {
    const was = previous?.conditions?.find((c) => c.type === 'Degraded' && c.reason === 'TLSSecretInvalid');
    if (was?.status !== 'True' || was.message !== action.detail) {
      event('Warning', 'TLSSecretInvalid', action.detail);
      log.warn({ cluster: name }, action.detail);
    }
  }
  if (action.type === 'haltRollout') log.warn({ cluster: name, member: action.member, reason: action.reason }, `rolling update halted: ${action.message}`);
  if (previous?.rollout && !status.rollout) {
    event('Normal', 'RollingUpdateCompleted', `every member runs the spec (etcd ${status.currentVersion ?? i.spec.version}), each having passed its gate`);
  }
  const blocked = status.conditions?.find((c) => c.type === 'Degraded' && c.reason === 'UpgradeBlocked');
  const wasBlocked = previous?.conditions?.find((c) => c.type === 'Degraded' && c.reason === 'UpgradeBlocked');
  if (blocked && blocked.status === 'True' && blocked.message !== wasBlocked?.message) {
    event('Warning', 'UpgradeBlocked', blocked.message);
    log.warn({ cluster: name }, blocked.message);
  }
  if (status.recovery?.completedAt && !previous?.recovery?.completedAt) {
    const r = status.recovery;
    event('Normal', 'RecoveryCompleted', `serving again after recovering by ${r.method} from ${r.from}: data up to revision ${r.revision}${r.dataTime ? ` (${r.dataTime})` : ''}; writes after it were lost`);
  }
}

// NOSPACE, raised or cleared: an event and a log line on the change only (Degraded says it while it lasts),
// and the alarm's gauge every reconcile. Judged from the status record, which exists exactly while it is raised
// (known only when a quorum answered: silence clears nothing).
function reportNoSpace(i: ReportInput, raisedFor: string[]): void {
  if (!i.seen.view.membership) return;
  const { event, log } = i;
  const name = i.cluster.metadata.name!;
  i.deps.metrics?.alarm?.(i.cluster.metadata.namespace!, name, 'NOSPACE', raisedFor.length > 0);
  const was = i.previous?.maintenance?.noSpace;
  if (raisedFor.length > 0 && !was) {
    const note = `etcd's NOSPACE alarm is raised (${raisedFor.join(', ')}): the cluster refuses writes; the operator compacts, defragments every member and disarms it`;
    event('Warning', 'NoSpace', note);
    log.warn({ cluster: name, members: raisedFor }, note);
  } else if (raisedFor.length === 0 && was) {
    const since = Date.parse(was.since);
    const note = `the NOSPACE alarm is no longer raised${Number.isFinite(since) ? ` (raised for ${formatAge(i.now.getTime() - since)})` : ''}: the cluster accepts writes again`;
    event('Normal', 'NoSpaceCleared', note);
    log.info({ cluster: name }, note);
  }
}

// A step's voice: info when it starts, then (while it repeats) the kit's StepVoice (a Warning event after
// STEP_WARN_MS and past the bound, a warn log at most every STEP_WARN_MS), and a retry metric for every repeat.
function reportStep(i: ReportInput, boundMs: number): void {
  const { step: record, action: a, failure: f, now: at, log: l, event: ev } = i;
  const key = `${i.cluster.metadata.namespace}/${i.cluster.metadata.name}`;
  if (!record) {
    i.memory.voice.forget(key);
    return;
  }
  const description = actionMessage(a);
  const fields = { step: record.name, ...(record.lastErrorReason ? { reason: record.lastErrorReason } : {}) };
  if (i.previous?.step?.name !== record.name) {
    if (a.type !== 'wait') l.info(fields, description);
    return;
  }
  if (!f && a.type === 'wait') i.deps.metrics?.stepRetried(a.type, a.reason);
  const said = i.memory.voice.repeated(
    { key, step: record.name, ageMs: stepAgeMs(record, at), boundMs, now: at, message: progressMessage(description, record, at), fields, recorded: record },
    { warning: (reason, note) => ev('Warning', reason, note), warn: (logFields, message) => l.warn(logFields, message) },
  );
  // Kept in status (a restarted operator does not repeat the events); only once said, as before.
  if (said.warned) record.warned = true;
  if (said.stalled) record.stalled = true;
}

/** One Warning per distinct crash of a member (its last words), forgotten with the crash. */
function reportCrashes(i: ReportInput): void {
  const crashReported = i.memory.crashReported(`${i.cluster.metadata.namespace}/${i.cluster.metadata.name}`);
  for (const [n, o] of i.seen.observedPods.entries()) {
    const uid = i.seen.pods[n]!.metadata.uid ?? '';
    if (o.crashLoopingSince === undefined) {
      crashReported.delete(uid);
      continue;
    }
    const message = o.lastTermination?.message ?? '';
    if (crashReported.get(uid) === message) continue;
    crashReported.set(uid, message);
    const note = `${o.member} keeps exiting${o.lastTermination ? ` (exit code ${o.lastTermination.exitCode}): ${message}` : ''}`;
    i.event('Warning', 'MembersCrashLooping', note);
    i.log.warn({ member: o.member, exitCode: o.lastTermination?.exitCode }, note);
  }
}

async function writeStatus(deps: ReconcilerDeps, cluster: EtcdCluster, previous: StatusShape | undefined, status: StatusShape, signal: AbortSignal): Promise<void> {
  await kitWriteStatus(deps.client, EtcdClusters, { namespace: cluster.metadata.namespace!, name: cluster.metadata.name! }, previous, status, { fieldManager: FIELD_MANAGER, signal });
}

function base(cluster: EtcdCluster, previous: StatusShape | undefined, now: Date) {
  return {
    cluster: cluster.metadata.name!,
    namespace: cluster.metadata.namespace!,
    generation: cluster.metadata.generation ?? 0,
    replicas: cluster.spec?.replicas ?? 3,
    targetVersion: applyDefaultsSafe(cluster).version,
    previous,
    nextMemberIndex: previous?.nextMemberIndex ?? 0,
    paused: false,
    now,
  };
}

function applyDefaultsSafe(cluster: EtcdCluster): { version: string } {
  try {
    return applyDefaults(cluster.spec ?? {});
  } catch {
    return { version: cluster.spec?.version ?? '' };
  }
}

/** status.tls with the CA rotation under way on its side, and what it waits for now. */
function withCARotation(status: TlsStatus, rotation: ObservedTLS['caRotation'], action: Action, overlapMs: number): TlsStatus {
  if (!rotation || rotation.phase === 'Start') return status;
  const side = status[rotation.ca];
  if (!side) return status;
  const since = rotation.rotatedAt !== undefined ? new Date(rotation.rotatedAt).toISOString() : undefined;
  const message =
    action.type === 'wait' && action.reason === 'CARotation' ? action.detail
      : rotation.phase === 'TrustNew' ? 'the members restart, one at a time, to trust the old and the new CA'
        : rotation.rotatedAt !== undefined && overlapMs > 0 ? `certificates are signed by the new CA; the old CA is trusted until ${new Date(rotation.rotatedAt + overlapMs).toISOString()}, then dropped`
          : 'certificates are signed by the new CA';
  return { ...status, [rotation.ca]: { ...side, caRotation: { phase: rotation.phase, ...(since && rotation.phase === 'Reissue' ? { since } : {}), message } } };
}
