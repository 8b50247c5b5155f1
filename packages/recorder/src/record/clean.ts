// Cleaning: an object as it is worth keeping and re-applying. What the API server or controllers set, and
// what changes without anyone changing the object (identity, bookkeeping, status unless asked for), is left
// out; Secret values are replaced by keyed hashes unless the recorder is told to keep them. Two versions
// whose cleaned forms are equal are the same version as far as the recorder is concerned: that is how
// status-only and metadata-only churn is told apart from a change.
import { createHmac } from 'node:crypto';
import { deepEqual, type KubeObject } from '@quorum/runtime';

/** How a record was cleaned: stored with it, so a later comparison can clean the live object the same way. */
export interface CleanSettings {
  /** Keep `status` (when status changes are recorded, i.e. ignoreStatusOnly is false). */
  status: boolean;
  secrets: 'redact' | 'full';
}

/** A plain JSON object: what cleaning returns and records hold. */
export type Json = Record<string, unknown>;

/** Metadata the API server sets: meaningless (or refused) when re-applied, and changing on every write. */
const SERVER_METADATA = [
  'managedFields',
  'resourceVersion',
  'uid',
  'creationTimestamp',
  'generation',
  'selfLink',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
] as const;

/**
 * Annotations a controller maintains as bookkeeping of its own (not anyone's intent): the deployment
 * controller bumps the revision after each rollout, which would otherwise record every spec change twice.
 */
const CONTROLLER_ANNOTATIONS = ['deployment.kubernetes.io/revision'];

/** Finalizers the API server adds for a delete request's propagation policy: part of a deletion, not of the object. */
const DELETION_FINALIZERS = ['foregroundDeletion', 'orphan'];

/** Carries the last applied manifest in clear, Secret values included. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** What a redacted value starts with: the keyed hash's name. */
export const REDACTED_PREFIX = 'hmac-sha256:';

/**
 * The object as a record keeps it. `redactionKey` keys the hashes of redacted Secret values: equal values
 * give equal hashes within one store (so a change shows), and a hash cannot be looked up in a precomputed
 * table. Top-level fields keep the order apiVersion, kind, metadata, then the rest as the server sent them.
 */
export function cleanObject(obj: KubeObject, settings: CleanSettings, redactionKey: Uint8Array): Json {
  const { apiVersion, kind, metadata, ...rest } = structuredClone(obj) as KubeObject & Json;
  const meta: Json = { ...metadata };
  for (const field of SERVER_METADATA) delete meta[field];
  const annotations = { ...(metadata.annotations ?? {}) };
  for (const a of CONTROLLER_ANNOTATIONS) delete annotations[a];
  if (Object.keys(annotations).length > 0) meta.annotations = annotations;
  else delete meta.annotations;
  const finalizers = (metadata.finalizers ?? []).filter((f) => !DELETION_FINALIZERS.includes(f));
  if (finalizers.length > 0) meta.finalizers = finalizers;
  else delete meta.finalizers;
  if (!settings.status) delete rest.status;

  const cleaned: Json = { apiVersion, kind, metadata: meta, ...rest };
  if (apiVersion === undefined) delete cleaned.apiVersion;
  if (kind === undefined) delete cleaned.kind;
  if (settings.secrets === 'redact' && isSecret(obj)) redactSecret(cleaned, redactionKey);
  return cleaned;
}

export function isSecret(obj: KubeObject): boolean {
  return obj.kind === 'Secret' && obj.apiVersion === 'v1';
}

function redactSecret(secret: Json, key: Uint8Array): void {
  const hash = (value: string): string => `${REDACTED_PREFIX}${createHmac('sha256', key).update(value).digest('hex')}`;
  for (const field of ['data', 'stringData']) {
    const values = secret[field];
    if (!isRecord(values)) continue;
    secret[field] = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, typeof v === 'string' ? hash(v) : v]));
  }
  const metadata = secret.metadata as Json;
  const annotations = metadata.annotations;
  if (isRecord(annotations) && typeof annotations[LAST_APPLIED_ANNOTATION] === 'string') {
    annotations[LAST_APPLIED_ANNOTATION] = hash(annotations[LAST_APPLIED_ANNOTATION]);
  }
}

/** Whether two cleaned versions are the same: the runtime's JSON equality (key order does not matter). */
export function sameVersion(a: unknown, b: unknown): boolean {
  return deepEqual(a, b);
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
