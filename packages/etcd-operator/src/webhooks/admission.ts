// What every validating webhook of the operator shares: the answer built from validation issues (errors refuse
// with 422 Invalid and every message; warnings go back as admission warnings), and the checks the backup kinds
// share. The checks themselves are the operator's own functions, never copies (see each kind's webhook).
import type { ValidationResult } from '@quorum/runtime';
import { formatPath, isPlainObject, type Issue, type Path } from '@quorum/runtime/crd';
import { isPvcKey, PVC_KEY_RULE } from '@quorum/storage';
import type { ValidationIssue } from '../api/defaults.ts';

/** What a kind's validating webhook checks beyond the CRD, in words: for docs/api.md. */
export interface AdmissionChecks {
  /** Refused. */
  errors: readonly string[];
  /** Admitted with an admission warning. */
  warnings: readonly string[];
}

/** The webhook's answer: refused with every error when there is one, else admitted; warnings either way. */
export function admissionResult(issues: readonly ValidationIssue[]): ValidationResult {
  const errors = issues.filter((i) => !i.warning);
  const warnings = issues.filter((i) => i.warning).map((i) => i.message);
  if (errors.length > 0) {
    return { allowed: false, code: 422, reason: 'Invalid', message: errors.map((e) => e.message).join('; '), warnings };
  }
  return { allowed: true, warnings };
}

/** The longest label value Kubernetes accepts. */
export const MAX_LABEL_VALUE_LENGTH = 63;

/**
 * An object whose name the operator puts in a label of what it creates (a backup's Job, a restore's cluster):
 * a name longer than a label value makes that create fail on every retry, so it is refused up front.
 */
export function nameAsLabelIssues(obj: Record<string, unknown>, label: string, onWhat: string): Issue[] {
  const name = isPlainObject(obj.metadata) ? obj.metadata.name : undefined;
  if (typeof name !== 'string' || name.length <= MAX_LABEL_VALUE_LENGTH) return [];
  const path = ['metadata', 'name'];
  return [{ path, message: `${formatPath(path)} is ${name.length} characters, more than the ${MAX_LABEL_VALUE_LENGTH} of a label value: it is the value of the label ${label} on ${onWhat}` }];
}

/**
 * Backups are stored under a PVC destination's path (`<path>/<cluster>-<time>-rev<revision>.db`), and the PVC
 * store refuses a key that is not isPvcKey(); the schema's pattern for `path` lets `.` and `..` segments through.
 */
export function backupDestinationIssues(destination: unknown, path: Path): Issue[] {
  const pvc = isPlainObject(destination) ? destination.pvc : undefined;
  const folder = isPlainObject(pvc) ? pvc.path : undefined;
  if (typeof folder !== 'string' || folder === '' || isPvcKey(folder.replace(/\/$/, ''))) return [];
  const at = [...path, 'pvc', 'path'];
  return [{ path: at, message: `${formatPath(at)} ${JSON.stringify(folder)} is not ${PVC_KEY_RULE}, so no backup could be stored under it` }];
}
