// Which storage credentials Secret a backup, a prune or a restore may mount: the kit's check (backup-credentials.ts,
// shared with the Redis operator) under the etcd operator's label. The validating webhooks add a
// SubjectAccessReview of the requesting user (webhooks/credentials.ts); since they fail open, the operator itself
// mounts only a Secret its owner marked with BACKUP_CREDENTIALS_LABEL, read as metadata only.
import { checkCredentials as checkLabelled, credentialsRefusal as refusalFor, type CredentialsRefusal } from '@quorum/kit';
import type { Client } from '@quorum/runtime';
import type { Destination } from '../api/destination.ts';

export { BACKUP_CREDENTIALS_LABEL_VALUE, credentialsSecretOf, type CredentialsRefusal } from '@quorum/kit';

/** The label (value "true") that marks a Secret as storage credentials Quorum's backup Jobs may mount. */
export const BACKUP_CREDENTIALS_LABEL = 'etcd.quorum.dev/backup-credentials';

/** The refusal for a Secret with these labels (null: the Secret does not exist), or undefined when it may be mounted. */
export function credentialsRefusal(secret: string, labels: Readonly<Record<string, string>> | undefined | null): CredentialsRefusal | undefined {
  return refusalFor(secret, labels, BACKUP_CREDENTIALS_LABEL);
}

/** Whether a Job may mount the destination's credentials Secret: undefined when it may (or none is named). */
export function checkCredentials(client: Pick<Client, 'request'>, namespace: string, destination: Destination | undefined, signal?: AbortSignal): Promise<CredentialsRefusal | undefined> {
  return checkLabelled(client, namespace, destination, BACKUP_CREDENTIALS_LABEL, signal);
}
