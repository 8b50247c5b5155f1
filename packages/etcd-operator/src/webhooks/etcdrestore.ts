// Admission for EtcdRestore: the EtcdCluster a restore creates is validated now, by the same function that
// validates every EtcdCluster (validateEtcdCluster of api/defaults.ts, on restoredCluster() of the restore
// controller), rather than refused on every retry of the controller's create. Its errors and warnings come
// back under the restore's own fields. The spec is immutable, so the webhook is registered for creates.
import type { AdmissionRequest, ValidatingHandler } from '@quorum/runtime';
import { isPlainObject } from '@quorum/runtime/crd';
import { toFieldErrors, validateEtcdCluster as validateCluster, type ValidationIssue } from '../api/defaults.ts';
import type { EtcdRestore } from '../api/etcdrestore.ts';
import { restoredCluster, RESTORE_LABEL } from '../restore/reconcile.ts';
import { admissionResult, MAX_LABEL_VALUE_LENGTH, nameAsLabelIssues, type AdmissionChecks } from './admission.ts';
import { CREDENTIALS_ACCESS_CHECK } from './credentials.ts';

/** The restore's field for a field of the cluster it creates, longest match first. */
const FIELDS: readonly (readonly [cluster: string, restore: string])[] = [
  ['metadata.name', 'spec.clusterName'],
  ['spec.bootstrap.fromBackup.', 'spec.'],
  ['spec.bootstrap.fromBackup', 'spec'],
  ['spec.bootstrap', 'spec'],
  ['spec.', 'spec.clusterSpec.'],
  ['spec', 'spec.clusterSpec'],
];

function restoreField(field: string): string {
  for (const [cluster, restore] of FIELDS) {
    if (cluster.endsWith('.') ? field.startsWith(cluster) : field === cluster) return restore + field.slice(cluster.length);
  }
  return field;
}

/** A finding about the cluster, told about the restore: a message that starts with its field gets the restore's. */
function asRestoreIssue(i: ValidationIssue): ValidationIssue {
  const field = restoreField(i.field);
  const named = i.field !== '' && (i.message.startsWith(`${i.field} `) || i.message.startsWith(`${i.field}:`));
  const message = named ? `${field}${i.message.slice(i.field.length)}` : `${field}: in the EtcdCluster this restore creates, ${i.message}`;
  return { field, message, ...(i.warning ? { warning: true } : {}) };
}

/**
 * The problems of a restore that would stop it after the fact: a name its cluster cannot carry as a label,
 * and whatever the EtcdCluster it creates would be refused for (e.g. both `image` and `repository` in
 * clusterSpec, which the restore's CRD does not check across fields, or a PVC key the store refuses), plus
 * that cluster's warnings.
 */
export function etcdRestoreIssues(obj: unknown, old?: unknown): ValidationIssue[] {
  if (!isPlainObject(obj) || !isPlainObject(obj.spec) || !isPlainObject(obj.metadata)) return [];
  const errors = toFieldErrors(nameAsLabelIssues(obj, RESTORE_LABEL, 'the EtcdCluster it creates'), obj, old);
  // Past admission's schema and CEL checks, the object is an EtcdRestore.
  const cluster = (restore: Record<string, unknown>): unknown => restoredCluster(restore as unknown as EtcdRestore);
  const previous = isPlainObject(old) && isPlainObject(old.spec) && isPlainObject(old.metadata) ? cluster(old) : undefined;
  return [...errors, ...validateCluster(cluster(obj), previous).map(asRestoreIssue)];
}

export const validateEtcdRestore: ValidatingHandler<EtcdRestore> = (req: AdmissionRequest<EtcdRestore>) => {
  if (req.operation === 'DELETE' || !req.object) return { allowed: true };
  return admissionResult(etcdRestoreIssues(req.object, req.operation === 'UPDATE' ? req.oldObject : undefined));
};

export const ETCDRESTORE_ADMISSION: AdmissionChecks = {
  errors: [
    `\`metadata.name\` must be at most ${MAX_LABEL_VALUE_LENGTH} characters: it is the value of the label \`${RESTORE_LABEL}\` on the EtcdCluster the restore creates. Without the webhook, that create is refused on every retry and the restore stays \`Pending\`.`,
    'The EtcdCluster the restore creates (`clusterName`, `clusterSpec`, and `spec.bootstrap.fromBackup` from `backupName`, or `destination`, `key` and `sha256`) must pass every check of an EtcdCluster, e.g. not both `clusterSpec.image` and `clusterSpec.repository` (without the webhook, the create is refused on every retry and the restore stays `Pending`), and with a `pvc` destination a `key` that is a relative file path inside the volume (without the webhook, the cluster reports `Degraded`/`InvalidSpec`).',
    CREDENTIALS_ACCESS_CHECK,
  ],
  warnings: ["The EtcdCluster's own warnings, under `spec.clusterSpec` (a single member, an even member count, `emptyDir` storage, `antiAffinity: None`)."],
};
