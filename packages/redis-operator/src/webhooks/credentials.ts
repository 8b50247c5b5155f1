// The Redis operator's admission webhook: no confused deputy through backups. A RedisBackup's Job, and the restore
// init container of a Redis bootstrapped from a backup, mount the destination's credentials Secret with the
// operator's identity. Without a check, whoever may create a RedisBackup (or a Redis) could have any Secret of the
// namespace mounted and sent to an endpoint of their choosing by naming it. So a create is admitted only when
//   1. the requesting user may `get` that Secret themselves (a SubjectAccessReview for the request's user, uid,
//      groups and extra, answered by the API server's authorizer), and
//   2. the Secret carries the operator's credentials label (the kit's check, metadata only).
// Webhooks fail open (failurePolicy Ignore), so the controllers check the label again before any Job or pod mounts
// the Secret (backup/reconcile.ts, reconcile/observe.ts); the endpoint rule (https, or http to an in-cluster
// Service) is the CRD's CEL, which the API server always applies.
import { checkCredentials, credentialsSecretOf, secretAccessReviews, type CredentialsRefusal, type SecretAccess } from '@quorum/kit';
import { errorText, type AdmissionRequest, type Client, type KubeObject, type ValidatingHandler, type ValidationResult } from '@quorum/runtime';

export { secretAccessReviews, type SecretAccess } from '@quorum/kit';
import { BACKUP_KIND, REDIS_BACKUP_CREDENTIALS_LABEL } from '../api/backup.ts';
import type { BackupDestination } from '../api/destination.ts';
import { GROUP, KIND } from '../api/redis.ts';
import { SCHEDULE_KIND } from '../api/schedule.ts';
import { RedisBackups } from '../resources.ts';

/** The webhook configuration the operator's manifests install, and its one webhook per kind. */
export const VALIDATING_WEBHOOK = 'quorum-redis-validating';
/** The kinds' specs name their backup's destination at creation only (a RedisBackup's spec, a Redis's bootstrap, a schedule's destination are immutable). */
export const VALIDATING_WEBHOOKS = {
  redisbackups: { name: `credentials.redisbackups.${GROUP}`, path: '/validate-redisbackup' },
  // Its spec.destination is immutable (CEL), so its author's access is checked once, like a RedisBackup's.
  redisbackupschedules: { name: `schedule.redisbackupschedules.${GROUP}`, path: '/validate-redisbackupschedule' },
  redises: { name: `credentials.redises.${GROUP}`, path: '/validate-redis' },
} as const;

/** The credentials Secret an admitted object would have mounted, and the words that name it in a refusal. */
export interface NamedCredentials {
  secret: string;
  field: string;
  destination: BackupDestination;
}

/** The RedisBackup a Redis's bootstrap names, as stored (undefined: none by that name yet). */
export type FindBackup = (namespace: string, name: string) => Promise<{ spec?: { destination?: BackupDestination } } | undefined>;

/**
 * A RedisBackup's spec.destination credentials; a Redis's spec.bootstrap.fromBackup.backupName: the credentials of
 * that backup's destination, which its restore init container mounts. A backup that does not exist yet names
 * nothing here: the Redis waits for it (BootstrapBackupNotReady), and its own author is checked when it is created.
 */
export async function namedCredentials(obj: KubeObject, namespace: string, findBackup: FindBackup): Promise<NamedCredentials | undefined> {
  const spec = (obj as { spec?: { destination?: BackupDestination; bootstrap?: { fromBackup?: { backupName?: string } } } }).spec;
  if (obj.kind === BACKUP_KIND || obj.kind === SCHEDULE_KIND) return credentialsOf(spec?.destination, (field) => field);
  const backupName = obj.kind === KIND ? spec?.bootstrap?.fromBackup?.backupName : undefined;
  if (!backupName) return undefined;
  const backup = await findBackup(namespace, backupName);
  return credentialsOf(backup?.spec?.destination, (field) => `spec.bootstrap.fromBackup.backupName ${JSON.stringify(backupName)} (whose ${field})`);
}

/** `field` words the Secret's field of the destination (`spec.destination.s3.credentialsSecret "x"`) where it is named. */
function credentialsOf(destination: BackupDestination | undefined, field: (destinationField: string) => string): NamedCredentials | undefined {
  const secret = credentialsSecretOf(destination);
  if (secret === undefined || destination === undefined) return undefined;
  const kind = destination.s3 ? 's3' : destination.gcs ? 'gcs' : 'azure';
  return { secret, field: field(`spec.destination.${kind}.credentialsSecret ${JSON.stringify(secret)}`), destination };
}

export interface CredentialsWebhookDeps {
  access: SecretAccess;
  /** The kit's label check of the Secret (metadata only): undefined when it may be mounted. */
  labelRefusal: (namespace: string, destination: BackupDestination) => Promise<CredentialsRefusal | undefined>;
  findBackup: FindBackup;
}

/** The deps as the operator process has them: its client answers the reviews and reads the Secret's labels. */
export function credentialsWebhookDeps(client: Client): CredentialsWebhookDeps {
  return {
    access: secretAccessReviews(client),
    labelRefusal: (namespace, destination) => checkCredentials(client, namespace, destination, REDIS_BACKUP_CREDENTIALS_LABEL),
    findBackup: (namespace, name) => client.find(RedisBackups, { namespace, name }),
  };
}

/**
 * The validating webhook of both kinds. A check the API server does not answer refuses the object (a failed check
 * is no permission); a refusal names the field, the Secret, the user and why.
 */
export function validateCredentials(deps: CredentialsWebhookDeps): ValidatingHandler<KubeObject> {
  return async (req: AdmissionRequest<KubeObject>): Promise<ValidationResult> => {
    if (req.operation !== 'CREATE' || !req.object) return { allowed: true };
    const namespace = req.namespace ?? req.object.metadata.namespace ?? '';
    const who = req.userInfo.username ?? 'the requesting user';
    let named: NamedCredentials | undefined;
    try {
      named = await namedCredentials(req.object, namespace, deps.findBackup);
      if (named === undefined) return { allowed: true };
      const access = await deps.access(req.userInfo, namespace, named.secret);
      if (!access.allowed) {
        const because = access.reason ? ` (${access.reason})` : '';
        return { allowed: false, code: 403, reason: 'Forbidden', message: `${named.field}: ${who} may not get the Secret ${named.secret} in namespace ${namespace}${because}, and a pod of the operator would mount it with the operator's identity: name a Secret you may read` };
      }
      const refusal = await deps.labelRefusal(namespace, named.destination);
      if (refusal) return { allowed: false, code: 403, reason: 'Forbidden', message: `${named.field}: ${refusal.message} (${refusal.reason})` };
      return { allowed: true };
    } catch (err) {
      const what = named ? `whether ${who} may use the Secret ${named.secret} (${named.field})` : 'which credentials Secret this object names';
      return { allowed: false, code: 500, reason: 'InternalError', message: `could not check ${what}: ${errorText(err)}` };
    }
  };
}
