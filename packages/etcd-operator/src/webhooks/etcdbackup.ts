// Admission for EtcdBackup: what the CRD cannot check and the backup would otherwise trip over after it
// started. Its spec is immutable, so the webhook is registered for creates; an update is ratcheted anyway.
import type { AdmissionRequest, ValidatingHandler } from '@quorum/runtime';
import { isPlainObject } from '@quorum/runtime/crd';
import { toFieldErrors, type ValidationIssue } from '../api/defaults.ts';
import type { EtcdBackup } from '../api/etcdbackup.ts';
import { BACKUP_LABEL } from '../backup/job.ts';
import { admissionResult, backupDestinationIssues, MAX_LABEL_VALUE_LENGTH, nameAsLabelIssues, type AdmissionChecks } from './admission.ts';
import { CREDENTIALS_ACCESS_CHECK } from './credentials.ts';

/**
 * The problems of a backup that would fail it once running: a name the backup Job cannot carry as a label
 * (the Job is never created; the backup stays Running), a PVC path no snapshot can be stored under (Failed,
 * StorageFailed).
 */
export function etcdBackupIssues(obj: unknown, old?: unknown): ValidationIssue[] {
  if (!isPlainObject(obj)) return [];
  const spec = isPlainObject(obj.spec) ? obj.spec : {};
  const issues = [...nameAsLabelIssues(obj, BACKUP_LABEL, 'the backup Job and its pod'), ...backupDestinationIssues(spec.destination, ['spec', 'destination'])];
  return toFieldErrors(issues, obj, old);
}

export const validateEtcdBackup: ValidatingHandler<EtcdBackup> = (req: AdmissionRequest<EtcdBackup>) => {
  if (req.operation === 'DELETE' || !req.object) return { allowed: true };
  return admissionResult(etcdBackupIssues(req.object, req.operation === 'UPDATE' ? req.oldObject : undefined));
};

export const ETCDBACKUP_ADMISSION: AdmissionChecks = {
  errors: [
    `\`metadata.name\` must be at most ${MAX_LABEL_VALUE_LENGTH} characters: it is the value of the label \`${BACKUP_LABEL}\` on the backup Job. Without the webhook, the Job is refused on every retry and the backup stays \`Running\`.`,
    '`spec.destination.pvc.path` must not contain an empty, `.` or `..` segment. Without the webhook, the backup fails with `StorageFailed`.',
    CREDENTIALS_ACCESS_CHECK,
  ],
  warnings: [],
};
