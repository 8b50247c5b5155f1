// What every operator's backup agent shares: the agent runs in a Job or an init container, streams between a
// server and a store, and reports ONE JSON line as its container's termination message, which the operator reads
// from the pod's status (Kubernetes keeps at most 4096 bytes of it). Waits on a store or a server that cannot be
// reached for a moment are bounded and said on stderr (the container's log).
import { sleep } from '@quorum/runtime/timers';

/** Kubernetes keeps at most 4096 bytes of a termination message. */
export const MAX_RESULT_BYTES = 4096;

/** 20261123T105301Z: sortable, and legal in every store's keys and file names. */
export function compactTimestamp(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z').replace(/[-:]/g, '');
}

/** One JSON line of at most MAX_RESULT_BYTES: a long message is shortened, never the fields the operator needs. */
export function resultLine(result: object): string {
  let line = JSON.stringify(result);
  if (Buffer.byteLength(line) < MAX_RESULT_BYTES && !line.includes('\n')) return `${line}\n`;
  const message = 'message' in result && typeof result.message === 'string' ? result.message : '';
  const excess = Buffer.byteLength(line) - MAX_RESULT_BYTES + 64;
  line = JSON.stringify({ ...result, message: `${message.slice(0, Math.max(0, message.length - excess))}…` });
  return `${line}\n`;
}

export type Reached<T> = { ok: true; value: T } | { ok: false; error: unknown; attempts: number; ms: number };

/**
 * `attempt` retried with growing pauses (0.5 s up to 4 s) while it fails as `transient` says, until `boundMs`
 * has passed; each failed attempt is a warning on stderr (the Job's or init container's log), naming `what`.
 * A name that does not resolve for a moment (CoreDNS restarting: EAI_AGAIN) or a server restarting is over in
 * seconds; a command that fails on the first try turns it into a failed backup or a refused restore.
 */
export async function retryWhileUnreachable<T>(what: string, attempt: () => Promise<T>, transient: (err: unknown) => boolean, boundMs: number, signal: AbortSignal): Promise<Reached<T>> {
  const start = Date.now();
  for (let n = 1; ; n++) {
    try {
      return { ok: true, value: await attempt() };
    } catch (err) {
      const ms = Date.now() - start;
      const pause = Math.min(500 * 2 ** (n - 1), 4000);
      if (!transient(err) || signal.aborted || ms + pause > boundMs) return { ok: false, error: err, attempts: n, ms };
      process.stderr.write(`warning: attempt ${n} to reach ${what} failed after ${(ms / 1000).toFixed(1)} s (${err instanceof Error ? err.message : String(err)}); trying again in ${pause / 1000} s, for ${Math.round(boundMs / 1000)} s at most\n`);
      await sleep(pause, signal);
    }
  }
}
