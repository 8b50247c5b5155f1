// The EtcdRestore reconciler: observe (the restore, its backup, the EtcdCluster of its clusterName), plan
// (plan.ts), act (create the cluster with spec.bootstrap.fromBackup, once), report (phase and conditions,
// written only when they changed). The cluster is not owned by the restore: deleting the restore record
// keeps the cluster; the label etcd.quorum.dev/restore says where it came from. The wait for the backup has
// a bound and a voice, as a cluster's steps do: the condition says why and for how long at once, a Warning
// event and warn logs follow after 30 s, a gauge tells the time waited, and past the bound it fails.
import { StepVoice, writeStatus } from '@quorum/kit';
import { AlreadyExistsError, setCondition, type Client, type EventRecorder, type Informer, type Reconciler, type Result } from '@quorum/runtime';
import type { EtcdBackup } from '../api/etcdbackup.ts';
import { API_VERSION, KIND, type EtcdCluster, type FromBackup } from '../api/etcdcluster.ts';
import { DEFAULT_BACKUP_WAIT_SECONDS, type EtcdRestore, type EtcdRestoreStatus, type RestoreCondition } from '../api/etcdrestore.ts';
import { FIELD_MANAGER } from '../names.ts';
import { EtcdClusters, EtcdRestores } from '../resources.ts';
import { checkCredentials } from '../backup/credentials.ts';
import { planRestore, type RestoreAction } from './plan.ts';

/** On an EtcdCluster an EtcdRestore created: the restore's name. */
export const RESTORE_LABEL = 'etcd.quorum.dev/restore';
/** ... and its UID: a later restore of the same name does not take the cluster over. */
export const RESTORE_UID_ANNOTATION = 'etcd.quorum.dev/restore-uid';
/** How often a waiting restore looks again when nothing wakes it (its backup's and cluster's events do). */
const WAIT_RESYNC_MS = 30_000;

export interface RestoreMetrics {
  /** A restore waiting for its backup: why, for how long, and how long it may (seconds). */
  waiting(labels: { namespace: string; restore: string }, wait: { reason: string; seconds: number; boundSeconds: number }): void;
  /** It does not wait for its backup (any more), or it is gone. */
  notWaiting(labels: { namespace: string; restore: string }): void;
  failed(labels: { namespace: string; cluster: string; reason: string }): void;
}

export interface RestoreReconcilerDeps {
  client: Client;
  restores: Pick<Informer<EtcdRestore>, 'store'>;
  clusters: Pick<Informer<EtcdCluster>, 'store'>;
  backups: Pick<Informer<EtcdBackup>, 'store'>;
  events: Pick<EventRecorder, 'record'>;
  metrics?: RestoreMetrics;
  now?: () => Date;
  afterWrite?: (what: string) => Promise<void> | void;
}

/** The EtcdCluster a restore creates. */
export function restoredCluster(restore: EtcdRestore): EtcdCluster {
  const { spec } = restore;
  const fromBackup: FromBackup = spec.backupName
    ? { backupName: spec.backupName }
    : { destination: spec.destination!, key: spec.key!, ...(spec.sha256 ? { sha256: spec.sha256 } : {}) };
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: {
      name: spec.clusterName,
      namespace: restore.metadata.namespace!,
      labels: { [RESTORE_LABEL]: restore.metadata.name! },
      annotations: { [RESTORE_UID_ANNOTATION]: restore.metadata.uid ?? '' },
    },
    spec: { ...spec.clusterSpec, bootstrap: { fromBackup } },
  };
}

export function etcdRestoreReconciler(deps: RestoreReconcilerDeps): Reconciler {
  // Per restore, the wait reason its Warning event was emitted for, and when it last logged a warn line:
  // the voice of a wait is rationed, not repeated on every reconcile.
  const voice = new StepVoice({ retryingReason: 'RestoreWaiting' });
  return async ({ namespace, name }, { signal, log }): Promise<Result> => {
    const key = `${namespace}/${name}`;
    const labels = { namespace, restore: name };
    const restore = deps.restores.store.get(key);
    const status = restore?.status ?? {};
    if (!restore || restore.metadata.deletionTimestamp || status.phase === 'Succeeded' || status.phase === 'Failed') {
      voice.forget(key);
      deps.metrics?.notWaiting(labels);
      return {};
    }
    const now = deps.now?.() ?? new Date();
    const { spec } = restore;

    // ---- observe ----
    const backup = spec.backupName ? deps.backups.store.get(`${namespace}/${spec.backupName}`) : undefined;
    const cluster = deps.clusters.store.get(`${namespace}/${spec.clusterName}`);
    const condition = (c: EtcdCluster, type: string): { status: string; reason: string; message: string } | undefined => c.status?.conditions?.find((x) => x.type === type);
    const refused = cluster && condition(cluster, 'Degraded');
    const backupFailure = backup?.status?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
    // The snapshot's credentials Secret, looked at only while the cluster is still to be created.
    const source = spec.backupName ? (backup?.status?.phase === 'Succeeded' ? backup.spec.destination : undefined) : spec.destination;
    const credentials = !cluster && !status.clusterUID ? await checkCredentials(deps.client, namespace, source, signal) : undefined;
    const hashMissingFrom = spec.backupName
      ? (backup?.status?.phase === 'Succeeded' && !backup.status.sha256 ? `EtcdBackup ${spec.backupName} (it recorded no status.sha256)` : undefined)
      : (!spec.sha256 ? 'the snapshot of spec.destination and spec.key (spec.sha256 is unset)' : undefined);

    // ---- plan ----
    const action = planRestore({
      phase: status.phase,
      ...(status.clusterUID ? { recordedClusterUID: status.clusterUID } : {}),
      usesBackupName: !!spec.backupName,
      ...(backup ? { backup: { phase: backup.status?.phase, ...(backupFailure ? { failure: `${backupFailure.reason}: ${backupFailure.message}` } : {}) } } : {}),
      ...(cluster
        ? {
            cluster: {
              uid: cluster.metadata.uid ?? '',
              createdByThisRestore: cluster.metadata.labels?.[RESTORE_LABEL] === name && cluster.metadata.annotations?.[RESTORE_UID_ANNOTATION] === restore.metadata.uid,
              available: condition(cluster, 'Available')?.status === 'True',
              ...(refused?.status === 'True' && refused.reason === 'SnapshotRefused' ? { snapshotRefused: refused.message } : {}),
              ...(condition(cluster, 'Progressing')?.message ? { progress: condition(cluster, 'Progressing')!.message } : {}),
            },
          }
        : {}),
      createdAt: Date.parse(restore.metadata.creationTimestamp ?? '') || now.getTime(),
      now: now.getTime(),
      backupWaitMs: (spec.backupWaitSeconds ?? DEFAULT_BACKUP_WAIT_SECONDS) * 1000,
      ...(credentials ? { credentials } : {}),
      ...(hashMissingFrom ? { hashMissingFrom } : {}),
    });

    // ---- act ----
    const event = (type: 'Normal' | 'Warning', reason: string, note: string): void => deps.events.record(restore, { type, reason, action: reason, note });
    let startedNow = false;
    if (action.type === 'createCluster') {
      try {
        await deps.client.create(EtcdClusters, restoredCluster(restore), { fieldManager: FIELD_MANAGER, signal });
        await deps.afterWrite?.(`create EtcdCluster ${spec.clusterName}`);
        startedNow = true;
        event('Normal', 'RestoreStarted', `created EtcdCluster ${spec.clusterName} from ${spec.backupName ? `backup ${spec.backupName}` : spec.key}`);
        log.info({ restore: name, cluster: spec.clusterName }, 'restore started: cluster created');
      } catch (err) {
        // Created before a crash, or not in the cache yet: the next reconcile sees it and checks it is ours.
        if (!(err instanceof AlreadyExistsError)) throw err;
      }
    }

    // ---- report ----
    const next = restoreStatus(status, action, { generation: restore.metadata.generation ?? 0, now, startedNow });
    if (await writeStatus(deps.client, EtcdRestores, { namespace, name }, status, next, { fieldManager: FIELD_MANAGER, signal })) {
      await deps.afterWrite?.(`restore status ${next.phase ?? ''}`);
      const previousReason = status.conditions?.find((c) => c.type === 'Complete')?.reason;
      if (action.type === 'succeed') {
        event('Normal', 'RestoreSucceeded', `EtcdCluster ${spec.clusterName} is Available`);
        log.info({ restore: name, cluster: spec.clusterName }, 'restore succeeded');
      } else if (action.type === 'fail') {
        event('Warning', 'RestoreFailed', `${action.reason}: ${action.message}`);
        log.warn({ restore: name, cluster: spec.clusterName, reason: action.reason }, `restore failed: ${action.message}`);
        deps.metrics?.failed({ namespace, cluster: spec.clusterName, reason: action.reason });
      } else if (action.type === 'wait' && action.reason === 'ClusterExists' && previousReason !== 'ClusterExists') {
        event('Warning', 'RestoreRefused', action.message);
        log.warn({ restore: name, cluster: spec.clusterName }, action.message);
      }
    }
    const wait = action.type === 'wait' ? action.backupWait : undefined;
    if (action.type === 'wait' && wait) {
      const seconds = Math.round(wait.waitedMs / 1000);
      const boundSeconds = Math.round(wait.boundMs / 1000);
      deps.metrics?.waiting(labels, { reason: action.reason, seconds, boundSeconds });
      voice.repeated(
        { key, step: action.reason, ageMs: wait.waitedMs, now, message: action.message, fields: { restore: name, cluster: spec.clusterName, reason: action.reason, boundSeconds } },
        { warning: (reason, note) => event('Warning', reason, note), warn: (fields, message) => log.warn(fields, message) },
      );
    } else {
      deps.metrics?.notWaiting(labels);
    }
    if (action.type === 'done' || action.type === 'succeed' || action.type === 'fail') {
      voice.forget(key);
      return {};
    }
    // The cluster's and the backup's events wake this up; the requeue is a safety net, and the bound's
    // instant, when it comes sooner, so that the restore fails on time.
    if (wait) return { requeueAfter: Math.max(1000, Math.min(WAIT_RESYNC_MS, wait.boundMs - wait.waitedMs)) };
    return { requeueAfter: action.type === 'createCluster' ? 1000 : WAIT_RESYNC_MS };
  };
}

export function restoreStatus(status: EtcdRestoreStatus, action: RestoreAction, context: { generation: number; now: Date; startedNow: boolean }): EtcdRestoreStatus {
  const at = context.now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const set = (list: RestoreCondition[], type: string, value: 'True' | 'False', reason: string, message: string): RestoreCondition[] =>
    setCondition(list, { type, status: value, reason, message, observedGeneration: context.generation }, context.now);
  const base = status.conditions ?? [];
  const common = { ...status, observedGeneration: context.generation };
  switch (action.type) {
    case 'done':
      return status;
    case 'wait':
      return { ...common, phase: 'Pending', conditions: set(base, 'Complete', 'False', action.reason, action.message) };
    case 'createCluster':
      return { ...common, phase: context.startedNow ? 'Restoring' : (status.phase ?? 'Pending'), ...(context.startedNow ? { startedAt: at } : {}), conditions: set(base, 'Complete', 'False', 'ClusterCreated', 'the EtcdCluster was created; its members restore the snapshot before etcd starts') };
    case 'restoring':
      return { ...common, phase: 'Restoring', clusterUID: action.clusterUID, ...(status.startedAt ? {} : { startedAt: at }), conditions: set(base, 'Complete', 'False', 'Restoring', action.message) };
    case 'succeed':
      return {
        ...common,
        phase: 'Succeeded',
        clusterUID: action.clusterUID,
        completedAt: at,
        conditions: set(set(base, 'Complete', 'True', 'ClusterAvailable', 'the restored EtcdCluster is Available'), 'Failed', 'False', 'ClusterAvailable', 'the restore succeeded'),
      };
    case 'fail':
      return {
        ...common,
        phase: 'Failed',
        ...(action.clusterUID ? { clusterUID: action.clusterUID } : {}),
        completedAt: at,
        conditions: set(set(base, 'Failed', 'True', action.reason, action.message), 'Complete', 'False', action.reason, action.message),
      };
  }
}
