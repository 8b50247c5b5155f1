// Polling for conditions that take time; localkube waits with it too. It lives here, not in localkube, because
// the runtime's testing entry must not depend on the test cluster, so that it works against any API server.
export interface EventuallyOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

/** Polls `probe` until it returns something other than undefined/false; rethrows its last error on timeout. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, options: EventuallyOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`, { cause: last });
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 100));
  }
}
