// Polling for conditions that take time; localkube waits with it too. It lives here, not in localkube, because
// the runtime's testing entry must not depend on the test cluster, so that it works against any API server.
// The polling itself is the runtime's waitFor (shipped code waits with that); tests poll faster by default.
import { waitFor } from '../helpers/wait.ts';

export interface EventuallyOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

/** Polls `probe` until it returns something other than undefined/false; on timeout, the error carries its last error. */
export function eventually<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, options: EventuallyOptions = {}): Promise<T> {
  return waitFor(what, probe, { timeoutMs: options.timeoutMs ?? 30_000, intervalMs: options.intervalMs ?? 100 });
}
