// The backup-schedule reconciler, whatever it backs up (EtcdBackupSchedule, RedisBackupSchedule): observe (the
// schedule, the backups it controls, the Jobs deleting expired stored backups), plan (planSchedule: one step), act
// (create a backup, start or retry a prune Job, delete a record), report (the status, written only when it
// changed, the metrics, events and logs), then requeue at the next scheduled time. What differs per operator (its
// kinds and labels, a backup's spec, its prune Job, how a Job the cache lacks is asked for) is its
// BackupScheduleKind.
import { AlreadyExistsError, Jobs, NotFoundError, writeStatus, type Client, type EventRecorder, type Informer, type Job, type KubeObject, type Logger, type ObjectMeta, type Pod, type Reconciler, type ResourceType, type Result } from '@quorum/runtime';
import { scheduleHashSeed } from './backup-schedule-cron.ts';
import { scheduleTimes, skippedTimes, type BackupScheduleMetrics, type SkipReason } from './backup-schedule-metrics.ts';
import {
  backupScheduleStatus,
  DEFAULT_PRUNE_RETRY_MS,
  durationMs,
  expiredBackups,
  observeScheduledBackup,
  planSchedule,
  scheduledBackupName,
  type BackupScheduleStatus,
  type PruneJob,
  type ScheduleAction,
  type ScheduledBackup,
  type ScheduledBackupRecord,
  type ScheduleObserved,
} from './backup-schedule.ts';
import { foreignJobOf, type ForeignJob } from './foreign-job.ts';

/** A schedule object as the reconciler reads it: the spec fields every schedule kind has, and its status. */
export type BackupScheduleObject = KubeObject & {
  spec: { schedule: string; suspend?: boolean; retention?: { maxCount?: number; maxAge?: string } };
  status?: BackupScheduleStatus;
};

/** A backup object of a schedule: its metadata and the status fields every backup kind has. */
export type ScheduleBackupObject = KubeObject & ScheduledBackupRecord;

/** What one operator's schedules are: their kinds, what they back up, and their backups' prune Jobs. */
export interface BackupScheduleKind<S extends BackupScheduleObject, B extends ScheduleBackupObject, L extends Record<string, string>> {
  schedules: ResourceType<S>;
  backups: ResourceType<B>;
  /** The backups' kind (e.g. `RedisBackup`), as events and JobNameTaken messages name it. */
  backupKind: string;
  /** On a schedule's backups and prune Jobs: the schedule's name. */
  scheduleLabel: string;
  /** On a backup a schedule made: the scheduled time it was made for (RFC 3339). */
  scheduledAtAnnotation: string;
  fieldManager: string;
  /** What a backup stores, as the BackupPruned event names it (`RDB`, `object`). */
  storedNoun: string;
  /** What the schedule backs up, as its Ready condition and events name it (`Redis shop`, `main`). */
  target(schedule: S): string;
  /** The schedule's labels on its series and log lines (its namespace, name and what it backs up). */
  labels(schedule: S): L;
  /** A backup of the schedule, with the metadata given (name, labels, scheduled time, the schedule as controller). */
  backup(schedule: S, metadata: ObjectMeta): B;
  pruneJobName(backup: B): string;
  pruneJob(backup: B, options: { schedule: string; key: string; agentImage: string }): Job;
  /** Whether a Job at the backup's prune Job name is its prune Job (the backup controls it). */
  isOwnPruneJob(job: Job, backup: B): boolean;
  /** The prune Job's own pods, of those of its namespace. */
  podsOfPruneJob(job: Job, pods: Pod[]): Pod[];
  /** A prune Job's outcome, with the agent's reason when its pod left one. */
  observePruneJob(job: Job, pods: Pod[]): PruneJob;
  /** The Job of that name as the API has it, asked the way the operator's role allows (a get, or a list by name). */
  findJob(client: Client, key: { namespace: string; name: string }, signal: AbortSignal): Promise<Job | undefined>;
}

export interface BackupScheduleReconcilerDeps<S extends BackupScheduleObject, B extends ScheduleBackupObject, L extends Record<string, string>> {
  client: Client;
  schedules: Pick<Informer<S>, 'store'>;
  backups: Pick<Informer<B>, 'store'>;
  jobs: Pick<Informer<Job>, 'store'>;
  pods: Pick<Informer<Pod>, 'store'>;
  events: Pick<EventRecorder, 'record'>;
  /** The image the prune Jobs run: the operator's own (it carries the agent). */
  agentImage: string;
  metrics?: BackupScheduleMetrics<L>;
  now?: () => Date;
  pruneRetryMs?: number;
  /** Test hook: called after every write (failpoints). */
  afterWrite?: (what: string) => Promise<void> | void;
}

type Deps<S extends BackupScheduleObject, B extends ScheduleBackupObject, L extends Record<string, string>> = BackupScheduleReconcilerDeps<S, B, L> & { kind: BackupScheduleKind<S, B, L> };
type Event = (type: 'Normal' | 'Warning', reason: string, note: string) => void;

/** The backups the schedule controls (its label, and it as their controller): only those are scheduled or pruned. */
function ownedBackups<B extends ScheduleBackupObject>(backups: Pick<Informer<B>, 'store'>, scheduleLabel: string, schedule: KubeObject): B[] {
  const { namespace = '', name, uid } = schedule.metadata;
  return backups.store.byIndex('namespace', namespace).filter((b) => b.metadata.labels?.[scheduleLabel] === name && b.metadata.ownerReferences?.some((o) => o.uid === uid && o.controller === true));
}

/**
 * The prune Jobs of the schedule's backups, by backup UID: only a Job a backup controls is its prune Job; another
 * at that name is foreign, never read nor deleted. The cache holds only Jobs with the operator's labels, so for an
 * expired backup whose Job is not there the API is asked: a Job without them would otherwise meet every create
 * with AlreadyExists, unseen.
 */
async function observePruneJobs<S extends BackupScheduleObject, B extends ScheduleBackupObject, L extends Record<string, string>>(
  deps: Deps<S, B, L>,
  namespace: string,
  owned: B[],
  expired: ScheduledBackup[],
  now: number,
  signal: AbortSignal,
): Promise<{ pruneJobs: Map<string, PruneJob>; foreignPruneJobs: Map<string, ForeignJob> }> {
  const { kind } = deps;
  const pruneJobs = new Map<string, PruneJob>();
  const foreignPruneJobs = new Map<string, ForeignJob>();
  const toPrune = new Set(expired.filter((b) => b.phase === 'Succeeded' && b.key && !b.deleting).map((b) => b.uid));
  for (const backup of owned) {
    const uid = backup.metadata.uid ?? '';
    const key = { namespace, name: kind.pruneJobName(backup) };
    const job = deps.jobs.store.get(`${namespace}/${key.name}`) ?? (toPrune.has(uid) ? await kind.findJob(deps.client, key, signal) : undefined);
    if (!job) continue;
    if (kind.isOwnPruneJob(job, backup)) pruneJobs.set(uid, kind.observePruneJob(job, kind.podsOfPruneJob(job, deps.pods.store.byIndex('namespace', namespace))));
    else foreignPruneJobs.set(uid, foreignJobOf(job, now));
  }
  return { pruneJobs, foreignPruneJobs };
}

/** What the planner is given: the schedule's spec and status, its backups, their prune Jobs, the clock. */
async function observeSchedule<S extends BackupScheduleObject, B extends ScheduleBackupObject, L extends Record<string, string>>(deps: Deps<S, B, L>, schedule: S, owned: B[], now: number, signal: AbortSignal): Promise<ScheduleObserved> {
  const { namespace = '', name = '', creationTimestamp } = schedule.metadata;
  const { spec } = schedule;
  const backups = owned.map((b) => observeScheduledBackup(b, deps.kind.scheduledAtAnnotation));
  const maxAgeMs = spec.retention?.maxAge ? durationMs(spec.retention.maxAge) : undefined;
  const retention = { ...(spec.retention?.maxCount !== undefined ? { maxCount: spec.retention.maxCount } : {}), ...(maxAgeMs !== undefined ? { maxAgeMs } : {}) };
  const { pruneJobs, foreignPruneJobs } = await observePruneJobs(deps, namespace, owned, expiredBackups(backups, retention, now), now, signal);
  const lastScheduleTime = schedule.status?.lastScheduleTime ? Date.parse(schedule.status.lastScheduleTime) : NaN;
  return {
    schedule: spec.schedule,
    hashSeed: scheduleHashSeed(namespace, name),
    suspend: spec.suspend ?? false,
    retention,
    createdAt: Date.parse(creationTimestamp ?? '') || 0,
    ...(Number.isFinite(lastScheduleTime) ? { lastScheduleTime } : {}),
    backups,
    pruneJobs,
    foreignPruneJobs,
    now,
    pruneRetryMs: deps.pruneRetryMs ?? DEFAULT_PRUNE_RETRY_MS,
  };
}

/**
 * Scheduled times left behind by the backup just created, counted and logged once (only when this reconcile
 * created it, not on AlreadyExists). Forbid and Suspended are the schedule doing what its spec says; Missed are
 * backups that should have happened.
 */
function reportSkipped<L extends Record<string, string>>(metrics: BackupScheduleMetrics<L> | undefined, labels: L, observed: ScheduleObserved, scheduledAt: number, previous: BackupScheduleStatus, log: Logger): void {
  const wasSuspended = previous.conditions?.find((c) => c.type === 'Ready')?.reason === 'Suspended';
  for (const [reason, count] of Object.entries(skippedTimes(observed, scheduledAt, wasSuspended)) as [SkipReason, number][]) {
    metrics?.skipped(labels, reason, count);
    const line = `${count} scheduled time(s) before ${new Date(scheduledAt).toISOString()} passed without a backup (${reason})`;
    const fields: Record<string, unknown> = { ...labels, reason, count };
    if (reason === 'Missed') log.warn(fields, line);
    else log.info(fields, line);
  }
}

/** What the new status says that the previous did not, voiced once: a failed backup, an invalid schedule, retention stuck. */
function reportChanges(previous: BackupScheduleStatus, next: BackupScheduleStatus, target: string, labels: Record<string, string>, event: Event, log: Logger): void {
  const failure = next.lastFailure;
  if (failure && failure.time !== previous.lastFailure?.time) {
    event('Warning', 'ScheduledBackupFailed', `backup ${failure.backup} of ${target} failed: ${failure.reason}: ${failure.message}`);
    log.warn({ ...labels, backup: failure.backup, reason: failure.reason }, `scheduled backup failed: ${failure.message}`);
  }
  const changed = (type: string): { now: { status: string; reason: string; message: string } | undefined; flipped: boolean } => {
    const after = next.conditions?.find((c) => c.type === type);
    const before = previous.conditions?.find((c) => c.type === type);
    return { now: after, flipped: after?.status !== before?.status || after?.reason !== before?.reason };
  };
  const ready = changed('Ready');
  if (ready.flipped && ready.now?.reason === 'InvalidSchedule') {
    event('Warning', 'BackupScheduleInvalid', ready.now.message);
    log.warn(labels, ready.now.message);
  }
  const retention = changed('RetentionFailing');
  if (retention.flipped && retention.now?.status === 'True') {
    event('Warning', retention.now.reason === 'JobNameTaken' ? 'BackupPruneJobNameTaken' : 'BackupPruneFailed', retention.now.message);
    log.warn({ ...labels, reason: retention.now.reason }, retention.now.message);
  }
}

export function backupScheduleReconciler<S extends BackupScheduleObject, B extends ScheduleBackupObject, L extends Record<string, string>>(kind: BackupScheduleKind<S, B, L>, options: BackupScheduleReconcilerDeps<S, B, L>): Reconciler {
  const deps: Deps<S, B, L> = { ...options, kind };
  // The labels each schedule's series were last set under: a deleted schedule (or one now backing up something
  // else) must not leave series behind, and what it backed up is not known any more once it is gone.
  const labelled = new Map<string, L>();
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
    const labels = kind.labels(schedule);
    if (JSON.stringify(labelled.get(key) ?? labels) !== JSON.stringify(labels)) forget(key);
    labelled.set(key, labels);
    const status = schedule.status ?? {};
    const owned = ownedBackups(deps.backups, kind.scheduleLabel, schedule);
    const observed = await observeSchedule(deps, schedule, owned, (deps.now?.() ?? new Date()).getTime(), signal);
    const action = planSchedule(observed);

    const event: Event = (type, reason, note) => deps.events.record(schedule, { type, reason, action: reason, note });
    const { result, createdBackup, createdNow } = await act(deps, schedule, owned, action, event, log, signal);

    const target = kind.target(schedule);
    const next = backupScheduleStatus(observed, action, status, { generation: schedule.metadata.generation ?? 0, target, backupKind: kind.backupKind, ...(createdBackup ? { createdBackup } : {}) });
    deps.metrics?.times(labels, scheduleTimes(next));
    if (action.type === 'createBackup' && createdNow) reportSkipped(deps.metrics, labels, observed, action.scheduledAt, status, log);
    reportChanges(status, next, target, labels, event, log);
    if (await writeStatus(deps.client, kind.schedules, { namespace, name }, status, next, { fieldManager: kind.fieldManager, signal })) await deps.afterWrite?.('schedule status');
    return result;
  };
}

interface Acted {
  result: Result;
  /** The backup of the time taken: created now, or found made already (AlreadyExists). */
  createdBackup?: string;
  /** This reconcile created it: the times it leaves behind are counted now, once. */
  createdNow?: boolean;
}

/** Takes the action: one write, then the requeue. */
async function act<S extends BackupScheduleObject, B extends ScheduleBackupObject, L extends Record<string, string>>(deps: Deps<S, B, L>, schedule: S, owned: B[], a: ScheduleAction, event: Event, log: Logger, signal: AbortSignal): Promise<Acted> {
  const { kind, client } = deps;
  const namespace = schedule.metadata.namespace ?? '';
  const name = schedule.metadata.name ?? '';
  const ownedNamed = (backupName: string): B => owned.find((b) => b.metadata.name === backupName)!;
  const ignore = (type: typeof AlreadyExistsError | typeof NotFoundError) => (err: unknown): void => {
    if (!(err instanceof type)) throw err;
  };
  switch (a.type) {
    case 'invalid':
      return { result: {} };
    case 'idle':
      return { result: a.requeueAfterMs === undefined ? {} : { requeueAfter: a.requeueAfterMs } };
    case 'createBackup':
      return createBackup(deps, schedule, a.scheduledAt, event, log, signal);
    case 'startPrune': {
      const backup = ownedNamed(a.backup.name);
      try {
        await client.create(Jobs, kind.pruneJob(backup, { schedule: name, key: a.backup.key!, agentImage: deps.agentImage }), { fieldManager: kind.fieldManager, signal });
        await deps.afterWrite?.(`create Job ${kind.pruneJobName(backup)}`);
        log.info({ schedule: name, backup: a.backup.name, key: a.backup.key }, 'deleting an expired backup from the store');
      } catch (err) {
        ignore(AlreadyExistsError)(err);
      }
      return { result: { requeueAfter: 0 } };
    }
    case 'retryPrune': {
      // Only its own failed Job is here (observePruneJobs): a foreign one at the name is never deleted.
      const jobName = kind.pruneJobName(ownedNamed(a.backup.name));
      await client.delete(Jobs, { namespace, name: jobName }, { propagationPolicy: 'Background', signal }).catch(ignore(NotFoundError));
      await deps.afterWrite?.(`delete Job ${jobName}`);
      return { result: { requeueAfter: 1000 } };
    }
    case 'deleteRecord': {
      // The UID precondition: a record recreated under the same name is not this one.
      await client.delete(kind.backups, { namespace, name: a.backup.name }, { preconditions: { uid: a.backup.uid }, propagationPolicy: 'Background', signal }).catch(ignore(NotFoundError));
      await deps.afterWrite?.(`delete ${kind.backupKind} ${a.backup.name}`);
      event('Normal', 'BackupPruned', a.storedObjectDeleted ? `deleted expired backup ${a.backup.name} and its stored ${kind.storedNoun} ${a.backup.key}` : `deleted the record of expired failed backup ${a.backup.name}`);
      log.info({ schedule: name, backup: a.backup.name }, 'expired backup deleted');
      return { result: { requeueAfter: 0 } };
    }
  }
}

/** A backup for the scheduled time, named after it and controlled by the schedule: a time taken twice meets AlreadyExists. */
async function createBackup<S extends BackupScheduleObject, B extends ScheduleBackupObject, L extends Record<string, string>>(deps: Deps<S, B, L>, schedule: S, scheduledAt: number, event: Event, log: Logger, signal: AbortSignal): Promise<Acted> {
  const { kind } = deps;
  const { namespace = '', name = '', uid = '' } = schedule.metadata;
  const backupName = scheduledBackupName(name, scheduledAt);
  const when = new Date(scheduledAt).toISOString();
  const metadata: ObjectMeta = {
    name: backupName,
    namespace,
    labels: { [kind.scheduleLabel]: name },
    annotations: { [kind.scheduledAtAnnotation]: when },
    ownerReferences: [{ apiVersion: kind.schedules.apiVersion, kind: kind.schedules.kind, name, uid, controller: true }],
  };
  try {
    await deps.client.create(kind.backups, kind.backup(schedule, metadata), { fieldManager: kind.fieldManager, signal });
  } catch (err) {
    // Made before a crash, or seen by a stale cache: that time is taken, once.
    if (!(err instanceof AlreadyExistsError)) throw err;
    return { result: { requeueAfter: 0 }, createdBackup: backupName, createdNow: false };
  }
  await deps.afterWrite?.(`create ${kind.backupKind} ${backupName}`);
  event('Normal', 'BackupScheduled', `created ${kind.backupKind} ${backupName} for the time ${when}`);
  log.info({ schedule: name, backup: backupName, scheduledAt: when }, 'scheduled backup created');
  return { result: { requeueAfter: 0 }, createdBackup: backupName, createdNow: true };
}
