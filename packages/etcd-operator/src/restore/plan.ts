// The EtcdRestore decision as a pure function, like the cluster's plan(): given the restore's recorded phase,
// the backup it names and the EtcdCluster of its clusterName, the one next step. The cluster is created once
// (it carries this restore's label and UID, so a crash after creating it finds it again) and is then only
// watched: it restores itself (spec.bootstrap.fromBackup), and its conditions say how that goes. The wait for
// the backup is bounded (spec.backupWaitSeconds, counted from the restore's creation): past it the restore fails.
import type { BackupPhase } from '../api/etcdbackup.ts';
import type { RestorePhase } from '../api/etcdrestore.ts';
import { formatAge } from '@quorum/kit';
import type { CredentialsRefusal } from '../backup/credentials.ts';

export interface RestoreObserved {
  phase: RestorePhase | undefined;
  /** status.clusterUID: the cluster this restore created, once recorded. */
  recordedClusterUID?: string;
  /** The named EtcdBackup (when spec.backupName is set): undefined when it does not exist. */
  backup?: { phase: BackupPhase | undefined; failure?: string };
  usesBackupName: boolean;
  cluster?: {
    uid: string;
    /** It carries this restore's label and UID: this restore created it. */
    createdByThisRestore: boolean;
    available: boolean;
    /** The Degraded condition's message when its reason is SnapshotRefused. */
    snapshotRefused?: string;
    /** What the cluster says it is doing (its Progressing condition). */
    progress?: string;
  };
  /** metadata.creationTimestamp (ms): the wait for the backup is counted from it. */
  createdAt: number;
  now: number;
  /** spec.backupWaitSeconds, in ms. */
  backupWaitMs: number;
  /** Why the snapshot's credentials Secret may not be mounted by the cluster's members (looked at before the cluster is created). */
  credentials?: CredentialsRefusal;
  /**
   * The snapshot has no SHA-256 to check it against: the source it comes from, named (spec.sha256 unset with a
   * destination and key, or the named EtcdBackup recorded none). Unset: it has one.
   */
  hashMissingFrom?: string;
}

/** How long a restore has waited for its backup, and how long it may (ms). */
export interface BackupWait {
  waitedMs: number;
  boundMs: number;
}

export type RestoreAction =
  | { type: 'done' }
  /** `backupWait` is set for the bounded wait for spec.backupName (BackupNotFound, BackupNotReady). */
  | { type: 'wait'; reason: string; message: string; backupWait?: BackupWait }
  | { type: 'createCluster' }
  | { type: 'restoring'; clusterUID: string; message: string }
  | { type: 'succeed'; clusterUID: string }
  | { type: 'fail'; reason: string; message: string; clusterUID?: string };

export function planRestore(o: RestoreObserved): RestoreAction {
  if (o.phase === 'Succeeded' || o.phase === 'Failed') return { type: 'done' };

  const { cluster } = o;
  if (cluster) {
    const ours = cluster.createdByThisRestore || (o.recordedClusterUID !== undefined && cluster.uid === o.recordedClusterUID);
    if (!ours) {
      return { type: 'wait', reason: 'ClusterExists', message: 'an EtcdCluster of spec.clusterName exists and was not created by this EtcdRestore: it is left alone; delete it, or restore under another name' };
    }
    if (cluster.snapshotRefused !== undefined) return { type: 'fail', reason: 'SnapshotRefused', message: cluster.snapshotRefused, clusterUID: cluster.uid };
    if (cluster.available) return { type: 'succeed', clusterUID: cluster.uid };
    return { type: 'restoring', clusterUID: cluster.uid, message: cluster.progress ?? 'the cluster members restore the snapshot' };
  }

  if (o.recordedClusterUID !== undefined) {
    return { type: 'fail', reason: 'ClusterDeleted', message: 'the EtcdCluster this restore created was deleted before it became Available', clusterUID: o.recordedClusterUID };
  }
  if (o.usesBackupName) {
    if (o.backup?.phase === 'Failed') return { type: 'fail', reason: 'BackupFailed', message: `the EtcdBackup named by spec.backupName failed${o.backup.failure ? `: ${o.backup.failure}` : ''}` };
    // Waiting here, not in a created cluster: a backup that then fails leaves no cluster behind. A backup that
    // has Succeeded is used even past the bound: the bound ends waiting, and there is nothing left to wait for.
    if (o.backup?.phase !== 'Succeeded') {
      const [reason, why] = !o.backup
        ? ['BackupNotFound', 'the EtcdBackup named by spec.backupName does not exist in this namespace']
        : ['BackupNotReady', `the EtcdBackup named by spec.backupName is ${o.backup.phase ?? 'Pending'}`];
      const wait = { waitedMs: Math.max(0, o.now - o.createdAt), boundMs: o.backupWaitMs };
      const spent = `waited ${formatAge(wait.waitedMs)} of the ${Math.round(wait.boundMs / 1000)} s spec.backupWaitSeconds allows`;
      // Exact seconds here, where the coarse age of the waiting message (which keeps status writes rare) could read as less than the bound.
      if (wait.waitedMs >= wait.boundMs) return { type: 'fail', reason: 'BackupWaitExceeded', message: `${why}: gave up after waiting ${Math.round(wait.waitedMs / 1000)} s (spec.backupWaitSeconds: ${Math.round(wait.boundMs / 1000)}); no cluster was created` };
      return { type: 'wait', reason, message: `${why} (${spent}); the cluster is created once it has Succeeded`, backupWait: wait };
    }
  }
  // No member restores a snapshot it cannot check: a hash the restore or its backup lacks now will not appear.
  if (o.hashMissingFrom) return { type: 'fail', reason: 'SnapshotHashMissing', message: `${o.hashMissingFrom} has no SHA-256 to check the snapshot against; no cluster was created` };
  // The members would mount the Secret with the operator's identity: only one marked for backups.
  if (o.credentials) return { type: 'fail', reason: o.credentials.reason, message: `${o.credentials.message}; no cluster was created` };
  return { type: 'createCluster' };
}
