// admission.k8s.io/v1 AdmissionReview: the request a webhook is sent, the handlers users write, and how
// a handler's answer becomes the review's response (a JSON patch, for mutating handlers).
import type { KubeObject } from '../object.ts';
import { jsonPatchDiff } from './json-patch.ts';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

import type { UserInfo } from '../builtin.ts';

export type { UserInfo };

export interface AdmissionRequest<T = KubeObject> {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  /** The kind and resource as the client asked for them, when the API server converted the request. */
  requestKind?: GroupVersionKind;
  requestResource?: GroupVersionResource;
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo: UserInfo;
  /** The object being admitted; absent on DELETE. */
  object?: T;
  /** The object before the change; present on UPDATE and DELETE. */
  oldObject?: T;
  dryRun?: boolean;
  /** The operation's CreateOptions, UpdateOptions or DeleteOptions. */
  options?: Record<string, unknown>;
}

export type ValidationResult =
  | { allowed: true; warnings?: string[] }
  | { allowed: false; message: string; reason?: string; code?: number; warnings?: string[] };

export type ValidatingHandler<T = KubeObject> = (request: AdmissionRequest<T>) => Promise<ValidationResult> | ValidationResult;

export interface MutationResult<T> {
  object: T;
  warnings?: string[];
}

/**
 * Returns the object as it should be admitted: changed in place or a new one. A return value whose only
 * keys are `object` and `warnings` is taken as a MutationResult (admitted objects always carry
 * apiVersion, kind and metadata, so the two cannot be confused). Called only when there is an object,
 * so not on DELETE. Throw AdmissionDeniedError to reject the object.
 */
export type MutatingHandler<T = KubeObject> = (
  request: AdmissionRequest<T> & { object: T },
) => Promise<T | MutationResult<T>> | T | MutationResult<T>;

/** Thrown by a handler to deny a request deliberately: answered with its code, not as a failure. */
export class AdmissionDeniedError extends Error {
  readonly code: number;
  readonly reason: string;
  constructor(message: string, options: { code?: number; reason?: string } = {}) {
    super(message);
    this.name = 'AdmissionDeniedError';
    this.code = options.code ?? 403;
    this.reason = options.reason ?? 'Forbidden';
  }
}

/** The review's `response`, less the `uid` the server copies from the request. */
export interface AdmissionResponse {
  allowed: boolean;
  status?: { code: number; message: string; reason?: string };
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
}

/** Any handler, reduced to what the server needs: an answer for a request. May throw. */
export type AdmissionReviewer = (request: AdmissionRequest<unknown>) => Promise<AdmissionResponse>;

export function validatingReviewer<T>(handler: ValidatingHandler<T>): AdmissionReviewer {
  return async (request) => {
    const result = await handler(request as AdmissionRequest<T>);
    if (result.allowed) return withWarnings({ allowed: true }, result.warnings);
    return withWarnings({ allowed: false, status: { code: result.code ?? 403, reason: result.reason ?? 'Forbidden', message: result.message } }, result.warnings);
  };
}

export function mutatingReviewer<T>(handler: MutatingHandler<T>): AdmissionReviewer {
  return async (request) => {
    if (request.object === undefined) return { allowed: true };
    const original = request.object;
    // The handler may change what it is given; the original is kept to diff against.
    const returned: unknown = await handler({ ...request, object: structuredClone(original) } as AdmissionRequest<T> & { object: T });
    const { object, warnings } = isMutationResult(returned) ? returned : { object: returned, warnings: undefined };
    // Through JSON, as the API server will see it: undefined properties vanish, Dates become strings.
    const mutated: unknown = JSON.parse(JSON.stringify(object ?? null));
    if (typeof mutated !== 'object' || mutated === null || Array.isArray(mutated)) throw new Error('the mutating handler did not return an object');
    const ops = jsonPatchDiff(original, mutated);
    if (ops.length === 0) return withWarnings({ allowed: true }, warnings);
    return withWarnings({ allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') }, warnings);
  };
}

/** How a handler's exception is answered: denials as asked, anything else as a failure (fail closed). */
export function errorResponse(err: unknown): AdmissionResponse {
  if (err instanceof AdmissionDeniedError) return { allowed: false, status: { code: err.code, reason: err.reason, message: err.message } };
  return { allowed: false, status: { code: 500, reason: 'InternalError', message: err instanceof Error ? err.message : String(err) } };
}

/** The `request` of an AdmissionReview body, or why there is none. */
export function parseAdmissionReview(body: string): { request: AdmissionRequest<unknown> } | { error: string } {
  let review: unknown;
  try {
    review = JSON.parse(body);
  } catch {
    return { error: 'the body is not JSON' };
  }
  if (!isRecord(review)) return { error: 'the body is not an AdmissionReview' };
  if (review['apiVersion'] !== ADMISSION_API_VERSION || review['kind'] !== 'AdmissionReview') {
    return { error: `expected an ${ADMISSION_API_VERSION} AdmissionReview, got ${String(review['apiVersion'])} ${String(review['kind'])}` };
  }
  const request = review['request'];
  if (!isRecord(request)) return { error: 'the AdmissionReview has no request' };
  if (typeof request['uid'] !== 'string' || !request['uid']) return { error: 'the request has no uid' };
  if (typeof request['operation'] !== 'string') return { error: 'the request has no operation' };
  // The API server sends null for an absent object; handlers see undefined.
  const { object, oldObject, ...rest } = request;
  return { request: { ...(rest as unknown as AdmissionRequest<unknown>), object: object ?? undefined, oldObject: oldObject ?? undefined } };
}

function isMutationResult(value: unknown): value is MutationResult<unknown> {
  return isRecord(value) && Object.hasOwn(value, 'object') && Object.keys(value).every((key) => key === 'object' || key === 'warnings');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function withWarnings(response: AdmissionResponse, warnings: string[] | undefined): AdmissionResponse {
  return warnings?.length ? { ...response, warnings } : response;
}
