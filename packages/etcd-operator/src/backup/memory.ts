// Keeps the agent's memory flat while it streams: the bytes pass through short-lived Buffers outside V8's
// heap, which V8 frees only when it collects, and it starts a collection only once such memory grew by
// about 64 MiB since the last. Left alone, that much garbage rides on top of the live buffers (measured:
// +110 MiB of RSS for a 300 MiB snapshot through S3, against +60 MiB when paced); the Job's memory limit
// must hold it. A full collection of the agent's small heap takes milliseconds, so pacing costs little.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export const PACE_BYTES = 8 * 1024 * 1024;

/**
 * V8's collector as a function, exposing it if the process was not started with --expose-gc. Only for the
 * agent's own process: it changes a V8 flag for the whole process.
 */
export function exposeGarbageCollector(): () => void {
  type Collect = (options?: { type: 'minor' | 'major' }) => void;
  let collect = (globalThis as { gc?: Collect }).gc;
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as Collect;
  }
  return () => collect({ type: 'minor' });
}

/** An onBytes callback that runs `collect` every `everyBytes` streamed; a no-op without `collect`. */
export function garbagePacer(collect: (() => void) | undefined, everyBytes = PACE_BYTES): (total: number) => void {
  if (!collect) return () => undefined;
  let next = everyBytes;
  return (total) => {
    if (total < next) return;
    next = total + everyBytes;
    collect();
  };
}
