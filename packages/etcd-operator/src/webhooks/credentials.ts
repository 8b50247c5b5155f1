// The access check of a credentials Secret at admission: an object that names one (an EtcdBackup's or an
// EtcdBackupSchedule's destination, an EtcdRestore's destination, an EtcdCluster's spec.bootstrap.fromBackup)
// is admitted only when the requesting user may `get` that Secret themselves, as the API server's authorizer
// answers a SubjectAccessReview for the request's userInfo (user, uid, groups, extra). Otherwise the Job the
// operator makes would mount, with the operator's identity, a Secret its author could not read: a confused
// deputy. The operator's own check (backup/credentials.ts: the Secret must be labelled for backups) stands
// behind this one, since the webhooks fail open.
import { subjectAccessReview, SubjectAccessReviews, type AdmissionRequest, type Client, type UserInfo, type ValidatingHandler, type ValidationResult } from '@quorum/runtime';
import { isPlainObject } from '@quorum/runtime/crd';
import type { Destination } from '../api/destination.ts';
import { credentialsSecretOf } from '../backup/credentials.ts';

/** Whether `user` may get the Secret `name` in `namespace`, and the authorizer's words when not. */
export type SecretAccess = (user: UserInfo, namespace: string, name: string) => Promise<{ allowed: boolean; reason: string }>;

/** SecretAccess as the API server answers it (the operator needs `create subjectaccessreviews`). */
export function secretAccessReviews(client: Pick<Client, 'create'>): SecretAccess {
  return async (user, namespace, name) => {
    const review = await client.create(SubjectAccessReviews, subjectAccessReview(user, { verb: 'get', group: '', resource: 'secrets', namespace, name }));
    const status = review.status;
    return { allowed: status?.allowed === true, reason: status?.reason || status?.evaluationError || '' };
  };
}

/**
 * The credentials Secrets an admitted object names: spec.destination's (EtcdBackup, EtcdBackupSchedule,
 * EtcdRestore), spec.backup.destination's (an EtcdCluster's backups before version changes) and
 * spec.bootstrap.fromBackup.destination's.
 */
export function namedCredentialsSecrets(obj: unknown): string[] {
  const spec = isPlainObject(obj) && isPlainObject(obj.spec) ? obj.spec : undefined;
  if (!spec) return [];
  const bootstrap = isPlainObject(spec.bootstrap) && isPlainObject(spec.bootstrap.fromBackup) ? spec.bootstrap.fromBackup : undefined;
  const backup = isPlainObject(spec.backup) ? spec.backup : undefined;
  const secrets = [spec.destination, backup?.destination, bootstrap?.destination].map((d) => (isPlainObject(d) ? credentialsSecretOf(d as Destination) : undefined));
  return [...new Set(secrets.filter((s): s is string => s !== undefined))];
}

/**
 * `handler`, and then, on a create or an update, the access check for the requesting user of each credentials
 * Secret the object names that the object before did not. A review the API server does not answer refuses
 * the object (a failed check is no permission).
 */
export function withCredentialsAccess<T>(handler: ValidatingHandler<T>, access: SecretAccess): ValidatingHandler<T> {
  return async (req: AdmissionRequest<T>): Promise<ValidationResult> => {
    const result = await handler(req);
    if (!result.allowed || (req.operation !== 'CREATE' && req.operation !== 'UPDATE')) return result;
    const before = new Set(req.operation === 'UPDATE' ? namedCredentialsSecrets(req.oldObject) : []);
    const namespace = req.namespace ?? '';
    const who = req.userInfo.username ?? 'the requesting user';
    const warnings = result.warnings ? { warnings: result.warnings } : {};
    for (const secret of namedCredentialsSecrets(req.object).filter((s) => !before.has(s))) {
      let decision: { allowed: boolean; reason: string };
      try {
        decision = await access(req.userInfo, namespace, secret);
      } catch (err) {
        return { allowed: false, code: 500, reason: 'InternalError', message: `could not check whether ${who} may get the credentials Secret ${secret}: ${err instanceof Error ? err.message : String(err)}`, ...warnings };
      }
      if (decision.allowed) continue;
      const because = decision.reason ? ` (${decision.reason})` : '';
      const message = `credentialsSecret ${JSON.stringify(secret)}: ${who} may not get the Secret ${secret} in namespace ${namespace}${because}, and a pod of the operator would mount it with the operator's identity: name a Secret you may read`;
      return { allowed: false, code: 403, reason: 'Forbidden', message, ...warnings };
    }
    return result;
  };
}

const ACCESS_CHECK =
  "The credentials Secret named (`credentialsSecret` of a destination) must be one the requesting user may `get` (a SubjectAccessReview for the request's user, groups, uid and extra): a pod the operator makes mounts it with the operator's identity.";
/** What docs/api.md says of this check, for the kinds whose controllers also check the Secret's label. */
export const CREDENTIALS_ACCESS_CHECK = `${ACCESS_CHECK} Without the webhook, the operator still mounts only a Secret labelled \`etcd.quorum.dev/backup-credentials: "true"\` (Failed, reason \`CredentialsNotLabelled\` or \`CredentialsSecretNotFound\`, and nothing is created).`;
/** ... and for EtcdCluster, whose members' bootstrap does not check that label yet. */
export const CREDENTIALS_ACCESS_CHECK_WEBHOOK_ONLY = `${ACCESS_CHECK} For \`spec.backup.destination\`, the backups before version changes are EtcdBackups, whose controller still checks the Secret's label without the webhook; \`spec.bootstrap.fromBackup.destination\` of an EtcdCluster written directly is checked by the webhook only (an EtcdRestore's cluster is checked by the restore controller).`;
