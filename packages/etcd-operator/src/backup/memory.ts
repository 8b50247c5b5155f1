// Keeps the agent's memory flat while it streams. The bytes pass through short-lived Buffers outside V8's
// heap, which are freed only when V8 collects, and V8 starts a collection only once such memory grew by
// about 64 MiB since the last one: left alone, that much garbage rides on top of the live buffers. Measured
// with a 300 MiB snapshot (agent peak RSS above its peak for a tiny one): S3 +117 MiB unpaced, +55 MiB
// with a full collection every 8 MiB; Azure +102 / +38; a PVC +27 / +19. A collection of the agent's small
// heap takes milliseconds, but 150 of them for a 1.2 GiB snapshot took a third of the agent's CPU. A driver
// that copies each chunk into buffers of its own and drops it at once (S3's, see s3-multipart.ts in
// @quorum/storage) lets the chunks die young, and a minor collection frees them for a fraction of that:
// measured +38 to +48 MiB for a 1.2 GiB snapshot to S3, with 5.5 s of CPU instead of 21.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export const PACE_BYTES = 8 * 1024 * 1024;

/** 'minor' frees only what died young (a scavenge); 'full' everything (a mark-compact of the whole heap). */
export type Collection = 'minor' | 'full';

type V8Collector = (options?: { type: 'minor' | 'major' }) => void;

/**
 * V8's collector as a function, exposing it if the process was not started with --expose-gc. Only for the
 * agent's own process: it sets a V8 flag for the whole process.
 */
export function exposeGarbageCollector(): (kind: Collection) => void {
  let collect = (globalThis as { gc?: V8Collector }).gc;
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as V8Collector;
  }
  const gc = collect;
  return (kind) => {
    gc({ type: kind === 'minor' ? 'minor' : 'major' });
  };
}

/** An onBytes callback that runs a `kind` collection every `everyBytes` streamed; a no-op without `collect`. */
export function garbagePacer(collect: ((kind: Collection) => void) | undefined, kind: Collection, everyBytes = PACE_BYTES): (total: number) => void {
  if (!collect) return () => undefined;
  let next = everyBytes;
  return (total) => {
    if (total < next) return;
    next = total + everyBytes;
    collect(kind);
  };
}
