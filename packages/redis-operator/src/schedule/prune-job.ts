// The Job that deletes one expired RedisBackup's stored RDB (a schedule's retention): the agent's idempotent
// `delete` command, in the operator's own image. Like the backup Job, it alone mounts the credentials Secret (or
// the PVC), so the operator never reads a Secret. One Job per RedisBackup, named after its UID and controlled by
// it: an operator that dies after creating it finds it again, and a Job at that name the backup does not control
// is anyone's, never read nor deleted (the schedule reports JobNameTaken).
import { createHash } from 'node:crypto';
import { restrictedContainerSecurity, restrictedPodSecurity, type PruneJob } from '@quorum/kit';
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
const CONTAINER = 'delete';

export function pruneJobName(backup: Pick<RedisBackupObject, 'metadata'>): string {
  const suffix = createHash('sha256').update(backup.metadata.uid ?? '').digest('hex').slice(0, 8);
  return `${(backup.metadata.name ?? 'backup').slice(0, 40).replace(/-+$/, '')}-prune-${suffix}`;
}

export function pruneJob(backup: RedisBackupObject, options: { schedule: string; key: string; agentImage: string }): Job {
  const { volumes, mounts, args } = destinationVolumes(backup.spec.destination);
  const labels = { [LABELS.managedBy]: MANAGED_BY, [LABELS.name]: 'redis-backup-prune', [SCHEDULE_LABEL]: options.schedule, [PRUNE_LABEL]: backup.metadata.name! };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: pruneJobName(backup),
      namespace: backup.metadata.namespace!,
      labels,
      // Controlled by the backup whose RDB it deletes: only such a Job is its prune Job, and deleting that record
      // (the last step) removes the Job too.
      ownerReferences: [{ apiVersion: API_VERSION, kind: BACKUP_KIND, name: backup.metadata.name!, uid: backup.metadata.uid!, controller: true }],
    },
    spec: {
      // Deleting is idempotent (an object already gone is a success): retrying a flaky store is safe.
      backoffLimit: 2,
      activeDeadlineSeconds: 300,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          enableServiceLinks: false,
          automountServiceAccountToken: false,
          securityContext: restrictedPodSecurity(),
          containers: [
            {
              name: CONTAINER,
              image: options.agentImage,
              imagePullPolicy: 'IfNotPresent',
              command: ['/usr/local/bin/node', AGENT_SCRIPT, 'delete'],
              args: [`--destination-json=${JSON.stringify(backup.spec.destination)}`, `--key=${options.key}`, ...args],
              terminationMessagePolicy: 'File',
              resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
              securityContext: restrictedContainerSecurity(),
              env: [{ name: 'NODE_ENV', value: 'production' }],
              volumeMounts: [...mounts, { name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [...volumes, { name: 'tmp', emptyDir: { sizeLimit: '16Mi' } }],
        },
      },
    },
  };
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
  const condition = (type: string) => job.status?.conditions?.find((c) => c.type === type && c.status === 'True');
  const failed = condition('Failed');
  if (!failed) return { succeeded: !!condition('Complete'), failed: false };
  // The newest pod's result: with backoffLimit 2 there may be three.
  const newestLast = [...pods].sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''));
  const terminated = newestLast.at(-1)?.status?.containerStatuses?.find((c) => c.name === CONTAINER)?.state?.terminated;
  const result = agentFailure(terminated?.message);
  const message = result ?? ([failed.reason, failed.message].filter(Boolean).join(': ') || 'the delete Job failed');
  const failedAt = failed.lastTransitionTime ? Date.parse(failed.lastTransitionTime) : NaN;
  return { succeeded: false, failed: true, message, ...(Number.isFinite(failedAt) ? { failedAt } : {}) };
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
