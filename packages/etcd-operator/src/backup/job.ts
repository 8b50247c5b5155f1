// The Job that takes one backup: the backup agent (agent.ts, in the operator's own image) streams the
// snapshot from the chosen member straight into the destination. The Job, not the operator, mounts the
// credentials Secret, so the operator needs no access to Secrets at all; and a PVC destination is a volume
// only a pod can mount.
import { restrictedContainerSecurity, restrictedPodSecurity } from '@quorum/kit';
import { createHash } from 'node:crypto';
import type { Job, Pod } from '@quorum/runtime';
import { locationKind } from '@quorum/storage';
import { BACKUP_API_VERSION, BACKUP_KIND, type EtcdBackup } from '../api/etcdbackup.ts';
import type { Destination } from '../api/destination.ts';
import { clientURL, LABELS } from '../names.ts';
import type { AgentResult, ObservedJob } from './plan.ts';

export const BACKUP_LABEL = 'etcd.quorum.dev/backup';
/** The labels every backup Job's pod carries (with BACKUP_LABEL): a cluster's NetworkPolicy admits them to the client port. */
export const BACKUP_JOB_LABELS = { [LABELS.managedBy]: 'quorum', [LABELS.name]: 'etcd-backup' } as const;
export const CREDENTIALS_DIR = '/var/run/quorum/credentials';
export const BACKUP_VOLUME_DIR = '/var/run/quorum/backup-volume';
// The image runs the packages' built JavaScript (@quorum/kit/image): src/backup/agent.ts is dist/backup/agent.js there.
export const AGENT_SCRIPT = '/app/packages/etcd-operator/dist/backup/agent.js'; // in the container

/** A Job name per EtcdBackup object (its UID), so a backup recreated under the same name never meets an old Job. */
export function backupJobName(backup: EtcdBackup): string {
  const suffix = createHash('sha256').update(backup.metadata.uid ?? '').digest('hex').slice(0, 8);
  return `${(backup.metadata.name ?? 'backup').slice(0, 40).replace(/-+$/, '')}-backup-${suffix}`;
}

/** A bound that grows with the database: 5 minutes, plus the size at 2 MiB/s (a slow link), never a fixed 60 s. */
export function jobDeadlineSeconds(dbSize: number): number {
  return 300 + Math.ceil(dbSize / (2 * 1024 * 1024));
}

type PodSpec = NonNullable<Pod['spec']>;
/** A core/v1 Volume, as pods (member pods and Jobs' templates) carry them. */
export type Volume = NonNullable<PodSpec['volumes']>[number];
/** A core/v1 VolumeMount. */
export type VolumeMount = NonNullable<PodSpec['containers'][number]['volumeMounts']>[number];

/** The volumes and mounts that give the agent its credentials or its PVC, read-only where it only reads. */
export function destinationVolumes(destination: Destination): { volumes: Volume[]; mounts: VolumeMount[]; args: string[] } {
  const kind = locationKind(destination);
  if (kind === 'pvc') {
    return {
      volumes: [{ name: 'backup-volume', persistentVolumeClaim: { claimName: destination.pvc!.claimName } }],
      mounts: [{ name: 'backup-volume', mountPath: BACKUP_VOLUME_DIR }],
      args: [`--pvc-root=${BACKUP_VOLUME_DIR}`],
    };
  }
  const secret = (destination.s3 ?? destination.gcs ?? destination.azure)!.credentialsSecret;
  return {
    volumes: [{ name: 'credentials', secret: { secretName: secret, defaultMode: 0o440 } }],
    mounts: [{ name: 'credentials', mountPath: CREDENTIALS_DIR, readOnly: true }],
    args: [`--credentials-dir=${CREDENTIALS_DIR}`],
  };
}

/** The restricted Pod Security Standard, which the agent meets (the kit's defaults). */
export const RESTRICTED_POD = restrictedPodSecurity();
export const RESTRICTED_CONTAINER = restrictedContainerSecurity();

/** The backup container's mount of the cluster's client identity Secret (ca.crt, tls.crt, tls.key), for client TLS. */
const CLIENT_TLS_MOUNT = { name: 'client-tls', mountPath: '/etc/etcd-client', readOnly: true } as const;
export const CLIENT_TLS_DIR = CLIENT_TLS_MOUNT.mountPath;

export interface BackupJobOptions {
  member: string;
  dbSize: number;
  agentImage: string;
  /** For a cluster with client TLS: the Secret with the client identity the agent dials the member with. */
  clientTLSSecret?: string;
}

export function backupJob(backup: EtcdBackup, options: BackupJobOptions): Job {
  const ns = backup.metadata.namespace!;
  const cluster = backup.spec.clusterName;
  const destination = destinationVolumes(backup.spec.destination);
  // The agent dials the member by its host name, which its server certificate carries, with the cluster's client
  // certificate mounted whole (the operator never hands key material to the Job through its arguments).
  const tls: ReturnType<typeof destinationVolumes> = options.clientTLSSecret
    ? { volumes: [{ name: 'client-tls', secret: { secretName: options.clientTLSSecret, defaultMode: 0o440 } }], mounts: [{ ...CLIENT_TLS_MOUNT }], args: [`--tls-dir=${CLIENT_TLS_DIR}`] }
    : { volumes: [], mounts: [], args: [] };
  const volumes = [...destination.volumes, ...tls.volumes];
  const mounts = [...destination.mounts, ...tls.mounts];
  const args = [...destination.args, ...tls.args];
  const labels = { ...BACKUP_JOB_LABELS, [BACKUP_LABEL]: backup.metadata.name! };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: backupJobName(backup),
      namespace: ns,
      labels,
      ownerReferences: [{ apiVersion: BACKUP_API_VERSION, kind: BACKUP_KIND, name: backup.metadata.name!, uid: backup.metadata.uid!, controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      // One attempt: a retry could store a second snapshot under another name.
      backoffLimit: 0,
      activeDeadlineSeconds: jobDeadlineSeconds(options.dbSize),
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          enableServiceLinks: false,
          automountServiceAccountToken: false,
          securityContext: RESTRICTED_POD,
          containers: [
            {
              name: 'backup',
              image: options.agentImage,
              imagePullPolicy: 'IfNotPresent',
              command: ['/usr/local/bin/node', AGENT_SCRIPT, 'backup'],
              args: [
                `--endpoint=${clientURL(cluster, ns, options.member, options.clientTLSSecret ? 'https' : 'http')}`,
                `--cluster=${cluster}`,
                `--member=${options.member}`,
                `--destination-json=${JSON.stringify(backup.spec.destination)}`,
                ...args,
              ],
              // The agent writes its one-line JSON result here; the operator reads it from the pod status.
              terminationMessagePolicy: 'File',
              // Streaming keeps memory flat whatever the database size (the RSS bound is 64 MiB of growth).
              resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '320Mi' } },
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

/** Parses the agent's result line; anything else is not a result (e.g. a crash's log tail). */
export function parseAgentResult(text: string | undefined): AgentResult | undefined {
  if (!text) return undefined;
  const line = text.trim().split('\n').at(-1) ?? '';
  try {
    const value = JSON.parse(line) as Record<string, unknown>;
    const text = (k: string, fallback = ''): string => (typeof value[k] === 'string' ? value[k] : typeof value[k] === 'number' ? String(value[k]) : fallback);
    if (value['ok'] === true && typeof value['key'] === 'string' && typeof value['sha256'] === 'string') {
      return {
        ok: true,
        key: value['key'],
        location: text('location', ''),
        sizeBytes: Number(value['sizeBytes'] ?? 0),
        sha256: value['sha256'],
        revision: text('revision', '0'),
        etcdVersion: text('etcdVersion', ''),
        member: text('member', ''),
        startedAt: text('startedAt', ''),
        completedAt: text('completedAt'),
      };
    }
    if (value['ok'] === false) return { ok: false, reason: text('reason', 'BackupFailed'), message: text('message') };
  } catch {
    return undefined;
  }
  return undefined;
}

/** The Job controller's label on every pod it makes: the Job's UID. */
export const JOB_CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';

/**
 * The pods `job` made: its UID in their controller-uid label and as their controlling owner, as the Job
 * controller writes them. Never by name labels alone: anyone who may create pods in the namespace can label one
 * with a Job's name, and a Job deleted and made again under its name leaves pods of the old one; either's
 * termination message would be read as this Job's result.
 */
export function podsOfJob(job: Job, pods: readonly Pod[]): Pod[] {
  const uid = job.metadata.uid;
  if (!uid) return [];
  return pods.filter((p) => p.metadata.labels?.[JOB_CONTROLLER_UID_LABEL] === uid && p.metadata.ownerReferences?.some((o) => o.controller === true && o.kind === 'Job' && o.uid === uid));
}

/** Waiting reasons that do not go away by waiting a few seconds. */
const CANNOT_START = new Set(['CreateContainerConfigError', 'CreateContainerError', 'ImagePullBackOff', 'ErrImagePull', 'InvalidImageName']);

/**
 * The Job as the planner sees it. How long its pod has been unable to start is measured from the pod's
 * creation, which the API server keeps: an operator restarted meanwhile must not start the grace again.
 */
export function observeJob(job: Job, pods: Pod[], now: number): ObservedJob {
  const condition = (type: string): { status: string; reason?: string; message?: string } | undefined => job.status?.conditions?.find((c) => c.type === type && c.status === 'True');
  const failed = condition('Failed');
  const pod = pods[0];
  const container = pod?.status?.containerStatuses?.find((c) => c.name === 'backup');
  const terminated = container?.state?.terminated;
  const waiting = container?.state?.waiting;
  const result = parseAgentResult(terminated?.message);
  const created = Date.parse(pod?.metadata.creationTimestamp ?? '');
  const cannotStart = waiting?.reason && CANNOT_START.has(waiting.reason) ? { message: `${waiting.reason}: ${waiting.message ?? ''}`.trim(), since: Number.isFinite(created) ? Math.min(created, now) : now } : undefined;
  const failureMessage = failed
    ? [failed.reason, failed.message, terminated && !result ? `exit code ${terminated.exitCode}: ${terminated.message ?? terminated.reason ?? ''}` : undefined].filter(Boolean).join(': ')
    : undefined;
  return {
    // The agent exiting 0 is the success: the Job controller says Complete only a batch period (1 s) or
    // more after it, and with backoffLimit 0 and restartPolicy Never nothing can undo it.
    succeeded: !!condition('Complete') || terminated?.exitCode === 0,
    failed: !!failed,
    ...(failureMessage ? { failureMessage } : {}),
    ...(result ? { result } : {}),
    ...(cannotStart ? { cannotStart } : {}),
  };
}
