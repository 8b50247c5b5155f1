// The EtcdBackupSchedule reconciler: observe (the schedule, its EtcdBackups, the Jobs deleting expired stored
// backups), plan (plan.ts: one step), act (create a backup, start or retry a delete Job, delete a record),
// report (the status, written only when it changed, and the metrics), then requeue at the next scheduled time.
import { DEFAULT_PRUNE_RETRY_MS, durationMs, expiredBackups, foreignJobOf, observeScheduledBackup, planSchedule, scheduledBackupName, scheduleHashSeed, writeStatus, type ForeignJob, type PruneJob, type ScheduleAction, type ScheduledBackup } from '@quorum/kit';
import { AlreadyExistsError, NotFoundError, type Client, type EventRecorder, type Informer, type Job, type Pod, type Reconciler, type Result } from '@quorum/runtime';
import type { EtcdBackup } from '../api/etcdbackup.ts';
import { SCHEDULE_API_VERSION, SCHEDULE_KIND, type EtcdBackupSchedule } from '../api/etcdbackupschedule.ts';
import { FIELD_MANAGER } from '../names.ts';
import { EtcdBackupSchedules, EtcdBackups, Jobs } from '../resources.ts';
import { scheduleTimes, skippedTimes, type ScheduleLabels, type ScheduleMetrics, type SkipReason } from './metrics.ts';
import { scheduleStatus } from './plan.ts';
import { podsOfJob } from '../backup/job.ts';
import { isOwnPruneJob, observePruneJob, pruneJob, pruneJobName, SCHEDULE_LABEL, SCHEDULED_AT_ANNOTATION } from './prune-job.ts';

export interface ScheduleReconcilerDeps {
  client: Client;
  schedules: Pick<Informer<EtcdBackupSchedule>, 'store'>;
  backups: Pick<Informer<EtcdBackup>, 'store'>;
  jobs: Pick<Informer<Job>, 'store'>;
  pods: Pick<Informer<Pod>, 'store'>;
  events: Pick<EventRecorder, 'record'>;
  /** The image the delete Jobs run: the operator's own (it carries the agent). */
  agentImage: string;
  metrics?: ScheduleMetrics;
  now?: () => Date;
  pruneRetryMs?: number;
  /** Test hook: called after every write (failpoints). */
  afterWrite?: (what: string) => Promise<void> | void;
}

export { scheduledBackupName } from '@quorum/kit';

/**
 * The prune Jobs of the schedule's backups, by backup UID: only a Job a backup controls (isOwnPruneJob) is its
 * prune Job; another at that name is foreign, never read nor deleted. The cache holds only Jobs with the
 * operator's labels, so for an expired backup whose Job is not there the API is asked: a Job without them would
 * otherwise meet every create with AlreadyExists, unseen.
 */
async function observePruneJobs(deps: ScheduleReconcilerDeps, namespace: string, owned: EtcdBackup[], expired: ScheduledBackup[], now: number, signal: AbortSignal): Promise<{ pruneJobs: Map<string, PruneJob>; foreignPruneJobs: Map<string, ForeignJob> }> {
  const pruneJobs = new Map<string, PruneJob>();
  const foreignPruneJobs = new Map<string, ForeignJob>();
  const toPrune = new Set(expired.filter((b) => b.phase === 'Succeeded' && b.key && !b.deleting).map((b) => b.uid));
  for (const backup of owned) {
    const uid = backup.metadata.uid ?? '';
    const key = { namespace, name: pruneJobName(backup) };
    const job = deps.jobs.store.get(`${namespace}/${key.name}`) ?? (toPrune.has(uid) ? await jobNamed(deps.client, key, signal) : undefined);
    if (!job) continue;
    if (isOwnPruneJob(job, backup)) pruneJobs.set(uid, observePruneJob(job, podsOfJob(job, deps.pods.store.byIndex('namespace', namespace))));
    else foreignPruneJobs.set(uid, foreignJobOf(job, now));
  }
  return { pruneJobs, foreignPruneJobs };
}

/** The Job of that name, asked of the API by a list with a name field selector: the operator's role lists Jobs, it does not get them. */
async function jobNamed(client: Client, key: { namespace: string; name: string }, signal: AbortSignal): Promise<Job | undefined> {
  const list = await client.list(Jobs, { namespace: key.namespace, fieldSelector: `metadata.name=${key.name}`, signal });
  return list.items[0];
}

export function etcdBackupScheduleReconciler(deps: ScheduleReconcilerDeps): Reconciler {
  // The labels each schedule's series were last set under: a deleted schedule (or a changed clusterName)
  // must not leave gauges behind, and its cluster is not known any more once it is gone.
  const labelled = new Map<string, ScheduleLabels>();
  const forget = (key: string): void => {
    const labels = labelled.get(key);
    if (labels) deps.metrics?.forget(labels);
    labelled.delete(key);
  };
  return async ({ namespace, name }, { signal, log }): Promise<Result> => {
    const key = `${namespace}/${name}`;
    const schedule = deps.schedules.store.get(key);
    if (!schedule || schedule.metadata.deletionTimestamp) {
      forget(key);
      return {};
    }
    const now = deps.now?.() ?? new Date();
    const { spec } = schedule;
    const status = schedule.status ?? {};
    const labels: ScheduleLabels = { namespace, schedule: name, cluster: spec.clusterName };
    if (labelled.get(key)?.cluster !== labels.cluster) forget(key);
    labelled.set(key, labels);

    // ---- observe ----
    const owned = deps.backups.store
      .byIndex('namespace', namespace)
      .filter((b) => b.metadata.labels?.[SCHEDULE_LABEL] === name && b.metadata.ownerReferences?.some((o) => o.uid === schedule.metadata.uid));
    const byName = new Map(owned.map((b) => [b.metadata.name!, b]));
    const backups = owned.map((b) => observeScheduledBackup(b, SCHEDULED_AT_ANNOTATION));
    const maxAgeMs = spec.retention?.maxAge ? durationMs(spec.retention.maxAge) : undefined;
    const retention = { ...(spec.retention?.maxCount !== undefined ? { maxCount: spec.retention.maxCount } : {}), ...(maxAgeMs !== undefined ? { maxAgeMs } : {}) };
    const { pruneJobs, foreignPruneJobs } = await observePruneJobs(deps, namespace, owned, expiredBackups(backups, retention, now.getTime()), now.getTime(), signal);
    const lastScheduleTime = status.lastScheduleTime ? Date.parse(status.lastScheduleTime) : NaN;
    const observed = {
      schedule: spec.schedule,
      hashSeed: scheduleHashSeed(namespace, name),
      suspend: spec.suspend ?? false,
      retention,
      createdAt: Date.parse(schedule.metadata.creationTimestamp ?? '') || 0,
      ...(Number.isFinite(lastScheduleTime) ? { lastScheduleTime } : {}),
      backups,
      pruneJobs,
      foreignPruneJobs,
      now: now.getTime(),
      pruneRetryMs: deps.pruneRetryMs ?? DEFAULT_PRUNE_RETRY_MS,
    };

    // ---- plan ----
    const action = planSchedule(observed);

    // ---- act ----
    const event = (type: 'Normal' | 'Warning', reason: string, note: string): void => deps.events.record(schedule, { type, reason, action: reason, note });
    let createdBackup: string | undefined;
    // The backup was created by this reconcile, not found there already (AlreadyExists): skipped times are counted once.
    let createdNow = false;
    const result = await act(action);

    // ---- report ----
    const next = scheduleStatus(observed, action, status, { generation: schedule.metadata.generation ?? 0, clusterName: spec.clusterName, ...(createdBackup ? { createdBackup } : {}) });
    deps.metrics?.times(labels, scheduleTimes(next));
    if (action.type === 'createBackup' && createdNow) {
      const wasSuspended = status.conditions?.find((c) => c.type === 'Ready')?.reason === 'Suspended';
      for (const [reason, count] of Object.entries(skippedTimes(observed, action.scheduledAt, wasSuspended)) as [SkipReason, number][]) {
        deps.metrics?.skipped(labels, reason, count);
        // Forbid and Suspended are the schedule doing what its spec says; Missed are backups that should have happened.
        const line = `${count} scheduled time(s) before ${new Date(action.scheduledAt).toISOString()} passed without a backup (${reason})`;
        if (reason === 'Missed') log.warn({ schedule: name, cluster: spec.clusterName, reason, count }, line);
        else log.info({ schedule: name, cluster: spec.clusterName, reason, count }, line);
      }
    }
    if (next.lastFailure && next.lastFailure.time !== status.lastFailure?.time) {
      event('Warning', 'ScheduledBackupFailed', `backup ${next.lastFailure.backup} of ${spec.clusterName} failed: ${next.lastFailure.reason}: ${next.lastFailure.message}`);
      log.warn({ schedule: name, cluster: spec.clusterName, backup: next.lastFailure.backup, reason: next.lastFailure.reason }, `scheduled backup failed: ${next.lastFailure.message}`);
    }
    const ready = next.conditions?.find((c) => c.type === 'Ready');
    if (ready?.reason === 'InvalidSchedule' && status.conditions?.find((c) => c.type === 'Ready')?.reason !== 'InvalidSchedule') {
      event('Warning', 'BackupScheduleInvalid', ready.message);
      log.warn({ schedule: name }, ready.message);
    }
    const retentionNow = next.conditions?.find((c) => c.type === 'RetentionFailing');
    const retentionBefore = status.conditions?.find((c) => c.type === 'RetentionFailing');
    if (retentionNow?.status === 'True' && (retentionBefore?.status !== 'True' || retentionBefore.reason !== retentionNow.reason)) {
      event('Warning', retentionNow.reason === 'JobNameTaken' ? 'BackupPruneJobNameTaken' : 'BackupPruneFailed', retentionNow.message);
      log.warn({ schedule: name, reason: retentionNow.reason }, retentionNow.message);
    }
    if (await writeStatus(deps.client, EtcdBackupSchedules, { namespace, name }, status, next, { fieldManager: FIELD_MANAGER, signal })) {
      await deps.afterWrite?.('schedule status');
    }
    return result;

    async function act(a: ScheduleAction): Promise<Result> {
      switch (a.type) {
        case 'invalid':
          return {};
        case 'idle':
          return a.requeueAfterMs === undefined ? {} : { requeueAfter: a.requeueAfterMs };
        case 'createBackup': {
          const backupName = scheduledBackupName(name, a.scheduledAt);
          const when = new Date(a.scheduledAt).toISOString();
          try {
            await deps.client.create(
              EtcdBackups,
              {
                apiVersion: SCHEDULE_API_VERSION,
                kind: 'EtcdBackup',
                metadata: {
                  name: backupName,
                  namespace,
                  labels: { [SCHEDULE_LABEL]: name },
                  annotations: { [SCHEDULED_AT_ANNOTATION]: when },
                  ownerReferences: [{ apiVersion: SCHEDULE_API_VERSION, kind: SCHEDULE_KIND, name, uid: schedule!.metadata.uid!, controller: true }],
                },
                spec: { clusterName: spec.clusterName, destination: spec.destination },
              },
              { fieldManager: FIELD_MANAGER, signal },
            );
            createdNow = true;
            await deps.afterWrite?.(`create EtcdBackup ${backupName}`);
            event('Normal', 'BackupScheduled', `created EtcdBackup ${backupName} for the time ${when}`);
            log.info({ schedule: name, backup: backupName, scheduledAt: when }, 'scheduled backup created');
          } catch (err) {
            // Made before a crash, or seen by a stale cache: that time is taken, once.
            if (!(err instanceof AlreadyExistsError)) throw err;
          }
          createdBackup = backupName;
          return { requeueAfter: 0 };
        }
        case 'startPrune': {
          const backup = byName.get(a.backup.name)!;
          try {
            await deps.client.create(Jobs, pruneJob(backup, { schedule: name, key: a.backup.key!, agentImage: deps.agentImage }), { fieldManager: FIELD_MANAGER, signal });
            await deps.afterWrite?.(`create Job ${pruneJobName(backup)}`);
            log.info({ schedule: name, backup: a.backup.name, key: a.backup.key }, 'deleting an expired backup from the store');
          } catch (err) {
            if (!(err instanceof AlreadyExistsError)) throw err;
          }
          return { requeueAfter: 0 };
        }
        case 'retryPrune': {
          const backup = byName.get(a.backup.name)!;
          await deps.client.delete(Jobs, { namespace, name: pruneJobName(backup) }, { propagationPolicy: 'Background', signal }).catch((err: unknown) => {
            if (!(err instanceof NotFoundError)) throw err;
          });
          await deps.afterWrite?.(`delete Job ${pruneJobName(backup)}`);
          return { requeueAfter: 1000 };
        }
        case 'deleteRecord': {
          // The UID precondition: a record recreated under the same name is not this one.
          await deps.client.delete(EtcdBackups, { namespace, name: a.backup.name }, { preconditions: { uid: a.backup.uid }, propagationPolicy: 'Background', signal }).catch((err: unknown) => {
            if (!(err instanceof NotFoundError)) throw err;
          });
          await deps.afterWrite?.(`delete EtcdBackup ${a.backup.name}`);
          event('Normal', 'BackupPruned', a.storedObjectDeleted ? `deleted expired backup ${a.backup.name} and its stored object ${a.backup.key}` : `deleted the record of expired failed backup ${a.backup.name}`);
          log.info({ schedule: name, backup: a.backup.name }, 'expired backup deleted');
          return { requeueAfter: 0 };
        }
      }
    }
  };
}
