// Timers every package may load: nothing here imports a Kubernetes client, so a small program (the backup
// agent in its Job) gets them without loading @kubernetes/client-node (`@quorum/runtime/timers`).

/** Resolves after `ms`, or at once (without throwing) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
