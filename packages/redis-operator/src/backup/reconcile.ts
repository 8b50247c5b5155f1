// The RedisBackup reconciler: observe (the backup, its Redis's instances as the Redis's status reports them, the
// current attempt's Job and pod, the credentials Secret's label), plan (plan.ts), report (status first: an attempt
// is recorded before its Job exists, so a crash in between resumes the same attempt), act (create the Job). A failed
// attempt speaks before the next one starts: status.lastFailure, a Warning event, a warn log and a metric.
import { checkCredentials, foreignJobOf } from '@quorum/kit';
import { AlreadyExistsError, isControlledBy, setCondition, type Client, type EventRecorder, type Informer, type Job, type Pod, type Reconciler, type Result } from '@quorum/runtime';
import { BACKUP_KIND, MAX_BACKUP_ATTEMPTS, REDIS_BACKUP_CREDENTIALS_LABEL, type RedisBackupStatus } from '../api/backup.ts';
import { applyDefaults } from '../api/defaults.ts';
import { FIELD_MANAGER, names, podHost } from '../names.ts';
import { RedisBackups, Jobs, type RedisBackupObject, type RedisObject } from '../resources.ts';
import { attemptOutcome, backupJob, backupJobName } from './job.ts';
import { planBackup, type BackupAction, type ObservedBackup, type SourceInstance } from './plan.ts';
import { servedSecretName } from '../tls/certificates.ts';

export interface BackupMetrics {
  attemptFailed(labels: { namespace: string; redis: string; reason: string }): void;
}

export interface BackupReconcilerDeps {
  client: Client;
  backups: Pick<Informer<RedisBackupObject>, 'store'>;
  redises: Pick<Informer<RedisObject>, 'store'>;
  jobs: Pick<Informer<Job>, 'store'>;
  pods: Pick<Informer<Pod>, 'store'>;
  events: Pick<EventRecorder, 'record'>;
  /** The operator's own image: it carries the agent. */
  agentImage: string;
  metrics?: BackupMetrics;
  now?: () => Date;
  afterWrite?: (what: string) => Promise<void> | void;
}

function sourceInstances(redis: RedisObject): SourceInstance[] {
  return (redis.status?.instances ?? []).map((i) => ({ name: i.name, role: i.role, ready: i.ready, linkUp: i.linkStatus === 'up', ...(i.lagBytes !== undefined ? { lagBytes: i.lagBytes } : {}) }));
}

/**
 * The current attempt's Job: only one this backup controls is its Job, and only that Job's own pods (controlled by
 * it) are read for the result. A Job found by name alone may be anyone's (foreignJob); one without the operator's
 * labels is not in the cache, so the API is asked while the attempt's Job is not seen there.
 */
async function observeJob(deps: BackupReconcilerDeps, backup: RedisBackupObject, namespace: string, status: RedisBackupStatus, now: number): Promise<Pick<ObservedBackup, 'job' | 'foreignJob'>> {
  const attempts = status.attempts ?? 0;
  if (attempts === 0) return {};
  const jobName = backupJobName(backup, attempts);
  const found = deps.jobs.store.get(`${namespace}/${jobName}`) ?? (await deps.client.find(Jobs, { namespace, name: jobName }));
  if (!found) return {};
  if (!isControlledBy(found, { kind: BACKUP_KIND, metadata: backup.metadata })) return { foreignJob: foreignJobOf(found, now, attemptStart(status, now)) };
  const pods = deps.pods.store.byIndex('namespace', namespace).filter((p) => p.metadata.labels?.['batch.kubernetes.io/job-name'] === jobName && isControlledBy(p, found));
  return { job: attemptOutcome(found, pods) };
}

/** When the current attempt began: the previous one's failure (recorded with it), else the backup's start. */
function attemptStart(status: RedisBackupStatus, now: number): number {
  const at = Date.parse(status.lastFailure?.at ?? status.startedAt ?? '');
  return Number.isFinite(at) ? at : now;
}

function conditionsFor(status: RedisBackupStatus, action: BackupAction, generation: number, now: Date): RedisBackupStatus['conditions'] {
  const set = (base: RedisBackupStatus['conditions'], type: string, value: 'True' | 'False', reason: string, message: string): RedisBackupStatus['conditions'] => setCondition(base, { type, status: value, reason, message, observedGeneration: generation }, now);
  const base = status.conditions ?? [];
  switch (action.type) {
    case 'succeed':
      return set(set(base, 'Complete', 'True', 'Stored', `RDB stored at ${action.result.location}`), 'Failed', 'False', 'Stored', 'the backup succeeded');
    case 'fail':
      return set(set(base, 'Failed', 'True', action.reason, action.message), 'Complete', 'False', action.reason, action.message);
    case 'wait':
      return set(base, 'Complete', 'False', action.reason, action.message);
    case 'start':
      return set(base, 'Complete', 'False', action.failure ? 'Retrying' : 'Streaming', `${action.failure ? `${action.failure.message}; retrying: ` : ''}attempt ${action.attempt} of ${MAX_BACKUP_ATTEMPTS} streams the RDB from ${action.role} ${action.instance}`);
    case 'done':
      return base;
  }
}

export function redisBackupReconciler(deps: BackupReconcilerDeps): Reconciler {
  return async ({ namespace, name }, { signal, log }): Promise<Result> => {
    const backup = deps.backups.store.get(`${namespace}/${name}`);
    if (!backup || backup.metadata.deletionTimestamp) return {};
    const status = backup.status ?? {};
    if (status.phase === 'Succeeded' || status.phase === 'Failed') return {};
    const now = deps.now?.() ?? new Date();
    const spec = backup.spec;
    const redis = deps.redises.store.get(`${namespace}/${spec.redisName}`);
    const attempts = status.attempts ?? 0;
    const { job, foreignJob } = await observeJob(deps, backup, namespace, status, now.getTime());
    const credentials = job === undefined ? await checkCredentials(deps.client, namespace, spec.destination, REDIS_BACKUP_CREDENTIALS_LABEL, signal) : undefined;
    const action = planBackup({
      ...(status.phase ? { phase: status.phase } : {}),
      attempts,
      ...(status.source ? { source: status.source } : {}),
      ...(status.startedAt ? { startedAt: Date.parse(status.startedAt) } : {}),
      now: now.getTime(),
      ...(redis ? { redis: { replicas: applyDefaults(redis.spec).replicas, instances: sourceInstances(redis) } } : {}),
      ...(credentials ? { credentials } : {}),
      ...(job ? { job } : {}),
      ...(foreignJob ? { foreignJob } : {}),
    });
    // Every status write is made on the version this reconcile read: each carries the status read (`...status`)
    // with one step taken, so a reconcile on a stale cache (still Running, or a previous attempt) would otherwise
    // put an older status back or finish the backup a second time, with another completedAt than the one already
    // reported (and read by a restore or a schedule). The API server refuses a write on another version
    // (Conflict): the reconcile is retried once the cache has caught up, and sees the backup as it is.
    const onReadVersion = backup.metadata.resourceVersion ? { metadata: { resourceVersion: backup.metadata.resourceVersion } } : {};
    const write = async (next: RedisBackupStatus, what: string): Promise<void> => {
      await deps.client.mergePatch(RedisBackups, { namespace, name }, { ...onReadVersion, status: { ...next, observedGeneration: backup.metadata.generation ?? 0, conditions: conditionsFor(status, action, backup.metadata.generation ?? 0, now) } }, { subresource: 'status', fieldManager: FIELD_MANAGER, signal });
      await deps.afterWrite?.(what);
    };
    const event = (type: 'Normal' | 'Warning', reason: string, note: string): void => deps.events.record(backup, { type, reason, action: reason, note });
    const labels = { namespace, redis: spec.redisName };

    switch (action.type) {
      case 'done':
        return {};
      case 'wait': {
        const complete = status.conditions?.find((c) => c.type === 'Complete');
        if (complete?.reason !== action.reason) {
          await write({ ...status, phase: status.phase ?? 'Pending', ...(status.startedAt ? {} : { startedAt: now.toISOString() }) }, `status ${action.reason}`);
          if (action.reason === 'NoSource' || action.reason === 'JobNameTaken') {
            event('Warning', action.reason === 'NoSource' ? 'BackupWaiting' : 'BackupJobNameTaken', action.message);
            log.warn({ backup: name, redis: spec.redisName, reason: action.reason }, action.message);
          }
        }
        return { requeueAfter: action.requeueAfterMs };
      }
      case 'start':
        return startAttempt(deps, backup, status, action, now, write, event, labels, signal, log);
      case 'succeed': {
        const r = action.result;
        await write({ ...status, phase: 'Succeeded', key: r.key, location: r.location, sizeBytes: r.sizeBytes, sha256: r.sha256, ...(r.serverVersion ? { serverVersion: r.serverVersion } : {}), completedAt: now.toISOString() }, 'status Succeeded');
        event('Normal', 'BackupSucceeded', `stored ${r.sizeBytes} bytes (sha256 ${r.sha256}) from ${status.sourceRole ?? 'replica'} ${status.source ?? '?'} at ${r.location}`);
        log.info({ backup: name, redis: spec.redisName, location: r.location, sizeBytes: r.sizeBytes }, 'backup succeeded');
        return {};
      }
      case 'fail': {
        await write({ ...status, phase: 'Failed', completedAt: now.toISOString(), ...(job?.type === 'failed' ? { lastFailure: { attempt: attempts, reason: job.reason, message: job.message.slice(0, 4000), at: now.toISOString() } } : {}) }, 'status Failed');
        deps.metrics?.attemptFailed({ ...labels, reason: action.reason });
        event('Warning', 'BackupFailed', `${action.reason}: ${action.message}`);
        log.warn({ backup: name, redis: spec.redisName, reason: action.reason }, `backup failed: ${action.message}`);
        return {};
      }
    }
  };
}

type Write = (next: RedisBackupStatus, what: string) => Promise<void>;
type Event = (type: 'Normal' | 'Warning', reason: string, note: string) => void;

/** Records the attempt (and the failure of the previous one, announced), then creates its Job. */
async function startAttempt(deps: BackupReconcilerDeps, backup: RedisBackupObject, status: RedisBackupStatus, action: Extract<BackupAction, { type: 'start' }>, now: Date, write: Write, event: Event, labels: { namespace: string; redis: string }, signal: AbortSignal, log: { info(o: object, m: string): void; warn(o: object, m: string): void }): Promise<Result> {
  const namespace = labels.namespace;
  const jobName = backupJobName(backup, action.attempt);
  if ((status.attempts ?? 0) !== action.attempt || status.phase !== 'Running') {
    const lastFailure = action.failure ? { lastFailure: { attempt: action.attempt - 1, reason: action.failure.reason, message: action.failure.message.slice(0, 4000), at: now.toISOString() } } : {};
    await write({ ...status, phase: 'Running', attempts: action.attempt, source: action.instance, sourceRole: action.role, job: jobName, startedAt: status.startedAt ?? now.toISOString(), ...lastFailure }, `status Running attempt ${action.attempt}`);
    if (action.failure) {
      deps.metrics?.attemptFailed({ ...labels, reason: action.failure.reason });
      event('Warning', 'BackupAttemptFailed', `${action.failure.reason}: ${action.failure.message}; attempt ${action.attempt} of ${MAX_BACKUP_ATTEMPTS} starts`);
      log.warn({ backup: backup.metadata.name, redis: labels.redis, reason: action.failure.reason }, `backup attempt failed, retrying: ${action.failure.message}`);
    }
    const fromPrimary = action.role === 'primary' ? ' (the primary: this Redis has no replicas, so the primary forks for the snapshot)' : '';
    event('Normal', 'BackupStarted', `attempt ${action.attempt}: streaming an RDB of ${labels.redis} from ${action.role} ${action.instance}${fromPrimary} (Job ${jobName})`);
  }
  const redis = deps.redises.store.get(`${namespace}/${labels.redis}`);
  const defaulted = applyDefaults(redis?.spec);
  const auth = defaulted.auth;
  const tlsSecretName = servedSecretName(labels.redis, defaulted);
  try {
    const job = backupJob(backup, {
      attempt: action.attempt,
      instance: action.instance,
      host: podHost(labels.redis, namespace, action.instance),
      redis: labels.redis,
      auth: { secretName: auth.secretName ?? names.generatedSecret(labels.redis), key: auth.key },
      ...(tlsSecretName !== undefined ? { tlsSecretName } : {}),
      agentImage: deps.agentImage,
    });
    await deps.client.create(Jobs, job, { fieldManager: FIELD_MANAGER, signal });
    await deps.afterWrite?.(`create Job ${jobName}`);
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
  }
  return { requeueAfter: 5000 };
}
