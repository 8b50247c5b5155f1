// What the reconciler keeps between reconciles of a cluster, in memory only: none of it is needed to converge
// (a restarted operator starts empty and does the same), it only keeps the voice from repeating itself and
// carries what a step learned after the status was written to the next reconcile.
import { StepVoice } from '@quorum/kit';
import type { MaintenanceResult } from './act/context.ts';
import type { StepFailure } from './progress.ts';

export class ReconcilerMemory {
  /**
   * Per cluster key, per pod UID: since when it crash-loops (the kubelet's back-off hides it between restarts).
   * Kept per cluster so that a reconcile can drop what it holds of pods gone from its cluster (keepPods): a
   * crash-looping member is replaced under a new UID, and its old entry would otherwise stay for the life of
   * the process (issue 23, finding 9).
   */
  readonly #crashSince = new Map<string, Map<string, number>>();
  /** Per cluster key, per pod UID, the crash already reported (its message): one Warning per distinct crash, forgotten with the crash. */
  readonly #crashReported = new Map<string, Map<string, string>>();
  /** Per cluster key: the refusal of its last attempt, reported by its next reconcile (then forgotten). */
  private readonly failures = new Map<string, StepFailure>();
  /** The steps' voice (Warning events, warn logs), per cluster key. */
  readonly voice = new StepVoice({ retryingReason: 'StepRetrying', stalledReason: 'StepStalled' });
  /** Per cluster key: what its last maintenance steps did (act learns it after the status write), for its next status. */
  private readonly maintained = new Map<string, MaintenanceResult[]>();

  /** Since when each pod of the cluster `key` crash-loops, by pod UID (made when first asked for). */
  crashSince(key: string): Map<string, number> {
    return entryOf(this.#crashSince, key);
  }

  /** The crash already reported for each pod of the cluster `key`, by pod UID (made when first asked for). */
  crashReported(key: string): Map<string, string> {
    return entryOf(this.#crashReported, key);
  }

  /** Drops what is kept of the cluster `key`'s pods that are not among `uids` (its pods now, as the cache has them). */
  keepPods(key: string, uids: Iterable<string>): void {
    const keep = new Set(uids);
    for (const byPod of [this.#crashSince.get(key), this.#crashReported.get(key)]) {
      for (const uid of byPod?.keys() ?? []) if (!keep.has(uid)) byPod!.delete(uid);
    }
    if (this.#crashSince.get(key)?.size === 0) this.#crashSince.delete(key);
    if (this.#crashReported.get(key)?.size === 0) this.#crashReported.delete(key);
  }

  /** How many pods, over every cluster, something is kept about: what a test checks is pruned. */
  get podsKept(): number {
    let n = 0;
    for (const byPod of [...this.#crashSince.values(), ...this.#crashReported.values()]) n += byPod.size;
    return n;
  }

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
    this.#crashSince.delete(key);
    this.#crashReported.delete(key);
  }
}

function entryOf<V>(map: Map<string, Map<string, V>>, key: string): Map<string, V> {
  let entry = map.get(key);
  if (!entry) map.set(key, (entry = new Map<string, V>()));
  return entry;
}
