// The EtcdRestore decision as a pure function, like the cluster's plan(): given the restore's recorded phase,
// the backup it names and the EtcdCluster of its clusterName, the one next step. The cluster is created once
// (it carries this restore's label and UID, so a crash after creating it finds it again) and is then only
// watched: it restores itself (spec.bootstrap.fromBackup), and its conditions say how that goes.
import type { BackupPhase } from '../api/etcdbackup.ts';
import type { RestorePhase } from '../api/etcdrestore.ts';

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
}

export type RestoreAction =
  | { type: 'done' }
  | { type: 'wait'; reason: string; message: string }
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
    if (!o.backup) return { type: 'wait', reason: 'BackupNotFound', message: 'the EtcdBackup named by spec.backupName does not exist in this namespace' };
    if (o.backup.phase === 'Failed') return { type: 'fail', reason: 'BackupFailed', message: `the EtcdBackup named by spec.backupName failed${o.backup.failure ? `: ${o.backup.failure}` : ''}` };
    // Waiting here, not in a created cluster: a backup that then fails leaves no cluster behind.
    if (o.backup.phase !== 'Succeeded') return { type: 'wait', reason: 'BackupNotReady', message: `the EtcdBackup named by spec.backupName is ${o.backup.phase ?? 'Pending'}; the cluster is created once it has Succeeded` };
  }
  return { type: 'createCluster' };
}
