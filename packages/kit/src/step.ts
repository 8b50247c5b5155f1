// Every wait has a bound and a voice (the design's principle 11). A step that the world refuses, or a wait that
// does not end, comes back reconcile after reconcile; while it does, its age grows and it is voiced: the
// refusal's own words and the time spent in a status condition's message (progressMessage), a Warning event once
// it has lasted STEP_WARN_MS, another once it passes its bound (where the condition turns, e.g. Degraded), a warn
// log at most every STEP_WARN_MS, and a metric the caller counts. Level-based: nothing here sleeps or loops; the
// reconcile calls it each time it finds the step still under way, and requeues after retryDelayMs.
//
// Extracted from the etcd operator (cluster/progress.ts and cluster/report.ts, restore/reconcile.ts), unchanged.

/** After how long a step that keeps coming back is a Warning event and warn logs. */
export const STEP_WARN_MS = 30_000;
/** The default bound of a step; past it the object is Degraded and Progressing is False. */
export const DEFAULT_STEP_DEADLINE_MS = 120_000;

/** A step under way, as a status records it (crash-safe: a restarted operator keeps counting from startedAt). */
export interface StepRecord {
  /** The step, e.g. "addMember c1-3" or "wait LearnerStarting". */
  name: string;
  startedAt: string;
  /** The last refusal of this step, in the refuser's words. */
  lastError?: string;
  /** Machine-readable kind of the last refusal, e.g. Forbidden (a condition's reason, a metric's label). */
  lastErrorReason?: string;
  /** Failed attempts of this step so far. */
  failures?: number;
  /** Whether the Warning event for this step has been emitted (after STEP_WARN_MS), and the stall event (past the bound). */
  warned?: boolean;
  stalled?: boolean;
}

/** A refusal of the step just attempted, kept until the next reconcile records it. */
export interface StepRefusal {
  step: string;
  reason: string;
  message: string;
}

/**
 * The record after this reconcile's decision: the same step keeps its start (and counts the refusal of its last
 * attempt), another step starts afresh, and no step (undefined name) has no record.
 */
export function nextStepRecord<R extends StepRecord>(previous: R | undefined, name: string | undefined, refusal: StepRefusal | undefined, now: Date): R | StepRecord | undefined {
  if (!name) return undefined;
  const record: R | StepRecord = previous?.name === name ? { ...previous } : { name, startedAt: now.toISOString() };
  if (refusal?.step === name) {
    record.lastError = refusal.message;
    record.lastErrorReason = refusal.reason;
    record.failures = (record.failures ?? 0) + 1;
  }
  return record;
}

export function stepAgeMs(record: Pick<StepRecord, 'startedAt'> | undefined, now: Date): number {
  return record ? Math.max(0, now.getTime() - Date.parse(record.startedAt)) : 0;
}

/** "45 s", "3 min": coarse on purpose, so a stalled step rewrites its status every 10 s at most. */
export function formatAge(ms: number): string {
  if (ms < 60_000) return `${Math.floor(ms / 10_000) * 10} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.floor((ms % 3_600_000) / 60_000)} min`;
}

/** A condition's message for the step: what it does, how long it has taken, and the last refusal. */
export function progressMessage(description: string, record: StepRecord | undefined, now: Date): string {
  const age = stepAgeMs(record, now);
  const since = age >= 10_000 ? ` (for ${formatAge(age)})` : '';
  return record?.lastError ? `${description}${since}: ${record.lastError}` : `${description}${since}`;
}

/** How soon to look again: quickly at first, then backing off while a step keeps failing. */
export function retryDelayMs(record: StepRecord | undefined, now: Date, planned: number): number {
  const age = stepAgeMs(record, now);
  const floor = age < 10_000 ? 1000 : age < 60_000 ? 2000 : 5000;
  return Math.max(planned, record?.lastError ? floor : 0);
}

/** Where a step's voice goes: the object's events and the reconcile's log. */
export interface StepVoiceOutput {
  warning(reason: string, note: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface StepVoiceOptions {
  /** The Warning event's reason once a step has lasted warnAfterMs, e.g. StepRetrying. */
  retryingReason: string;
  /** The Warning event's reason once a step passes its bound, e.g. StepStalled. */
  stalledReason?: string;
  /** Default STEP_WARN_MS. */
  warnAfterMs?: number;
}

export interface RepeatedStep {
  /** The object's key (`namespace/name`): one voice per object. */
  key: string;
  /** The step's name: another step warns afresh. */
  step: string;
  ageMs: number;
  /** Past it the step is stalled (its own Warning event); none for steps the planner bounds itself. */
  boundMs?: number;
  now: Date;
  /** The event's note and the log line: progressMessage's words, typically. */
  message: string;
  fields?: Record<string, unknown>;
  /**
   * Whether this step's events were emitted already, when the status records it (so a restarted operator does
   * not repeat them); without it, this voice remembers in memory, per object.
   */
  recorded?: Pick<StepRecord, 'warned' | 'stalled'>;
}

/** What was said so far about the step (to record in the status when it keeps them). */
export interface StepVoiced {
  warned: boolean;
  stalled: boolean;
}

/**
 * The voice of steps that keep coming back, one per reconciler. Call `repeated` each reconcile that finds a
 * step still under way, and `forget` when the object's step is over or the object gone.
 */
export class StepVoice {
  readonly #options: StepVoiceOptions;
  readonly #warned = new Map<string, string>();
  readonly #stalled = new Map<string, string>();
  readonly #lastWarnLog = new Map<string, number>();

  constructor(options: StepVoiceOptions) {
    this.#options = options;
  }

  repeated(step: RepeatedStep, out: StepVoiceOutput): StepVoiced {
    const warnAfter = this.#options.warnAfterMs ?? STEP_WARN_MS;
    const said = { warned: step.recorded?.warned ?? this.#warned.get(step.key) === step.step, stalled: step.recorded?.stalled ?? this.#stalled.get(step.key) === step.step };
    if (step.ageMs >= warnAfter && !said.warned) {
      said.warned = true;
      this.#warned.set(step.key, step.step);
      out.warning(this.#options.retryingReason, step.message);
    }
    if (step.boundMs !== undefined && this.#options.stalledReason && step.ageMs >= step.boundMs && !said.stalled) {
      said.stalled = true;
      this.#stalled.set(step.key, step.step);
      out.warning(this.#options.stalledReason, `no progress for ${formatAge(step.ageMs)}: ${step.message}`);
    }
    if (step.ageMs >= warnAfter && step.now.getTime() - (this.#lastWarnLog.get(step.key) ?? 0) >= warnAfter) {
      this.#lastWarnLog.set(step.key, step.now.getTime());
      out.warn({ ...step.fields, forSeconds: Math.round(step.ageMs / 1000) }, step.message);
    }
    return said;
  }

  forget(key: string): void {
    this.#warned.delete(key);
    this.#stalled.delete(key);
    this.#lastWarnLog.delete(key);
  }
}
