// Which storage credentials Secret a backup, a prune or a restore may mount. The Job the operator makes mounts
// the Secret its spec names, with the operator's identity: without a check, whoever may create an EtcdBackup
// could have any Secret of the namespace sent to an endpoint of their choosing (a confused deputy). Two checks
// close that: the validating webhooks ask the API server whether the requesting user may `get` the Secret
// (webhooks/credentials.ts), and, since the webhooks fail open, the operator itself mounts only a Secret its
// owner marked for Quorum backups with BACKUP_CREDENTIALS_LABEL. The operator reads only the Secret's metadata
// (PartialObjectMetadata): the credentials never reach its process.
import { isNotFound, type Client } from '@quorum/runtime';
import type { Destination } from '../api/destination.ts';

/** The label (value "true") that marks a Secret as storage credentials Quorum's backup Jobs may mount. */
export const BACKUP_CREDENTIALS_LABEL = 'etcd.quorum.dev/backup-credentials';
export const BACKUP_CREDENTIALS_LABEL_VALUE = 'true';

/** Why the operator mounts no credentials: the Secret is missing, or not marked for backups. */
export interface CredentialsRefusal {
  reason: 'CredentialsSecretNotFound' | 'CredentialsNotLabelled';
  message: string;
}

/** The credentials Secret a destination names (a PVC destination names none). */
export function credentialsSecretOf(destination: Destination | undefined): string | undefined {
  return (destination?.s3 ?? destination?.gcs ?? destination?.azure)?.credentialsSecret;
}

/** The refusal for a Secret with these labels (undefined: the Secret does not exist), or undefined when it may be mounted. */
export function credentialsRefusal(secret: string, labels: Readonly<Record<string, string>> | undefined | null): CredentialsRefusal | undefined {
  const marker = `${BACKUP_CREDENTIALS_LABEL}=${BACKUP_CREDENTIALS_LABEL_VALUE}`;
  if (labels === null) return { reason: 'CredentialsSecretNotFound', message: `the credentials Secret ${secret} does not exist in this namespace (create it with the label ${marker})` };
  if (labels?.[BACKUP_CREDENTIALS_LABEL] === BACKUP_CREDENTIALS_LABEL_VALUE) return undefined;
  return { reason: 'CredentialsNotLabelled', message: `the credentials Secret ${secret} is not labelled ${marker}: the operator mounts only Secrets marked for Quorum backups (kubectl label secret ${secret} ${marker})` };
}

const METADATA_ONLY = { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json' };

/** The Secret's labels, read as metadata only; null when it does not exist. */
async function secretLabels(client: Pick<Client, 'request'>, namespace: string, name: string, signal?: AbortSignal): Promise<Record<string, string> | null> {
  try {
    const meta = await client.request<{ metadata?: { labels?: Record<string, string> } }>('GET', `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`, undefined, { headers: METADATA_ONLY, ...(signal ? { signal } : {}) });
    return meta.metadata?.labels ?? {};
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

/** Whether a Job may mount the destination's credentials Secret: undefined when it may (or none is named). */
export async function checkCredentials(client: Pick<Client, 'request'>, namespace: string, destination: Destination | undefined, signal?: AbortSignal): Promise<CredentialsRefusal | undefined> {
  const secret = credentialsSecretOf(destination);
  if (secret === undefined) return undefined;
  return credentialsRefusal(secret, await secretLabels(client, namespace, secret, signal));
}
