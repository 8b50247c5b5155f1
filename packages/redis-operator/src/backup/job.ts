// The pods that touch backups, from the operator's own image (it carries the agent): the Job of one backup
// attempt, which streams the RDB from the chosen instance into the destination, and the init container that
// fetches a backup's RDB into a bootstrapping Redis's primary before redis-server starts. The Job, not the
// operator, mounts the storage credentials Secret and the Redis's password, so the operator reads neither.
import { createHash } from 'node:crypto';
import type { V1Container } from '@kubernetes/client-node';
import { restrictedContainerSecurity, restrictedPodSecurity } from '@quorum/kit';
import type { Job, Pod } from '@quorum/runtime';
import { locationKind } from '@quorum/storage';
import { BACKUP_KIND, type RedisBackupSpec } from '../api/backup.ts';
import type { BackupDestination } from '../api/destination.ts';
import { API_VERSION, type BootstrapStatus } from '../api/redis.ts';
import { LABELS, MANAGED_BY, REDIS_PORT } from '../names.ts';
import type { AttemptOutcome } from './plan.ts';

export const BACKUP_LABEL = 'redis.quorum.dev/backup';
/**
 * The Redis a backup Job is of. Not app.kubernetes.io/instance: the Redis reconciler counts the pods carrying
 * that label as its own instances (and would remove a finished Job's pod as a failed instance).
 */
export const BACKUP_OF_LABEL = 'redis.quorum.dev/redis';
export const CREDENTIALS_DIR = '/var/run/quorum/credentials';
export const BACKUP_VOLUME_DIR = '/var/run/quorum/backup-volume';
export const PASSWORD_DIR = '/var/run/quorum/redis-auth';
/** The CA bundle of a Redis with TLS (only ca.crt of its served Secret: the agent needs no key). */
export const TLS_CA_DIR = '/var/run/quorum/redis-tls';
// The image runs the packages' built JavaScript (@quorum/kit/image): src/backup/agent.ts is dist/backup/agent.js there.
export const AGENT_SCRIPT = '/app/packages/redis-operator/dist/backup/agent.js'; // in the container
const NODE = '/usr/local/bin/node'; // in the container

/** One Job per attempt of a RedisBackup object (its UID): a backup recreated under the same name never meets an old Job. */
export function backupJobName(backup: { metadata: { name?: string; uid?: string } }, attempt: number): string {
  const suffix = createHash('sha256').update(backup.metadata.uid ?? '').digest('hex').slice(0, 8);
  return `${(backup.metadata.name ?? 'backup').slice(0, 40).replace(/-+$/, '')}-backup-${suffix}-${attempt}`;
}

/** The volumes these pods use, in the shape both the runtime's Job type and the client's V1Volume accept. */
interface Volume {
  name: string;
  persistentVolumeClaim?: { claimName: string };
  secret?: { secretName: string; defaultMode: number; items?: { key: string; path: string }[] };
  emptyDir?: { sizeLimit: string };
}
interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
}

/** The volumes and mounts that give the agent its credentials or its PVC. */
export function destinationVolumes(destination: BackupDestination, prefix = ''): { volumes: Volume[]; mounts: VolumeMount[]; args: string[] } {
  if (locationKind(destination) === 'pvc') {
    const name = `${prefix}backup-volume`;
    return { volumes: [{ name, persistentVolumeClaim: { claimName: destination.pvc!.claimName } }], mounts: [{ name, mountPath: BACKUP_VOLUME_DIR }], args: [`--pvc-root=${BACKUP_VOLUME_DIR}`] };
  }
  const name = `${prefix}credentials`;
  const secret = (destination.s3 ?? destination.gcs ?? destination.azure)!.credentialsSecret;
  return { volumes: [{ name, secret: { secretName: secret, defaultMode: 0o440 } }], mounts: [{ name, mountPath: CREDENTIALS_DIR, readOnly: true }], args: [`--credentials-dir=${CREDENTIALS_DIR}`] };
}

export interface BackupJobOptions {
  attempt: number;
  /** The instance to stream from, and its stable host name. */
  instance: string;
  host: string;
  redis: string;
  auth: { secretName: string; key: string };
  /** The Secret whose ca.crt verifies the Redis's TLS; absent without TLS. */
  tlsSecretName?: string;
  agentImage: string;
}

/** The labels every backup Job of the Redis `redis` and its pod carry: the Redis's NetworkPolicy admits these pods to 6379. */
export function backupPodLabels(redis: string): Record<string, string> {
  return { [LABELS.managedBy]: MANAGED_BY, [LABELS.name]: 'redis-backup', [BACKUP_OF_LABEL]: redis };
}

export function backupJob(backup: { metadata: { name?: string; namespace?: string; uid?: string }; spec: RedisBackupSpec }, o: BackupJobOptions): Job {
  const destination = destinationVolumes(backup.spec.destination);
  const labels = { ...backupPodLabels(o.redis), [BACKUP_LABEL]: backup.metadata.name! };
  const password: Volume = { name: 'redis-auth', secret: { secretName: o.auth.secretName, defaultMode: 0o440, items: [{ key: o.auth.key, path: 'password' }] } };
  const tls = o.tlsSecretName !== undefined
    ? { volumes: [{ name: 'redis-tls', secret: { secretName: o.tlsSecretName, defaultMode: 0o440, items: [{ key: 'ca.crt', path: 'ca.crt' }] } }], mounts: [{ name: 'redis-tls', mountPath: TLS_CA_DIR, readOnly: true }], args: [`--tls-ca-file=${TLS_CA_DIR}/ca.crt`] }
    : { volumes: [], mounts: [], args: [] };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: backupJobName(backup, o.attempt),
      namespace: backup.metadata.namespace!,
      labels,
      ownerReferences: [{ apiVersion: API_VERSION, kind: BACKUP_KIND, name: backup.metadata.name!, uid: backup.metadata.uid!, controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      // One try per Job: the operator makes the next attempt itself, and says so (status, event, metric, log).
      backoffLimit: 0,
      activeDeadlineSeconds: 1800,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          enableServiceLinks: false,
          automountServiceAccountToken: false,
          securityContext: restrictedPodSecurity(),
          containers: [
            {
              name: 'backup',
              image: o.agentImage,
              imagePullPolicy: 'IfNotPresent',
              command: [NODE, AGENT_SCRIPT, 'backup'],
              args: [`--host=${o.host}`, `--port=${REDIS_PORT}`, `--redis=${o.redis}`, `--instance=${o.instance}`, `--destination-json=${JSON.stringify(backup.spec.destination)}`, `--password-file=${PASSWORD_DIR}/password`, ...tls.args, ...destination.args],
              terminationMessagePolicy: 'File',
              resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '320Mi' } },
              securityContext: restrictedContainerSecurity(),
              env: [{ name: 'NODE_ENV', value: 'production' }],
              volumeMounts: [...destination.mounts, { name: 'redis-auth', mountPath: PASSWORD_DIR, readOnly: true }, ...tls.mounts, { name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [...destination.volumes, password, ...tls.volumes, { name: 'tmp', emptyDir: { sizeLimit: '16Mi' } }],
        },
      },
    },
  };
}

/** The restore init container of an instance pod, and the volumes it needs besides the pod's data and template. */
export function restoreInitContainer(bootstrap: BootstrapStatus, agentImage: string, mounts: { data: string; template: string }): { container: V1Container; volumes: Volume[] } {
  const destination = destinationVolumes(bootstrap.destination, 'restore-');
  return {
    volumes: destination.volumes,
    container: {
      name: 'restore',
      image: agentImage,
      imagePullPolicy: 'IfNotPresent',
      command: [NODE, AGENT_SCRIPT, 'fetch'],
      args: [
        `--destination-json=${JSON.stringify(bootstrap.destination)}`,
        `--key=${bootstrap.key}`,
        `--sha256=${bootstrap.sha256}`,
        `--out=${mounts.data}/dump.rdb`,
        `--data-dir=${mounts.data}`,
        `--primary-file=${mounts.template}/primary`,
        '--pod-name=$(POD_NAME)',
        ...destination.args,
      ],
      env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }, { name: 'NODE_ENV', value: 'production' }],
      terminationMessagePolicy: 'File',
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '320Mi' } },
      securityContext: restrictedContainerSecurity(),
      volumeMounts: [{ name: 'data', mountPath: mounts.data }, { name: 'template', mountPath: mounts.template, readOnly: true }, ...destination.mounts],
    },
  };
}

/** Waiting reasons that do not go away by waiting a few seconds. */
const CANNOT_START = new Set(['CreateContainerConfigError', 'CreateContainerError', 'ImagePullBackOff', 'ErrImagePull', 'InvalidImageName']);

/** How an attempt's Job stands, from the Job and its pod: running, cannot start, or ended with the agent's result. */
export function attemptOutcome(job: Job, pods: readonly Pod[]): AttemptOutcome {
  const container = pods[0]?.status?.containerStatuses?.find((c) => c.name === 'backup');
  const terminated = container?.state?.terminated;
  const waiting = container?.state?.waiting;
  if (terminated !== undefined) return parseResult(terminated.message) ?? { type: 'failed', reason: 'BackupFailed', message: `the backup container exited ${terminated.exitCode} (${terminated.reason ?? ''}) without a result` };
  const failed = job.status?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
  if (failed) return { type: 'failed', reason: failed.reason === 'DeadlineExceeded' ? 'Timeout' : 'BackupFailed', message: `the Job failed: ${failed.message ?? failed.reason ?? ''}` };
  if (waiting?.reason && CANNOT_START.has(waiting.reason)) return { type: 'failed', reason: 'JobCannotStart', message: `${waiting.reason}: ${waiting.message ?? ''}`.trim() };
  return { type: 'running' };
}

/** The agent's one-line result, or undefined for anything else (a crash's log tail). */
export function parseResult(text: string | undefined): AttemptOutcome | undefined {
  const line = text?.trim().split('\n').at(-1) ?? '';
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const str = (k: string): string => (typeof value[k] === 'string' ? value[k] : '');
  if (value['ok'] === true && /^[0-9a-f]{64}$/.test(str('sha256')) && str('key') !== '') {
    return { type: 'stored', key: str('key'), location: str('location'), sizeBytes: Number(value['sizeBytes'] ?? 0), sha256: str('sha256'), serverVersion: str('serverVersion') };
  }
  if (value['ok'] === false) return { type: 'failed', reason: str('reason') || 'BackupFailed', message: str('message') };
  return undefined;
}
