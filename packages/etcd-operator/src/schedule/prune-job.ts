// The Job that deletes one expired backup's stored object (retention): the backup agent's idempotent
// `delete` command, in the operator's own image. Like the backup Job, it alone mounts the credentials
// Secret (or the PVC), so the operator never reads a Secret. One Job per EtcdBackup, named after its UID,
// so an operator that dies after creating it finds it again instead of starting a second one.
import { createHash } from 'node:crypto';
import { getControllerOf, isControlledBy, type Job, type Pod } from '@quorum/runtime';
import { BACKUP_API_VERSION, BACKUP_KIND, type EtcdBackup } from '../api/etcdbackup.ts';
import { AGENT_SCRIPT, destinationVolumes, RESTRICTED_CONTAINER, RESTRICTED_POD, parseAgentResult } from '../backup/job.ts';
import { LABELS } from '../names.ts';
import type { PruneJob } from '@quorum/kit';

/** On a schedule's EtcdBackups and prune Jobs: the schedule's name. */
export const SCHEDULE_LABEL = 'etcd.quorum.dev/schedule';
/** On an EtcdBackup a schedule made: the scheduled time it was made for (RFC 3339). */
export const SCHEDULED_AT_ANNOTATION = 'etcd.quorum.dev/scheduled-at';
/** On a prune Job and its pod: the EtcdBackup whose stored object it deletes. */
export const PRUNE_LABEL = 'etcd.quorum.dev/prune';
const CONTAINER = 'delete';
const PRUNE_JOB_NAME_LABEL = 'etcd-backup-prune';

export function pruneJobName(backup: Pick<EtcdBackup, 'metadata'>): string {
  const suffix = createHash('sha256').update(backup.metadata.uid ?? '').digest('hex').slice(0, 8);
  return `${(backup.metadata.name ?? 'backup').slice(0, 40).replace(/-+$/, '')}-prune-${suffix}`;
}

export function pruneJob(backup: EtcdBackup, options: { schedule: string; key: string; agentImage: string }): Job {
  const { volumes, mounts, args } = destinationVolumes(backup.spec.destination);
  const labels = { [LABELS.managedBy]: 'quorum', [LABELS.name]: PRUNE_JOB_NAME_LABEL, [SCHEDULE_LABEL]: options.schedule, [PRUNE_LABEL]: backup.metadata.name! };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: pruneJobName(backup),
      namespace: backup.metadata.namespace!,
      labels,
      // Controlled by the backup whose object it deletes: only such a Job is its prune Job (isOwnPruneJob), and
      // deleting that record (the last step) removes the Job too.
      ownerReferences: [{ apiVersion: BACKUP_API_VERSION, kind: BACKUP_KIND, name: backup.metadata.name!, uid: backup.metadata.uid!, controller: true }],
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
          securityContext: RESTRICTED_POD,
          containers: [
            {
              name: CONTAINER,
              image: options.agentImage,
              imagePullPolicy: 'IfNotPresent',
              command: ['/usr/local/bin/node', AGENT_SCRIPT, 'delete'],
              args: [`--destination-json=${JSON.stringify(backup.spec.destination)}`, `--key=${options.key}`, ...args],
              terminationMessagePolicy: 'File',
              resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
              securityContext: RESTRICTED_CONTAINER,
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

/**
 * Whether `job`, found at the backup's prune Job name, is that backup's prune Job. Names are predictable, so a Job
 * there may be anyone's: only one the backup controls is read or deleted. MIGRATION: operators before issue 23
 * made prune Jobs with an ownerReference to the backup but without `controller`; such a Job (no controller at all,
 * the backup's UID among its owners, and the operator's labels with the prune label naming the backup) is still
 * the backup's, so an upgrade in the middle of a prune does not strand retention. Those Jobs are short-lived
 * (deleted with their backup record), so the exception ends with them.
 */
export function isOwnPruneJob(job: Job, backup: Pick<EtcdBackup, 'metadata'>): boolean {
  if (isControlledBy(job, { kind: BACKUP_KIND, metadata: backup.metadata })) return true;
  const labels = job.metadata.labels ?? {};
  const madeByEarlierOperator = labels[LABELS.managedBy] === 'quorum' && labels[LABELS.name] === PRUNE_JOB_NAME_LABEL && labels[PRUNE_LABEL] === backup.metadata.name;
  const ownedByBackup = !!backup.metadata.uid && (job.metadata.ownerReferences ?? []).some((o) => o.kind === BACKUP_KIND && o.uid === backup.metadata.uid && !o.controller);
  return !getControllerOf(job) && madeByEarlierOperator && ownedByBackup;
}

/** A prune Job's outcome; a failure carries the agent's own reason (e.g. AccessDenied) when its pod left one. */
export function observePruneJob(job: Job, pods: Pod[]): PruneJob {
  const condition = (type: string) => job.status?.conditions?.find((c) => c.type === type && c.status === 'True');
  const complete = condition('Complete');
  const failed = condition('Failed');
  if (!failed) return { succeeded: !!complete, failed: false };
  // The newest pod's result: with backoffLimit 2 there may be three.
  const newestLast = [...pods].sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''));
  const terminated = newestLast.at(-1)?.status?.containerStatuses?.find((c) => c.name === CONTAINER)?.state?.terminated;
  const result = parseAgentResult(terminated?.message);
  const message = result && !result.ok ? `${result.reason}: ${result.message}` : [failed.reason, failed.message].filter(Boolean).join(': ') || 'the delete Job failed';
  const failedAt = failed.lastTransitionTime ? Date.parse(failed.lastTransitionTime) : NaN;
  return { succeeded: false, failed: true, message, ...(Number.isFinite(failedAt) ? { failedAt } : {}) };
}
