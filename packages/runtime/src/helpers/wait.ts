// Bounded waits for what the API server does in its own time (a CRD to be served, a configuration to be
// published). Every wait has a bound, and when it runs out the error names what was awaited, for how long,
// and the last error the probe met: "timed out after 30 s waiting for CustomResourceDefinition x to be
// established: …" says what to look at. Not test tooling: installers and operators wait with it.
import type { Client } from '../client/client.ts';
import { CustomResourceDefinitions } from '../client/resources.ts';
import type { KubeObject } from '../object.ts';
import { sleep } from '../timers.ts';
import { isConditionTrue, type Condition } from './conditions.ts';

/** How long a wait may take, how often it looks, and what stops it. */
export interface WaitOptions {
  /** The bound (default 30 s). */
  timeoutMs?: number;
  /** Between probes (default 250 ms). */
  intervalMs?: number;
  /** Stops the wait: it then throws the signal's reason. */
  signal?: AbortSignal;
}

/** A wait that ran out: `what` was awaited for `timeoutMs`; `cause` is the probe's last error, if any. */
export class WaitTimeoutError extends Error {
  /** What was awaited, as the message names it. */
  readonly what: string;
  /** The bound that ran out. */
  readonly timeoutMs: number;
  constructor(what: string, timeoutMs: number, last: unknown) {
    const detail = last === undefined ? '' : `: ${last instanceof Error ? last.message : JSON.stringify(last)}`;
    super(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}${detail}`, { cause: last });
    this.name = 'WaitTimeoutError';
    this.what = what;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * Polls `probe` until it returns a value other than undefined or false, and resolves to that value. A probe
 * that throws counts as "not yet" (an object not created yet, a server restarting); past the bound, a
 * WaitTimeoutError carries the last such error.
 */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, options: WaitOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      last = undefined;
    } catch (err) {
      last = err;
    }
    if (Date.now() >= deadline) throw new WaitTimeoutError(what, timeoutMs, last);
    await sleep(Math.min(options.intervalMs ?? 250, Math.max(0, deadline - Date.now())), options.signal);
  }
}

/** Whether a CustomResourceDefinition as read from the API server is Established (its kind is served). */
export function crdEstablished(crd: KubeObject | undefined): boolean {
  const conditions = (crd as { status?: { conditions?: Condition[] } } | undefined)?.status?.conditions;
  return isConditionTrue(conditions, 'Established');
}

/**
 * Waits until the API server serves the kind of the CustomResourceDefinition `name` (condition Established):
 * until then, creating or watching its objects fails with 404. Default bound 30 s.
 */
export async function waitForCRDEstablished(client: Pick<Client, 'get'>, name: string, options: WaitOptions = {}): Promise<void> {
  await waitFor(`CustomResourceDefinition ${name} to be established`, async () => crdEstablished(await client.get(CustomResourceDefinitions, name, { signal: options.signal })), options);
}
