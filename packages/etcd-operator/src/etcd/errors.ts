// etcd client errors as types. The split that matters: EtcdError means etcd answered and said no;
// EtcdUnavailableError means no answer came back, which says nothing about whether the member is alive
// (nor, for a write, whether it was applied).

/** gRPC status codes, as the JSON gateway reports them in `code`. */
export const GrpcCode = {
  OK: 0,
  Canceled: 1,
  Unknown: 2,
  InvalidArgument: 3,
  DeadlineExceeded: 4,
  NotFound: 5,
  AlreadyExists: 6,
  PermissionDenied: 7,
  ResourceExhausted: 8,
  FailedPrecondition: 9,
  Aborted: 10,
  OutOfRange: 11,
  Unimplemented: 12,
  Internal: 13,
  Unavailable: 14,
  DataLoss: 15,
  Unauthenticated: 16,
} as const;

/** etcd answered with an error (the gateway's `{"code":…,"message":…}` body). */
export class EtcdError extends Error {
  readonly endpoint: string;
  readonly path: string;
  /** gRPC status code (see GrpcCode). */
  readonly code: number;
  /** HTTP status of the gateway's answer. */
  readonly httpStatus: number;
  /** etcd's own message, e.g. "etcdserver: member not found". */
  readonly etcdMessage: string;
  constructor(endpoint: string, path: string, httpStatus: number, code: number, etcdMessage: string) {
    super(`${endpoint} ${path}: ${etcdMessage} (code ${code})`);
    this.name = new.target.name;
    this.endpoint = endpoint;
    this.path = path;
    this.code = code;
    this.httpStatus = httpStatus;
    this.etcdMessage = etcdMessage;
  }
}

/** Promote refused: the learner has not caught up with the leader's log yet. Retry later. */
export class LearnerNotReadyError extends EtcdError {}
/** The member ID is not (or no longer) in the cluster; after an unanswered remove, this means it was applied. */
export class MemberNotFoundError extends EtcdError {}
/** The call (move-leader) must be sent to the current leader and this member is not it. */
export class NotLeaderError extends EtcdError {}
/**
 * A membership change refused by etcd's strict reconfiguration check: not every voting member has been
 * connected to the leader for the last 5 s, or the change would leave too few started members. Retry later.
 */
export class UnhealthyClusterError extends EtcdError {}
/**
 * A member that answered could not get its quorum's answer: it knows no leader, the leader changed under the
 * request, or raft did not answer within etcd's own request timeout ("etcdserver: request timed out", also
 * with "possibly due to previous leader failure" or "connection lost"). Evidence about the cluster from a
 * member that is up, unlike an EtcdUnavailableError; a write refused this way may still be applied.
 */
export class QuorumUnavailableError extends EtcdError {}

export type UnavailableReason = 'timeout' | 'refused' | 'reset' | 'tls' | 'network';

/**
 * No answer from etcd: connection refused or reset, TLS failure, or no reply within the timeout.
 * The member may still be alive, and a write may or may not have been applied.
 */
export class EtcdUnavailableError extends Error {
  readonly endpoint: string;
  readonly path: string;
  readonly reason: UnavailableReason;
  constructor(endpoint: string, path: string, reason: UnavailableReason, detail: string, cause?: unknown) {
    super(`${endpoint} ${path}: etcd unavailable (${reason}): ${detail}`, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
    this.endpoint = endpoint;
    this.path = path;
    this.reason = reason;
  }
}

/** Something answered, but not with what the etcd gateway sends (a proxy's page, malformed JSON). */
export class EtcdProtocolError extends Error {
  readonly endpoint: string;
  readonly path: string;
  readonly httpStatus: number;
  constructor(endpoint: string, path: string, httpStatus: number, detail: string) {
    super(`${endpoint} ${path}: unexpected response (HTTP ${httpStatus}): ${detail}`);
    this.name = new.target.name;
    this.endpoint = endpoint;
    this.path = path;
    this.httpStatus = httpStatus;
  }
}

// Matched on etcd's message text: the gateway only carries the gRPC code, which several errors share.
const TYPED: readonly [string, typeof EtcdError][] = [
  ['can only promote a learner member which is in sync with leader', LearnerNotReadyError],
  ['member not found', MemberNotFoundError],
  ['etcdserver: not leader', NotLeaderError],
  ['etcdserver: unhealthy cluster', UnhealthyClusterError],
  ['re-configuration failed due to not enough started members', UnhealthyClusterError],
  ['etcdserver: no leader', QuorumUnavailableError],
  ['etcdserver: leader changed', QuorumUnavailableError],
  // Timeouts that are not about the quorum, matched before the general one below: this member applying
  // its log slowly, and a leadership transfer (a request only the leader serves).
  ['etcdserver: request timed out, waiting for the applied index took too long', EtcdError],
  ['etcdserver: request timed out, leader transfer took too long', EtcdError],
  ['etcdserver: request timed out', QuorumUnavailableError],
];

export function etcdError(endpoint: string, path: string, httpStatus: number, code: number, message: string): EtcdError {
  for (const [text, Type] of TYPED) {
    if (message.includes(text)) return new Type(endpoint, path, httpStatus, code, message);
  }
  return new EtcdError(endpoint, path, httpStatus, code, message);
}

export const isEtcdUnavailable = (err: unknown): err is EtcdUnavailableError => err instanceof EtcdUnavailableError;
