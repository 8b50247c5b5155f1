// Which storage credentials Secret a backup, a prune or a restore may mount. The Job (or init container) an
// operator makes mounts the Secret its object names, with the operator's identity: without a check, whoever may
// create a backup object could have any Secret of the namespace sent to an endpoint of their choosing (a confused
// deputy). The operator therefore mounts only a Secret its owner marked for Quorum backups with the operator's
// credentials label (`<group>/backup-credentials=true`), read as metadata only: the credentials never reach the
// operator's process. (Admission webhooks add a SubjectAccessReview of the requesting user where an operator has
// them; they fail open, so this check is the one that always holds.)
import { isNotFound, subjectAccessReview, SubjectAccessReviews, type Client, type UserInfo } from '@quorum/runtime';
import type { Destination } from './backup-destination.ts';

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

/**
 * The refusal for a Secret with these labels (null: the Secret does not exist), or undefined when it may be
 * mounted; `label` is the operator's credentials label (e.g. etcd.quorum.dev/backup-credentials).
 */
export function credentialsRefusal(secret: string, labels: Readonly<Record<string, string>> | undefined | null, label: string): CredentialsRefusal | undefined {
  const marker = `${label}=${BACKUP_CREDENTIALS_LABEL_VALUE}`;
  if (labels === null) return { reason: 'CredentialsSecretNotFound', message: `the credentials Secret ${secret} does not exist in this namespace (create it with the label ${marker})` };
  if (labels?.[label] === BACKUP_CREDENTIALS_LABEL_VALUE) return undefined;
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

/** Whether a pod may mount the destination's credentials Secret: undefined when it may (or none is named). */
export async function checkCredentials(client: Pick<Client, 'request'>, namespace: string, destination: Destination | undefined, label: string, signal?: AbortSignal): Promise<CredentialsRefusal | undefined> {
  const secret = credentialsSecretOf(destination);
  if (secret === undefined) return undefined;
  return credentialsRefusal(secret, await secretLabels(client, namespace, secret, signal), label);
}

/** Whether `user` may get the Secret `name` in `namespace`, and the authorizer's words when not. */
export type SecretAccess = (user: UserInfo, namespace: string, name: string) => Promise<{ allowed: boolean; reason: string }>;

/**
 * SecretAccess as the API server's authorizer answers it, for an admission webhook that admits an object naming a
 * Secret only when its author may read that Secret (the operator needs `create subjectaccessreviews`).
 */
export function secretAccessReviews(client: Pick<Client, 'create'>): SecretAccess {
  return async (user, namespace, name) => {
    const status = (await client.create(SubjectAccessReviews, subjectAccessReview(user, { verb: 'get', group: '', resource: 'secrets', namespace, name }))).status;
    return { allowed: status?.allowed === true, reason: status?.reason || status?.evaluationError || '' };
  };
}
