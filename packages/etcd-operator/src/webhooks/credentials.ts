// The access check of a named Secret at admission: an object that names one (an EtcdBackup's or an
// EtcdBackupSchedule's destination, an EtcdRestore's destination, an EtcdCluster's spec.bootstrap.fromBackup,
// the TLS Secrets of an EtcdCluster or of the cluster an EtcdRestore makes) is admitted only when the requesting user may `get` that Secret themselves, as the API server's authorizer
// answers a SubjectAccessReview for the request's userInfo (user, uid, groups, extra). Otherwise the Job the
// operator makes would mount, with the operator's identity, a Secret its author could not read: a confused
// deputy. The operator's own check (backup/credentials.ts: the Secret must be labelled for backups) stands
// behind this one, since the webhooks fail open.
import type { SecretAccess } from '@quorum/kit';
import type { AdmissionRequest, ValidatingHandler, ValidationResult } from '@quorum/runtime';
import { isPlainObject } from '@quorum/runtime/crd';
import type { Destination } from '../api/destination.ts';
import { credentialsSecretOf } from '../backup/credentials.ts';

export { secretAccessReviews, type SecretAccess } from '@quorum/kit';

/** A Secret an admitted object names, and the words that name the field in a refusal. */
export interface NamedSecret {
  name: string;
  field: string;
}

/**
 * The Secrets an admitted object names that pods the operator makes would mount: spec.destination's
 * credentials (EtcdBackup, EtcdBackupSchedule, EtcdRestore), spec.backup.destination's (an EtcdCluster's
 * backups before version changes), spec.bootstrap.fromBackup.destination's, and the TLS Secrets of
 * spec.tls (an EtcdCluster) or spec.clusterSpec.tls (the cluster an EtcdRestore makes).
 */
export function namedSecrets(obj: unknown): NamedSecret[] {
  const spec = isPlainObject(obj) && isPlainObject(obj.spec) ? obj.spec : undefined;
  if (!spec) return [];
  const bootstrap = isPlainObject(spec.bootstrap) && isPlainObject(spec.bootstrap.fromBackup) ? spec.bootstrap.fromBackup : undefined;
  const backup = isPlainObject(spec.backup) ? spec.backup : undefined;
  const credentials = [spec.destination, backup?.destination, bootstrap?.destination]
    .map((d) => (isPlainObject(d) ? credentialsSecretOf(d as Destination) : undefined))
    .filter((name): name is string => name !== undefined)
    .map((name) => ({ name, field: 'credentialsSecret' }));
  const tls = (prefix: string, value: unknown): NamedSecret[] =>
    (['peer', 'client'] as const).flatMap((side) => {
      const name = isPlainObject(value) && isPlainObject(value[side]) ? value[side].secretName : undefined;
      return typeof name === 'string' && name !== '' ? [{ name, field: `${prefix}.${side}.secretName` }] : [];
    });
  const clusterSpec = isPlainObject(spec.clusterSpec) ? spec.clusterSpec : undefined;
  const all = [...credentials, ...tls('spec.tls', spec.tls), ...tls('spec.clusterSpec.tls', clusterSpec?.tls)];
  return all.filter((s, i) => all.findIndex((o) => o.name === s.name) === i);
}

/**
 * `handler`, and then, on a create or an update, the access check for the requesting user of each Secret the
 * object names that the object before did not. A review the API server does not answer refuses the object
 * (a failed check is no permission).
 */
export function withCredentialsAccess<T>(handler: ValidatingHandler<T>, access: SecretAccess): ValidatingHandler<T> {
  return async (req: AdmissionRequest<T>): Promise<ValidationResult> => {
    const result = await handler(req);
    if (!result.allowed || (req.operation !== 'CREATE' && req.operation !== 'UPDATE')) return result;
    const before = new Set(req.operation === 'UPDATE' ? namedSecrets(req.oldObject).map((s) => s.name) : []);
    const namespace = req.namespace ?? '';
    const who = req.userInfo.username ?? 'the requesting user';
    const warnings = result.warnings ? { warnings: result.warnings } : {};
    for (const { name: secret, field } of namedSecrets(req.object).filter((s) => !before.has(s.name))) {
      let decision: { allowed: boolean; reason: string };
      try {
        decision = await access(req.userInfo, namespace, secret);
      } catch (err) {
        return { allowed: false, code: 500, reason: 'InternalError', message: `could not check whether ${who} may get the Secret ${secret} (${field}): ${err instanceof Error ? err.message : String(err)}`, ...warnings };
      }
      if (decision.allowed) continue;
      const because = decision.reason ? ` (${decision.reason})` : '';
      const message = `${field} ${JSON.stringify(secret)}: ${who} may not get the Secret ${secret} in namespace ${namespace}${because}, and a pod of the operator would mount it with the operator's identity: name a Secret you may read`;
      return { allowed: false, code: 403, reason: 'Forbidden', message, ...warnings };
    }
    return result;
  };
}

const ACCESS_CHECK =
  "Every Secret named (`credentialsSecret` of a destination, `secretName` of `tls.peer` or `tls.client`) must be one the requesting user may `get` (a SubjectAccessReview for the request's user, groups, uid and extra): a pod the operator makes mounts it with the operator's identity.";
/** What docs/api.md says of this check, for the kinds whose controllers also check the Secret's label. */
export const CREDENTIALS_ACCESS_CHECK = `${ACCESS_CHECK} Without the webhook, the operator still mounts only a Secret labelled \`etcd.quorum.dev/backup-credentials: "true"\` (Failed, reason \`CredentialsNotLabelled\` or \`CredentialsSecretNotFound\`, and nothing is created).`;
/** ... and for EtcdCluster, whose members' bootstrap does not check that label yet. */
export const CREDENTIALS_ACCESS_CHECK_WEBHOOK_ONLY = `${ACCESS_CHECK} For \`spec.backup.destination\`, the backups before version changes are EtcdBackups, whose controller still checks the Secret's label without the webhook; \`spec.bootstrap.fromBackup.destination\` of an EtcdCluster written directly is checked by the webhook only (an EtcdRestore's cluster is checked by the restore controller).`;
