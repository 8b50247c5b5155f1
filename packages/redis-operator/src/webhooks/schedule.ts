// The RedisBackupSchedule's admission check: its cron expression must parse as the operator will parse it (the
// kit's parseSchedule, `H` seeded by the schedule's namespace and name), which no CEL rule can say; then the
// credentials check every kind naming a destination gets (credentials.ts: the schedule's backups mount that
// Secret with the operator's identity). Webhooks fail open: the operator reports a schedule that does not parse
// as Ready=False, reason InvalidSchedule, and creates nothing.
import { parseSchedule, scheduleHashSeed } from '@quorum/kit';
import type { AdmissionRequest, KubeObject, ValidatingHandler, ValidationResult } from '@quorum/runtime';

/** Why the schedule of `obj` in `namespace` would not run, or undefined when it parses. */
export function scheduleProblem(obj: KubeObject, namespace: string): string | undefined {
  const schedule = (obj as { spec?: { schedule?: unknown } }).spec?.schedule;
  if (typeof schedule !== 'string') return undefined; // the CRD's schema requires it
  const parsed = parseSchedule(schedule, scheduleHashSeed(namespace, obj.metadata.name ?? ''));
  return parsed.ok ? undefined : parsed.message;
}

/** The schedule's parse check, then `credentials` (the check of the Secret its destination names). */
export function validateSchedule(credentials: ValidatingHandler<KubeObject>): ValidatingHandler<KubeObject> {
  return async (req: AdmissionRequest<KubeObject>): Promise<ValidationResult> => {
    if (req.operation === 'CREATE' && req.object) {
      const problem = scheduleProblem(req.object, req.namespace ?? req.object.metadata.namespace ?? '');
      if (problem) return { allowed: false, code: 422, reason: 'Invalid', message: problem };
    }
    return credentials(req);
  };
}
