// The Job that deletes one expired backup's stored object for a backup schedule's retention, as every operator
// makes it: the backup agent's idempotent `delete` command in the operator's own image, controlled by the backup
// whose object it deletes. Like the backup Job, it alone mounts the credentials Secret (or the PVC), so the
// operator never reads a Secret. What differs per operator (names, labels, the agent, the destination's volumes)
// comes in; the shape, the bounds and the reading of its outcome are here once.
import { createHash } from 'node:crypto';
import type { Job, KubeObject, Pod } from '@quorum/runtime';
import type { PruneJob } from './backup-schedule.ts';
import { restrictedContainerSecurity, restrictedPodSecurity } from './pod-security.ts';

type PodSpec = NonNullable<NonNullable<Job['spec']>['template']['spec']>;
type Volume = NonNullable<PodSpec['volumes']>[number];
type VolumeMount = NonNullable<PodSpec['containers'][number]['volumeMounts']>[number];

/** The prune Job's container: its termination message is the agent's result line. */
export const PRUNE_CONTAINER = 'delete';

/** One prune Job per backup, named after its UID: an operator that dies after creating it finds it again. */
export function pruneJobName(backup: Pick<KubeObject, 'metadata'>): string {
  const suffix = createHash('sha256').update(backup.metadata.uid ?? '').digest('hex').slice(0, 8);
  return `${(backup.metadata.name ?? 'backup').slice(0, 40).replace(/-+$/, '')}-prune-${suffix}`;
}

export interface PruneJobSpec {
  name: string;
  namespace: string;
  /** On the Job and its pod. */
  labels: Record<string, string>;
  /** The backup whose stored object it deletes: the Job's controller (deleting that record removes the Job too). */
  owner: { apiVersion: string; kind: string; name: string; uid: string };
  /** The operator's image, which carries the agent. */
  image: string;
  /** The agent's script in that image. */
  agentScript: string;
  /** The backup's destination (as the agent reads it), the stored object's key, and the destination's volumes. */
  destination: unknown;
  key: string;
  storage: { volumes: Volume[]; mounts: VolumeMount[]; args: string[] };
}

export function pruneJobManifest(s: PruneJobSpec): Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: s.name, namespace: s.namespace, labels: s.labels, ownerReferences: [{ ...s.owner, controller: true }] },
    spec: {
      // Deleting is idempotent (an object already gone is a success): retrying a flaky store is safe.
      backoffLimit: 2,
      activeDeadlineSeconds: 300,
      template: {
        metadata: { labels: s.labels },
        spec: {
          restartPolicy: 'Never',
          enableServiceLinks: false,
          automountServiceAccountToken: false,
          securityContext: restrictedPodSecurity(),
          containers: [
            {
              name: PRUNE_CONTAINER,
              image: s.image,
              imagePullPolicy: 'IfNotPresent',
              command: ['/usr/local/bin/node', s.agentScript, 'delete'],
              args: [`--destination-json=${JSON.stringify(s.destination)}`, `--key=${s.key}`, ...s.storage.args],
              terminationMessagePolicy: 'File',
              resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
              securityContext: restrictedContainerSecurity(),
              env: [{ name: 'NODE_ENV', value: 'production' }],
              volumeMounts: [...s.storage.mounts, { name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [...s.storage.volumes, { name: 'tmp', emptyDir: { sizeLimit: '16Mi' } }],
        },
      },
    },
  };
}

/**
 * A prune Job's outcome, from its own pods; a failure carries the agent's own words (`agentFailure` reads the
 * newest pod's termination message: with backoffLimit 2 there may be three pods), else the Job's.
 */
export function observePruneJob(job: Job, pods: readonly Pod[], agentFailure: (message: string | undefined) => string | undefined): PruneJob {
  const condition = (type: string) => job.status?.conditions?.find((c) => c.type === type && c.status === 'True');
  const failed = condition('Failed');
  if (!failed) return { succeeded: !!condition('Complete'), failed: false };
  const newestLast = [...pods].sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''));
  const terminated = newestLast.at(-1)?.status?.containerStatuses?.find((c) => c.name === PRUNE_CONTAINER)?.state?.terminated;
  const message = agentFailure(terminated?.message) ?? ([failed.reason, failed.message].filter(Boolean).join(': ') || 'the delete Job failed');
  const failedAt = failed.lastTransitionTime ? Date.parse(failed.lastTransitionTime) : NaN;
  return { succeeded: false, failed: true, message, ...(Number.isFinite(failedAt) ? { failedAt } : {}) };
}
