// Progress lines for long steps, on stderr so that stdout stays for what a command returns.
const started = Date.now();

export function progress(message: string): void {
  const seconds = ((Date.now() - started) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[localkube ${seconds}s] ${message}\n`);
}

/** Runs `work`, printing when it starts and how long it took. */
export async function step<T>(label: string, work: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  progress(`${label} …`);
  const result = await work();
  progress(`${label}: done in ${((performance.now() - t0) / 1000).toFixed(1)}s`);
  return result;
}
