// localkube's s3 addon (a real MinIO in the cluster) as integration tests use it: the destination that
// EtcdBackups name, and an S3 client on the host, with the addon's own credentials, to look at the bucket.
import { S3Client } from '@aws-sdk/client-s3';
import { Secrets } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import type { Destination, S3Destination } from '../../src/api/destination.ts';
import { BACKUP_CREDENTIALS_LABEL, BACKUP_CREDENTIALS_LABEL_VALUE } from '../../src/backup/credentials.ts';

export interface S3Addon {
  bucket: string;
  /** The in-cluster endpoint, as a backup Job reaches it. */
  endpoint: string;
  /** Reaches the same server from the host; destroy() it when done. */
  hostClient: S3Client;
  /** An EtcdBackup destination in this bucket, with the addon's Secret, and `over` merged into it. */
  destination(prefix: string, over?: Partial<S3Destination>): Destination;
}

/**
 * Marks a storage addon's Secret in `namespace` as credentials Quorum's backup Jobs may mount, as a user does
 * (the operator mounts no other: backup/credentials.ts).
 */
export async function labelForBackups(env: TestEnv, namespace: string, secretName: string): Promise<void> {
  await env.client.mergePatch(Secrets, { namespace, name: secretName }, { metadata: { labels: { [BACKUP_CREDENTIALS_LABEL]: BACKUP_CREDENTIALS_LABEL_VALUE } } }, { fieldManager: 'quorum-tests' });
}

/** Enables a storage addon with its credentials Secret copied into `namespaces` and labelled for backups there. */
export async function enableStorage(env: TestEnv, name: 's3' | 'gcs' | 'azure', namespaces: string[]): Promise<Awaited<ReturnType<TestEnv['kube']['enableAddon']>>> {
  const addon = await env.kube.enableAddon(name, { namespaces });
  for (const namespace of namespaces) await labelForBackups(env, namespace, addon.secretName);
  return addon;
}

/** Enables the s3 addon with its credentials Secret copied into `namespaces` (labelled for backups). */
export async function enableS3(env: TestEnv, namespaces: string[]): Promise<S3Addon> {
  const addon = await enableStorage(env, 's3', namespaces);
  const secret = (await env.client.get(Secrets, { namespace: namespaces[0] ?? 'localkube-storage', name: addon.secretName })) as unknown as { data: Record<string, string> };
  const key = (k: string): string => Buffer.from(secret.data[k] ?? '', 'base64').toString();
  const hostClient = new S3Client({
    endpoint: await env.kube.addonURL('s3'),
    region: 'us-east-1',
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    credentials: { accessKeyId: key('accessKeyId'), secretAccessKey: key('secretAccessKey') },
  });
  return {
    bucket: addon.bucket,
    endpoint: addon.endpoint,
    hostClient,
    destination: (prefix, over = {}) => ({ s3: { bucket: addon.bucket, prefix, endpoint: addon.endpoint, forcePathStyle: true, credentialsSecret: addon.secretName, ...over } }),
  };
}
