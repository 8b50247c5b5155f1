// The RedisBackupSchedule reconciler, on the kit's backup-schedule planner like the etcd operator's: observe (the
// schedule, its RedisBackups, the Jobs deleting expired stored RDBs), plan (planSchedule: one step), act (create a
// RedisBackup, start or retry a prune Job, delete a record), report (the status, written only when it changed),
// then requeue at the next scheduled time.
import {
  backupScheduleStatus,
  DEFAULT_PRUNE_RETRY_MS,
  durationMs,
  expiredBackups,
  foreignJobOf,
  observeScheduledBackup,
  planSchedule,
  scheduledBackupName,
  scheduleHashSeed,
  writeStatus,
  type ForeignJob,
  type PruneJob,
  type ScheduleAction,
  type ScheduledBackup,
} from '@quorum/kit';
import { AlreadyExistsError, NotFoundError, type Client, type EventRecorder, type Informer, type Job, type Pod, type Reconciler, type Result } from '@quorum/runtime';
import { BACKUP_KIND } from '../api/backup.ts';
import { API_VERSION } from '../api/redis.ts';
import { SCHEDULE_KIND } from '../api/schedule.ts';
import { FIELD_MANAGER } from '../reconcile/deps.ts';
import { Jobs, RedisBackups, RedisBackupSchedules, type RedisBackupObject, type RedisBackupScheduleObject } from '../resources.ts';
import { isOwnPruneJob, observePruneJob, podsOfPruneJob, pruneJob, pruneJobName, SCHEDULE_LABEL, SCHEDULED_AT_ANNOTATION } from './prune-job.ts';

export interface ScheduleReconcilerDeps {
  client: Client;
  schedules: Pick<Informer<RedisBackupScheduleObject>, 'store'>;
  backups: Pick<Informer<RedisBackupObject>, 'store'>;
  jobs: Pick<Informer<Job>, 'store'>;
  pods: Pick<Informer<Pod>, 'store'>;
  events: Pick<EventRecorder, 'record'>;
  /** The image the prune Jobs run: the operator's own (it carries the agent). */
  agentImage: string;
  now?: () => Date;
  pruneRetryMs?: number;
}

/**
 * The prune Jobs of the schedule's backups, by backup UID: only a Job a backup controls is its prune Job; another
 * at that name is foreign, never read nor deleted. The cache holds only Jobs with the operator's labels, so for an
 * expired backup whose Job is not there the API is asked: a Job without them would otherwise meet every create
 * with AlreadyExists, unseen.
 */
async function observePruneJobs(deps: ScheduleReconcilerDeps, namespace: string, owned: RedisBackupObject[], expired: ScheduledBackup[], now: number): Promise<{ pruneJobs: Map<string, PruneJob>; foreignPruneJobs: Map<string, ForeignJob> }> {
  const pruneJobs = new Map<string, PruneJob>();
  const foreignPruneJobs = new Map<string, ForeignJob>();
  const toPrune = new Set(expired.filter((b) => b.phase === 'Succeeded' && b.key && !b.deleting).map((b) => b.uid));
  for (const backup of owned) {
    const uid = backup.metadata.uid ?? '';
    const name = pruneJobName(backup);
    const job = deps.jobs.store.get(`${namespace}/${name}`) ?? (toPrune.has(uid) ? await deps.client.find(Jobs, { namespace, name }) : undefined);
    if (!job) continue;
    if (isOwnPruneJob(job, backup)) pruneJobs.set(uid, observePruneJob(job, podsOfPruneJob(job, deps.pods.store.byIndex('namespace', namespace))));
    else foreignPruneJobs.set(uid, foreignJobOf(job, now));
  }
  return { pruneJobs, foreignPruneJobs };
}

export function redisBackupScheduleReconciler(deps: ScheduleReconcilerDeps): Reconciler {
  return async ({ namespace, name }, { signal, log }): Promise<Result> => {
    const schedule = deps.schedules.store.get(`${namespace}/${name}`);
    if (!schedule || schedule.metadata.deletionTimestamp) return {};
    const now = (deps.now?.() ?? new Date()).getTime();
    const { spec } = schedule;
    const status = schedule.status ?? {};

    // ---- observe ----
    const owned = deps.backups.store
      .byIndex('namespace', namespace)
      .filter((b) => b.metadata.labels?.[SCHEDULE_LABEL] === name && b.metadata.ownerReferences?.some((o) => o.uid === schedule.metadata.uid && o.controller === true));
    const byName = new Map(owned.map((b) => [b.metadata.name!, b]));
    const backups = owned.map((b) => observeScheduledBackup(b, SCHEDULED_AT_ANNOTATION));
    const maxAgeMs = spec.retention?.maxAge ? durationMs(spec.retention.maxAge) : undefined;
    const retention = { ...(spec.retention?.maxCount !== undefined ? { maxCount: spec.retention.maxCount } : {}), ...(maxAgeMs !== undefined ? { maxAgeMs } : {}) };
    const { pruneJobs, foreignPruneJobs } = await observePruneJobs(deps, namespace, owned, expiredBackups(backups, retention, now), now);
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
      now,
      pruneRetryMs: deps.pruneRetryMs ?? DEFAULT_PRUNE_RETRY_MS,
    };

    // ---- plan ----
    const action = planSchedule(observed);

    // ---- act ----
    const event = (type: 'Normal' | 'Warning', reason: string, note: string): void => deps.events.record(schedule, { type, reason, action: reason, note });
    let createdBackup: string | undefined;
    const result = await act(action);

    // ---- report ----
    const next = backupScheduleStatus(observed, action, status, { generation: schedule.metadata.generation ?? 0, target: `Redis ${spec.redisName}`, backupKind: BACKUP_KIND, ...(createdBackup ? { createdBackup } : {}) });
    if (next.lastFailure && next.lastFailure.time !== status.lastFailure?.time) {
      event('Warning', 'ScheduledBackupFailed', `backup ${next.lastFailure.backup} of Redis ${spec.redisName} failed: ${next.lastFailure.reason}: ${next.lastFailure.message}`);
      log.warn({ schedule: name, redis: spec.redisName, backup: next.lastFailure.backup, reason: next.lastFailure.reason }, `scheduled backup failed: ${next.lastFailure.message}`);
    }
    const changed = (type: string): { now: { status: string; reason: string; message: string } | undefined; flipped: boolean } => {
      const after = next.conditions?.find((c) => c.type === type);
      const before = status.conditions?.find((c) => c.type === type);
      return { now: after, flipped: after?.status !== before?.status || after?.reason !== before?.reason };
    };
    const ready = changed('Ready');
    if (ready.flipped && ready.now?.reason === 'InvalidSchedule') {
      event('Warning', 'BackupScheduleInvalid', ready.now.message);
      log.warn({ schedule: name }, ready.now.message);
    }
    const retentionFailing = changed('RetentionFailing');
    if (retentionFailing.flipped && retentionFailing.now?.status === 'True') {
      event('Warning', retentionFailing.now.reason === 'JobNameTaken' ? 'BackupPruneJobNameTaken' : 'BackupPruneFailed', retentionFailing.now.message);
      log.warn({ schedule: name, reason: retentionFailing.now.reason }, retentionFailing.now.message);
    }
    await writeStatus(deps.client, RedisBackupSchedules, { namespace, name }, status, next, { fieldManager: FIELD_MANAGER, signal });
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
              RedisBackups,
              {
                apiVersion: API_VERSION,
                kind: BACKUP_KIND,
                metadata: {
                  name: backupName,
                  namespace,
                  labels: { [SCHEDULE_LABEL]: name },
                  annotations: { [SCHEDULED_AT_ANNOTATION]: when },
                  ownerReferences: [{ apiVersion: API_VERSION, kind: SCHEDULE_KIND, name, uid: schedule!.metadata.uid!, controller: true }],
                },
                spec: { redisName: spec.redisName, destination: spec.destination },
              },
              { fieldManager: FIELD_MANAGER, signal },
            );
            event('Normal', 'BackupScheduled', `created RedisBackup ${backupName} for the time ${when}`);
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
            log.info({ schedule: name, backup: a.backup.name, key: a.backup.key }, 'deleting an expired backup from the store');
          } catch (err) {
            if (!(err instanceof AlreadyExistsError)) throw err;
          }
          return { requeueAfter: 0 };
        }
        case 'retryPrune': {
          // Only its own failed Job is here (observePruneJobs): a foreign one at the name is never deleted.
          const backup = byName.get(a.backup.name)!;
          await deps.client.delete(Jobs, { namespace, name: pruneJobName(backup) }, { propagationPolicy: 'Background', signal }).catch((err: unknown) => {
            if (!(err instanceof NotFoundError)) throw err;
          });
          return { requeueAfter: 1000 };
        }
        case 'deleteRecord': {
          // The UID precondition: a record recreated under the same name is not this one.
          await deps.client.delete(RedisBackups, { namespace, name: a.backup.name }, { preconditions: { uid: a.backup.uid }, propagationPolicy: 'Background', signal }).catch((err: unknown) => {
            if (!(err instanceof NotFoundError)) throw err;
          });
          event('Normal', 'BackupPruned', a.storedObjectDeleted ? `deleted expired backup ${a.backup.name} and its stored RDB ${a.backup.key}` : `deleted the record of expired failed backup ${a.backup.name}`);
          log.info({ schedule: name, backup: a.backup.name }, 'expired backup deleted');
          return { requeueAfter: 0 };
        }
      }
    }
  };
}
