// The history endpoint's protocol: JSON over HTTPS, read-only, under /v1. The recorder serves it (server.ts);
// `quorum history` reads it through the API server's service proxy, or runs the same handlers on a local
// copy of the records (--path). Every response body is one of the types below, or ErrorResponse.
import type { RecordMeta, RecordReason } from '../record/record-file.ts';

export const API_PREFIX = '/v1';

/**
 * The header that carries the caller's bearer token to the recorder. The API server's proxy authenticates
 * the caller, then removes `Authorization` before it forwards the request (kubernetes/kubernetes#38775), and
 * passes on no identity of its own: the CLI sends the token again in this header, and the recorder checks it
 * with a TokenReview.
 */
export const TOKEN_HEADER = 'x-quorum-authorization';

/** The recorder's Service and its port name: the CLI's defaults, the manifests' names. */
export const HISTORY_SERVICE = 'quorum-recorder';
export const HISTORY_PORT_NAME = 'history';
export const HISTORY_PORT = 8443;

/** A kind that has records, and whether its objects live in namespaces. */
export interface KindInfo {
  group: string;
  kind: string;
  namespaced: boolean;
}

/** One object, by kind and name; `namespace` is '' for cluster-scoped objects. */
export interface ObjectId {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

export interface RecordSummary {
  /** The store (a ChangeRecorder's storage path) the record is in. */
  store: string;
  /** The record's file name without `.yaml`: `<timestamp>-<resourceVersion>`. */
  id: string;
  reason: RecordReason;
  seenLate: boolean;
  recordedAt: string;
  resourceVersion: string;
  replacedBy?: string;
  changedBy?: RecordMeta['changedBy'];
  changedAt?: string;
}

export interface RecordDetail extends RecordSummary {
  cleaning: RecordMeta['cleaning'];
  diff?: string;
  diffOmitted?: string;
}

export interface ObjectSummary extends ObjectId {
  store: string;
  /** The recorder holds a last-seen copy: the object existed when it last looked. */
  live: boolean;
  records: number;
  newest?: RecordSummary;
}

/** Objects the caller may not see, by kind and namespace ('' for a cluster-scoped kind). */
export interface DeniedScope {
  group: string;
  kind: string;
  namespace: string;
  reason: string;
}

export interface KindsResponse {
  kinds: KindInfo[];
}

export interface ObjectsResponse {
  objects: ObjectSummary[];
  /** Scopes that hold records the caller was not allowed to list. */
  denied: DeniedScope[];
}

export interface LastSeenSummary {
  store: string;
  resourceVersion: string;
  seenAt: string;
}

export interface RecordsResponse {
  object: ObjectId;
  /** Oldest first, every store together. */
  records: RecordSummary[];
  /** One per store that saw the object alive last time it looked. */
  lastSeen: LastSeenSummary[];
}

export interface RecordResponse {
  object: ObjectId;
  record: RecordDetail;
  /** The recorded object as YAML, cleaned to be re-applied. */
  yaml: string;
}

export interface DiffResponse {
  object: ObjectId;
  from: string;
  to: string;
  /** Unified diff; '' when both sides are the same. */
  diff: string;
  /** Why there is no diff to show (too large when recorded). */
  note?: string;
}

export interface ErrorResponse {
  error: string;
}

/** Query parameter values of the diff endpoint's `to`, beside a record ID. */
export const DIFF_TO_CURRENT = 'current';
