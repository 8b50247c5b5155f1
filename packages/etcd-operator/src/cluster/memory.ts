// What the reconciler keeps between reconciles of a cluster, in memory only: none of it is needed to converge
// (a restarted operator starts empty and does the same), it only keeps the voice from repeating itself and
// carries what a step learned after the status was written to the next reconcile.
import { StepVoice } from '@quorum/kit';
import type { MaintenanceResult } from './act/context.ts';
import type { StepFailure } from './progress.ts';

export class ReconcilerMemory {
  /** Per pod UID: since when it crash-loops (the kubelet's back-off hides it between restarts). */
  readonly crashSince = new Map<string, number>();
  /** Per pod UID, the crash already reported (its message): one Warning per distinct crash, forgotten with the crash. */
  readonly crashReported = new Map<string, string>();
  /** Per cluster key: the refusal of its last attempt, reported by its next reconcile (then forgotten). */
  private readonly failures = new Map<string, StepFailure>();
  /** The steps' voice (Warning events, warn logs), per cluster key. */
  readonly voice = new StepVoice({ retryingReason: 'StepRetrying', stalledReason: 'StepStalled' });
  /** Per cluster key: what its last maintenance steps did (act learns it after the status write), for its next status. */
  private readonly maintained = new Map<string, MaintenanceResult[]>();

  /** The last attempt's refusal, taken: the next reconcile reports it once. */
  takeFailure(key: string): StepFailure | undefined {
    const f = this.failures.get(key);
    this.failures.delete(key);
    return f;
  }

  failed(key: string, failure: StepFailure): void {
    this.failures.set(key, failure);
  }

  /** The maintenance results not yet folded into status, taken. */
  takeMaintained(key: string): MaintenanceResult[] {
    const done = this.maintained.get(key) ?? [];
    this.maintained.delete(key);
    return done;
  }

  maintainedNow(key: string, result: MaintenanceResult): void {
    this.maintained.set(key, [...(this.maintained.get(key) ?? []), result]);
  }

  /** A cluster that is gone leaves nothing behind. */
  forget(key: string): void {
    this.failures.delete(key);
    this.voice.forget(key);
    this.maintained.delete(key);
  }
}
