// Why a backup, fetch or delete failed, as one machine-readable reason (the EtcdBackup condition's reason)
// and one message a person can act on.
import { StorageError, type StorageFailureReason } from '@quorum/storage';
import { EtcdError, EtcdUnavailableError, QuorumUnavailableError } from '../etcd/errors.ts';
import { SnapshotError, type SnapshotFailureReason } from './snapshot.ts';

export type AgentFailureReason =
  | StorageFailureReason
  | SnapshotFailureReason
  /** The member could not be reached for its status. */
  | 'EtcdUnreachable'
  /** The backup took longer than its size allows. */
  | 'Timeout'
  /** The agent was stopped (SIGTERM: the Job's deadline passed or its pod was deleted). */
  | 'Interrupted'
  /** The command line is wrong: a bug in the Job the operator made, or a hand-run agent. */
  | 'InvalidArguments'
  /** Anything else; the message says what. */
  | 'BackupFailed';

/** A failure the agent itself decides on (no quorum, a timeout, bad arguments). */
export class AgentFailure extends Error {
  readonly reason: AgentFailureReason;
  constructor(reason: AgentFailureReason, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'AgentFailure';
    this.reason = reason;
  }
}

export interface Failure {
  reason: AgentFailureReason;
  message: string;
}

/** Any error as a reason and message; `what` says which step it came from, for errors that do not. */
export function describeFailure(err: unknown, what: string): Failure {
  if (err instanceof AgentFailure || err instanceof StorageError || err instanceof SnapshotError) return { reason: err.reason, message: err.message };
  if (err instanceof EtcdUnavailableError) return { reason: 'EtcdUnreachable', message: `${what}: cannot reach etcd: ${err.message}` };
  if (err instanceof QuorumUnavailableError) return { reason: 'NoQuorum', message: `no quorum: ${what}: ${err.message}` };
  if (err instanceof EtcdError) return { reason: 'SnapshotFailed', message: `${what}: ${err.message}` };
  return { reason: 'BackupFailed', message: `${what}: ${err instanceof Error ? err.message : String(err)}` };
}
