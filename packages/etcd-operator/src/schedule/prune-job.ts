// The Job that deletes one expired backup's stored object (retention): the backup agent's idempotent
// `delete` command, in the operator's own image. Like the backup Job, it alone mounts the credentials
// Secret (or the PVC), so the operator never reads a Secret. One Job per EtcdBackup, named after its UID,
// so an operator that dies after creating it finds it again instead of starting a second one.
import { getControllerOf, isControlledBy, type Job, type Pod } from '@quorum/runtime';
import { BACKUP_API_VERSION, BACKUP_KIND, type EtcdBackup } from '../api/etcdbackup.ts';
import { AGENT_SCRIPT, destinationVolumes, parseAgentResult } from '../backup/job.ts';
import { LABELS } from '../names.ts';
import { observePruneJob as observeKitPruneJob, pruneJobManifest, pruneJobName as kitPruneJobName, type PruneJob } from '@quorum/kit';

/** On a schedule's EtcdBackups and prune Jobs: the schedule's name. */
export const SCHEDULE_LABEL = 'etcd.quorum.dev/schedule';
/** On an EtcdBackup a schedule made: the scheduled time it was made for (RFC 3339). */
export const SCHEDULED_AT_ANNOTATION = 'etcd.quorum.dev/scheduled-at';
/** On a prune Job and its pod: the EtcdBackup whose stored object it deletes. */
export const PRUNE_LABEL = 'etcd.quorum.dev/prune';
const PRUNE_JOB_NAME_LABEL = 'etcd-backup-prune';

export function pruneJobName(backup: Pick<EtcdBackup, 'metadata'>): string {
  return kitPruneJobName(backup);
}

export function pruneJob(backup: EtcdBackup, options: { schedule: string; key: string; agentImage: string }): Job {
  const labels = { [LABELS.managedBy]: 'quorum', [LABELS.name]: PRUNE_JOB_NAME_LABEL, [SCHEDULE_LABEL]: options.schedule, [PRUNE_LABEL]: backup.metadata.name! };
  return pruneJobManifest({
    name: pruneJobName(backup),
    namespace: backup.metadata.namespace!,
    labels,
    owner: { apiVersion: BACKUP_API_VERSION, kind: BACKUP_KIND, name: backup.metadata.name!, uid: backup.metadata.uid! },
    image: options.agentImage,
    agentScript: AGENT_SCRIPT,
    destination: backup.spec.destination,
    key: options.key,
    storage: destinationVolumes(backup.spec.destination),
  });
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
  return observeKitPruneJob(job, pods, (message) => {
    const result = parseAgentResult(message);
    return result && !result.ok ? `${result.reason}: ${result.message}` : undefined;
  });
}
