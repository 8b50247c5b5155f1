// The EtcdBackup decision as a pure function, like the cluster's plan(): given the backup's recorded phase,
// the cluster's members as etcd reports them and the backup Job, the one next step. A backup is one attempt:
// the Job never retries (backoffLimit 0), so a stored snapshot is never written twice.
import type { BackupPhase } from '../api/etcdbackup.ts';
import { jobNameTaken, type ForeignJob } from '@quorum/kit';
import type { CredentialsRefusal } from './credentials.ts';

export type { ForeignJob } from '@quorum/kit';

export interface ObservedMember {
  name: string;
  /** Its own status answered just now. */
  healthy: boolean;
  leader: boolean;
  learner: boolean;
  /** Whether it knows a leader (a member without one is cut off from the quorum). */
  hasLeader: boolean;
  /** raftAppliedIndex (3.5+) or raftIndex, as a decimal string. */
  appliedIndex: string;
  dbSize: number;
}

/** What the agent wrote as its termination message (one JSON line), parsed. */
export type AgentResult =
  | { ok: true; key: string; location: string; sizeBytes: number; sha256: string; revision: string; etcdVersion: string; member: string; startedAt: string; completedAt: string }
  | { ok: false; reason: string; message: string };

export interface ObservedJob {
  /** The Job's pod ran to success: its container exited 0, or the Job says Complete. */
  succeeded: boolean;
  /** The Job failed (its pod failed, or activeDeadlineSeconds passed). */
  failed: boolean;
  /** The Job's own failure message (e.g. DeadlineExceeded), when it failed. */
  failureMessage?: string;
  result?: AgentResult;
  /** Why the pod cannot start (e.g. `CreateContainerConfigError: secret "x" not found`), and since when (ms). */
  cannotStart?: { message: string; since: number };
}

export interface BackupObserved {
  phase: BackupPhase | undefined;
  /** The member recorded when the Job was made. */
  recordedMember?: string;
  clusterExists: boolean;
  /** Undefined when the cluster exists but no member answered. */
  members: ObservedMember[];
  job: ObservedJob | undefined;
  now: number;
  /** How long a Job's pod may be unable to start before the backup fails. */
  cannotStartGraceMs: number;
  /** Why the destination's credentials Secret may not be mounted (checked only while no Job exists). */
  credentials?: CredentialsRefusal;
  /** A Job at this backup's Job name that the backup does not control: never read, adopted or deleted. */
  foreignJob?: ForeignJob;
}

export type BackupAction =
  | { type: 'startJob'; member: string; dbSize: number }
  | { type: 'succeed'; result: Extract<AgentResult, { ok: true }> }
  | { type: 'fail'; reason: string; message: string }
  | { type: 'wait'; reason: string; message: string; requeueAfterMs: number }
  | { type: 'done' };

/** BigInt comparison of decimal strings (raft indexes are uint64). */
function newer(a: string, b: string): boolean {
  return BigInt(a || '0') > BigInt(b || '0');
}

/**
 * The member to snapshot: a healthy follower with the newest applied index (the snapshot then holds the
 * most, and the leader, which every write goes through, is not slowed down); the leader only when it is
 * the one voting member that serves.
 */
export function pickMember(members: ObservedMember[]): ObservedMember | undefined {
  const serving = members.filter((m) => m.healthy && m.hasLeader && !m.learner);
  const followers = serving.filter((m) => !m.leader);
  const pool = followers.length > 0 ? followers : serving;
  return pool.reduce<ObservedMember | undefined>((best, m) => (!best || newer(m.appliedIndex, best.appliedIndex) ? m : best), undefined);
}

export function planBackup(o: BackupObserved): BackupAction {
  if (o.phase === 'Succeeded' || o.phase === 'Failed') return { type: 'done' };

  if (o.phase === 'Running' && o.job) {
    const { job } = o;
    if (job.result?.ok === false) return { type: 'fail', reason: job.result.reason, message: job.result.message };
    if (job.succeeded) {
      if (job.result?.ok) return { type: 'succeed', result: job.result };
      return { type: 'fail', reason: 'NoResult', message: 'the backup Job succeeded but its pod left no result (termination message)' };
    }
    if (job.failed) return { type: 'fail', reason: 'JobFailed', message: job.failureMessage ?? 'the backup Job failed without a message' };
    if (job.cannotStart) {
      const waited = o.now - job.cannotStart.since;
      if (waited >= o.cannotStartGraceMs) return { type: 'fail', reason: 'JobCannotStart', message: `the backup Job's pod could not start for ${Math.round(waited / 1000)} s: ${job.cannotStart.message}` };
      return { type: 'wait', reason: 'JobCannotStart', message: `the backup Job's pod cannot start: ${job.cannotStart.message}`, requeueAfterMs: 5000 };
    }
    return { type: 'wait', reason: 'Streaming', message: `the backup Job streams the snapshot from ${o.recordedMember ?? 'a member'}`, requeueAfterMs: 5000 };
  }

  // No Job mounts a Secret its owner did not mark for backups (the webhook's access check may have been skipped).
  if (o.credentials) return { type: 'fail', reason: o.credentials.reason, message: o.credentials.message };
  if (!o.clusterExists) return { type: 'fail', reason: 'ClusterNotFound', message: 'the EtcdCluster named by spec.clusterName does not exist in this namespace' };
  if (o.foreignJob) return jobNameTaken(o.foreignJob, o.now, 'EtcdBackup');
  // Running without a Job: the operator stopped between recording Running and creating it. Creating it now
  // is safe: no snapshot was stored (only the Job stores one, once).
  if (o.phase === 'Running' && o.recordedMember) {
    const recorded = o.members.find((m) => m.name === o.recordedMember);
    return { type: 'startJob', member: o.recordedMember, dbSize: recorded?.dbSize ?? 0 };
  }
  const member = pickMember(o.members);
  if (!member) {
    const answered = o.members.filter((m) => m.healthy);
    const detail = o.members.length === 0 ? 'no member answered' : answered.length === 0 ? 'no member answered its status' : `members that answered know no leader: ${answered.map((m) => m.name).join(', ')}`;
    return { type: 'fail', reason: 'NoQuorum', message: `no quorum: the cluster cannot serve a consistent snapshot (${detail})` };
  }
  return { type: 'startJob', member: member.name, dbSize: member.dbSize };
}
