// Every step has a bound and a voice. The step the planner chose is recorded in status.step with when it
// began; while the same step comes back (a wait, or an action etcd or Kubernetes refuses) its age grows,
// and the report says so through the kit's StepVoice (report.ts): the refusal's own words and the time spent
// in the Progressing condition, a Warning event after STEP_WARN_MS, Progressing=False (ProgressDeadlineExceeded)
// and Degraded=True past the step's bound, a retry metric, and a warn log at most every STEP_WARN_MS.
// docs/design.md lists them. What is etcd's own here: which actions are steps, and the two fields a refused
// membership change adds to the kit's record.
import { nextStepRecord, type StepRecord as KitStepRecord, type StepRefusal } from '@quorum/kit';
import type { Action } from './plan/types.ts';

/** What status.step records (crash-safe: a restarted operator keeps counting from startedAt). */
export interface StepRecord extends KitStepRecord {
  /** Since when every voting member has refused this membership change (unset when one accepted or none refused). */
  refusedEverywhereSince?: string;
  /** Members restarted for a stale peer view while this change was refused (bounded: see plan/recovery.ts). */
  restarts?: number;
}

/** A refusal of the step just attempted, kept until the next reconcile reports it. */
export interface StepFailure extends StepRefusal {
  /** Every voting member refused a membership change with "unhealthy cluster". */
  refusedEverywhere: boolean;
}

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
  const record: StepRecord | undefined = nextStepRecord(previous, name, failure, now);
  if (record && failure && failure.step === name) {
    if (failure.refusedEverywhere) record.refusedEverywhereSince ??= now.toISOString();
    else delete record.refusedEverywhereSince;
  }
  return record;
}
