// "Apply if changed": skip a server-side apply when the server already holds everything we would send, so a
// steady-state reconcile makes no writes. The check is a subset test with no knowledge of the schema:
// - Values are compared as sent, without normalisation: write quantities and other values the API server
//   canonicalises in the form it returns ('1Gi', not '1024Mi'; '500m', not '0.5'), or they never compare equal
//   and every reconcile applies. A false "changed" only costs a write; a false "unchanged" would lose an update,
//   so every doubt resolves to applying.
// - Likewise empty lists and maps the server drops (omitempty) should be left out of `desired`.
// - A field removed from `desired` is not noticed while the rest matches: server-side apply would delete it,
//   but nothing in `observed` says we used to set it. Change another field (or apply unconditionally) with it.
import type { ApplyOptions, Client } from '../client/client.ts';
import type { ResourceType } from '../client/resources.ts';
import type { KubeObject } from '../object.ts';

export type ApplyClient = Pick<Client, 'apply'>;

/**
 * False when every field set in `desired` holds an equal value in `observed`: objects compare by the keys
 * `desired` sets, lists by length and element, scalars strictly. `null`/`undefined` in `desired` set nothing.
 * Ignored: metadata.resourceVersion and metadata.managedFields, `status` (a subresource apply does not
 * write), and apiVersion/kind when `observed` lacks them (list items from the API carry neither).
 */
export function needsApply(desired: KubeObject, observed: KubeObject | undefined): boolean {
  if (!observed) return true;
  const metadata: Record<string, unknown> = { ...desired.metadata };
  delete metadata.resourceVersion;
  delete metadata.managedFields;
  const wanted: Record<string, unknown> = { ...desired, metadata };
  delete wanted.status;
  if (observed.apiVersion === undefined) delete wanted.apiVersion;
  if (observed.kind === undefined) delete wanted.kind;
  return !contains(wanted, observed);
}

/** Applies `desired` unless `needsApply` says the server already has it; `object` is then `observed`. */
export async function applyIfChanged<T extends KubeObject>(
  client: ApplyClient,
  type: ResourceType<T>,
  desired: T,
  observed: T | undefined,
  options: ApplyOptions,
): Promise<{ applied: boolean; object: T }> {
  if (observed && !needsApply(desired, observed)) return { applied: false, object: observed };
  return { applied: true, object: await client.apply(type, desired, options) };
}

function contains(wanted: unknown, actual: unknown): boolean {
  if (wanted === undefined || wanted === null) return true;
  if (Array.isArray(wanted)) {
    return Array.isArray(actual) && actual.length === wanted.length && wanted.every((item: unknown, i) => contains(item, actual[i]));
  }
  if (isRecord(wanted)) {
    if (!isRecord(actual)) return false;
    return Object.entries(wanted).every(([key, value]) => contains(value, Object.hasOwn(actual, key) ? actual[key] : undefined));
  }
  return wanted === actual;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
