// The Job that deletes one expired RedisBackup's stored RDB (a schedule's retention): the agent's idempotent
// `delete` command, in the operator's own image. Like the backup Job, it alone mounts the credentials Secret (or
// the PVC), so the operator never reads a Secret. One Job per RedisBackup, named after its UID and controlled by
// it: an operator that dies after creating it finds it again, and a Job at that name the backup does not control
// is anyone's, never read nor deleted (the schedule reports JobNameTaken).
import { observePruneJob as observeKitPruneJob, pruneJobManifest, pruneJobName as kitPruneJobName, type PruneJob } from '@quorum/kit';
import { isControlledBy, type Job, type Pod } from '@quorum/runtime';
import { BACKUP_KIND } from '../api/backup.ts';
import { API_VERSION } from '../api/redis.ts';
import { AGENT_SCRIPT, destinationVolumes } from '../backup/job.ts';
import { LABELS, MANAGED_BY } from '../names.ts';
import type { RedisBackupObject } from '../resources.ts';

/** On a schedule's RedisBackups and prune Jobs: the schedule's name. */
export const SCHEDULE_LABEL = 'redis.quorum.dev/schedule';
/** On a RedisBackup a schedule made: the scheduled time it was made for (RFC 3339). */
export const SCHEDULED_AT_ANNOTATION = 'redis.quorum.dev/scheduled-at';
/** On a prune Job and its pod: the RedisBackup whose stored RDB it deletes. */
export const PRUNE_LABEL = 'redis.quorum.dev/prune';

export function pruneJobName(backup: Pick<RedisBackupObject, 'metadata'>): string {
  return kitPruneJobName(backup);
}

export function pruneJob(backup: RedisBackupObject, options: { schedule: string; key: string; agentImage: string }): Job {
  const labels = { [LABELS.managedBy]: MANAGED_BY, [LABELS.name]: 'redis-backup-prune', [SCHEDULE_LABEL]: options.schedule, [PRUNE_LABEL]: backup.metadata.name! };
  return pruneJobManifest({
    name: pruneJobName(backup),
    namespace: backup.metadata.namespace!,
    labels,
    owner: { apiVersion: API_VERSION, kind: BACKUP_KIND, name: backup.metadata.name!, uid: backup.metadata.uid! },
    image: options.agentImage,
    agentScript: AGENT_SCRIPT,
    destination: backup.spec.destination,
    key: options.key,
    storage: destinationVolumes(backup.spec.destination),
  });
}

/** Whether `job`, found at the backup's prune Job name, is its prune Job: only one the backup controls is. */
export function isOwnPruneJob(job: Job, backup: Pick<RedisBackupObject, 'metadata'>): boolean {
  return isControlledBy(job, { kind: BACKUP_KIND, metadata: backup.metadata });
}

/** The prune Job's own pods (controlled by it): only their results are the Job's. */
export function podsOfPruneJob(job: Job, pods: readonly Pod[]): Pod[] {
  return pods.filter((p) => p.metadata.labels?.['batch.kubernetes.io/job-name'] === job.metadata.name && isControlledBy(p, job));
}

/** A prune Job's outcome; a failure carries the agent's own reason (e.g. StorageForbidden) when its pod left one. */
export function observePruneJob(job: Job, pods: readonly Pod[]): PruneJob {
  return observeKitPruneJob(job, pods, agentFailure);
}

/** `reason: message` of a failed agent's result line, if the termination message is one. */
function agentFailure(text: string | undefined): string | undefined {
  try {
    const parsed: unknown = JSON.parse(text ?? '');
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { ok, reason, message } = parsed as { ok?: unknown; reason?: unknown; message?: unknown };
    return ok === false && typeof reason === 'string' ? `${reason}: ${typeof message === 'string' ? message : ''}` : undefined;
  } catch {
    return undefined;
  }
}
