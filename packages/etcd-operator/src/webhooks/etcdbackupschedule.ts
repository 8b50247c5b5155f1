// Admission for EtcdBackupSchedule: what the CRD cannot check and the schedule controller would otherwise only
// report in status. `spec.schedule` is parsed exactly as the controller parses it (parseSchedule: cron-parser,
// UTC, the schedule's own hash seed, at most once a minute, a time that comes), and `spec.retention.maxAge` as
// the controller reads it (durationMs). Ratcheted on update: an unchanged value accepted before is not refused.
import type { AdmissionRequest, ValidatingHandler } from '@quorum/runtime';
import { formatPath, isPlainObject, type Issue } from '@quorum/runtime/crd';
import { toFieldErrors, type ValidationIssue } from '../api/defaults.ts';
import type { EtcdBackupSchedule } from '../api/etcdbackupschedule.ts';
import { durationMs, parseSchedule, scheduleHashSeed } from '@quorum/kit';
import { admissionResult, backupDestinationIssues, type AdmissionChecks } from './admission.ts';
import { CREDENTIALS_ACCESS_CHECK } from './credentials.ts';

/**
 * The problems of a schedule the controller would report (Ready=False, InvalidSchedule) or trip over (a
 * maxAge it cannot read, a PVC path no backup can be stored under). `namespace` stands in for a missing
 * metadata.namespace (the admission request carries it).
 */
export function etcdBackupScheduleIssues(obj: unknown, old?: unknown, namespace?: string): ValidationIssue[] {
  if (!isPlainObject(obj) || !isPlainObject(obj.spec)) return [];
  const { spec } = obj;
  const metadata = isPlainObject(obj.metadata) ? obj.metadata : {};
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  const issues: Issue[] = [];

  if (typeof spec.schedule === 'string') {
    const parsed = parseSchedule(spec.schedule, scheduleHashSeed(str(metadata.namespace) || (namespace ?? ''), str(metadata.name)));
    if (!parsed.ok) issues.push({ path: ['spec', 'schedule'], message: parsed.message });
  }
  const maxAge = isPlainObject(spec.retention) ? spec.retention.maxAge : undefined;
  if (typeof maxAge === 'string' && durationMs(maxAge) === undefined) {
    const path = ['spec', 'retention', 'maxAge'];
    issues.push({ path, message: `${formatPath(path)} ${JSON.stringify(maxAge)} is not a duration in hours, minutes and seconds, such as 168h, 90m or 1h30m` });
  }
  issues.push(...backupDestinationIssues(spec.destination, ['spec', 'destination']));
  return toFieldErrors(issues, obj, old);
}

export const validateEtcdBackupSchedule: ValidatingHandler<EtcdBackupSchedule> = (req: AdmissionRequest<EtcdBackupSchedule>) => {
  if (req.operation === 'DELETE' || !req.object) return { allowed: true };
  return admissionResult(etcdBackupScheduleIssues(req.object, req.operation === 'UPDATE' ? req.oldObject : undefined, req.namespace));
};

export const ETCDBACKUPSCHEDULE_ADMISSION: AdmissionChecks = {
  errors: [
    '`spec.schedule` must parse as the operator parses it: cron-parser in UTC with the schedule\'s own seed for `H`, five fields or a macro such as `@daily`, at most once a minute, and a time that comes (not `0 0 30 2 *`); the refusal carries the parser\'s words. Without the webhook, the operator reports such a schedule as `Ready=False`, reason `InvalidSchedule`, and takes no backup.',
    '`spec.retention.maxAge` must be a duration the operator reads: hours, minutes and seconds such as `168h` or `1h30m` (the schema\'s pattern asks the same). The operator would ignore one it cannot read.',
    '`spec.destination.pvc.path` must not contain an empty, `.` or `..` segment. Without the webhook, every scheduled backup fails with `StorageFailed`.',
    CREDENTIALS_ACCESS_CHECK,
  ],
  warnings: [],
};
