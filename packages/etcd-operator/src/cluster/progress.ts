// Every step has a bound and a voice. The step the planner chose is recorded in status.step with when it
// began; while the same step comes back (a wait, or an action etcd or Kubernetes refuses) its age grows,
// and the report says so: the refusal's own words and the time spent in the Progressing condition, a
// Warning event after STEP_WARN_MS, Progressing=False (ProgressDeadlineExceeded) and Degraded=True past
// the step's bound, a retry metric, and a warn log at most every STEP_WARN_MS. docs/design.md lists them.
import type { Action } from './plan/types.ts';

/** What status.step records (crash-safe: a restarted operator keeps counting from startedAt). */
export interface StepRecord {
  /** The step, e.g. "addMember c1-3" or "wait LearnerStarting". */
  name: string;
  startedAt: string;
  /** The last refusal of this step, in etcd's or Kubernetes' words, with where it was sent. */
  lastError?: string;
  /** Machine-readable kind of the last refusal, e.g. UnhealthyCluster, Forbidden. */
  lastErrorReason?: string;
  /** Since when every voting member has refused this membership change (unset when one accepted or none refused). */
  refusedEverywhereSince?: string;
  /** Failed attempts of this step so far. */
  failures?: number;
  /** Members restarted for a stale peer view while this change was refused (bounded: see plan/recovery.ts). */
  restarts?: number;
  /** Whether the Warning event for this step has been emitted (after STEP_WARN_MS), and the stall event (past the bound). */
  warned?: boolean;
  stalled?: boolean;
}

/** A refusal of the step just attempted, kept until the next reconcile reports it. */
export interface StepFailure {
  step: string;
  reason: string;
  message: string;
  /** Every voting member refused a membership change with "unhealthy cluster". */
  refusedEverywhere: boolean;
}

export const STEP_WARN_MS = 30_000;
/** The default bound of a step; past it the cluster is Degraded and Progressing is False. */
export const DEFAULT_STEP_DEADLINE_MS = 120_000;

/**
 * Waits that only a person ends (a halted or refused rolling update, a TLS Secret that fails its check): not steps to retry, so they have no
 * step record, no retry warnings and no stall; their voice is the Degraded condition and one Warning event.
 */
export const PERSON_WAITS: readonly string[] = ['UpgradeFailed', 'UpgradeBlocked', 'TLSSecretInvalid'];

/** The step's name; undefined for steady, paused and PERSON_WAITS, which are not steps. */
export function stepName(a: Action): string | undefined {
  switch (a.type) {
    case 'steady': return undefined;
    // A wait about one member is a step of its own per member: each member's gate has its own age.
    case 'wait': return a.reason === 'Paused' || PERSON_WAITS.includes(a.reason) ? undefined : `wait ${a.reason}${a.subject ? ` ${a.subject}` : ''}`;
    case 'bootstrap': return 'bootstrap';
    case 'startRecovery': return `startRecovery ${a.method} ${a.from}`;
    case 'clearForRestore': return 'clearForRestore';
    case 'startRollout': return 'startRollout';
    case 'moveLeader': return `moveLeader ${a.to}`;
    case 'createBackup': return `createBackup ${a.name}`;
    case 'downgrade': return `downgrade ${a.op} ${a.target}`;
    case 'issueTLSSecrets': return 'issueTLSSecrets';
    case 'rotateCA': return `rotateCA ${a.ca} ${a.step}`;
    case 'compact': return 'compact';
    case 'disarmAlarm': return 'disarmAlarm';
    default: return `${a.type} ${a.member}`;
  }
}

/** The step record after this reconcile's decision (and the failure of the previous attempt, if any). */
export function nextStep(previous: StepRecord | undefined, action: Action, failure: StepFailure | undefined, now: Date): StepRecord | undefined {
  // A restart for a stale peer view is part of the refused change it serves, not a step of its own: the
  // change keeps its age (so it still turns Degraded past its bound) and counts the restart, and the
  // refusals are timed afresh so the restart has its time to work.
  if (action.type === 'restartMember' && previous) return { ...previous, restarts: (previous.restarts ?? 0) + 1, refusedEverywhereSince: now.toISOString() };
  const name = stepName(action);
  if (!name) return undefined;
  const same = previous?.name === name;
  const record: StepRecord = same ? { ...previous } : { name, startedAt: now.toISOString() };
  if (failure?.step === name) {
    record.lastError = failure.message;
    record.lastErrorReason = failure.reason;
    record.failures = (record.failures ?? 0) + 1;
    if (failure.refusedEverywhere) record.refusedEverywhereSince ??= now.toISOString();
    else delete record.refusedEverywhereSince;
  }
  return record;
}

export function stepAgeMs(record: StepRecord | undefined, now: Date): number {
  return record ? Math.max(0, now.getTime() - Date.parse(record.startedAt)) : 0;
}

/** "45 s", "3 min": coarse on purpose, so a stalled step rewrites its status every 10 s at most. */
export function formatAge(ms: number): string {
  if (ms < 60_000) return `${Math.floor(ms / 10_000) * 10} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.floor((ms % 3_600_000) / 60_000)} min`;
}

/** The Progressing message: what the step does, how long it has taken, and the last refusal. */
export function progressMessage(description: string, record: StepRecord | undefined, now: Date): string {
  const age = stepAgeMs(record, now);
  const since = age >= 10_000 ? ` (for ${formatAge(age)})` : '';
  return record?.lastError ? `${description}${since}: ${record.lastError}` : `${description}${since}`;
}

/** How soon to look again: quickly at first, then backing off while a step keeps failing or waiting. */
export function retryDelayMs(record: StepRecord | undefined, now: Date, planned: number): number {
  const age = stepAgeMs(record, now);
  const floor = age < 10_000 ? 1000 : age < 60_000 ? 2000 : 5000;
  return Math.max(planned, record?.lastError ? floor : 0);
}
