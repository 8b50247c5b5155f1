// Admission for EtcdCluster: defaults filled in on create (so the stored object says what runs), and the
// same validation the operator applies, with warnings for allowed-but-unwise choices (even replicas).
import type { AdmissionRequest, MutatingHandler, ValidatingHandler } from '@quorum/runtime';
import { PVC_KEY_RULE } from '@quorum/storage';
import { applyDefaults, validateSpec } from '../api/defaults.ts';
import type { EtcdCluster } from '../api/etcdcluster.ts';
import { admissionResult, type AdmissionChecks } from './admission.ts';

export const defaultEtcdCluster: MutatingHandler<EtcdCluster> = (req) => {
  const cluster = req.object;
  return { ...cluster, spec: applyDefaults(cluster.spec ?? {}) };
};

export const validateEtcdCluster: ValidatingHandler<EtcdCluster> = (req: AdmissionRequest<EtcdCluster>) => {
  if (req.operation === 'DELETE' || !req.object) return { allowed: true };
  return admissionResult(validateSpec(req.object.spec ?? {}, req.operation === 'UPDATE' ? req.oldObject?.spec : undefined));
};

/** What the webhook adds to the CRD's schema and CEL rules (which it also checks, with the same messages). */
export const ETCDCLUSTER_ADMISSION: AdmissionChecks = {
  errors: [
    `\`spec.bootstrap.fromBackup.key\` with a \`pvc\` destination must be ${PVC_KEY_RULE}. Without the webhook, the operator reports such a spec as \`Degraded\`/\`InvalidSpec\` and creates nothing.`,
  ],
  warnings: [
    '`spec.replicas` is 1 (no failure tolerated) or even (no more failures tolerated than with one member fewer).',
    '`spec.storage.emptyDir`: a member loses its data whenever its pod is deleted.',
    '`spec.antiAffinity: None` with more than one member: one node failure can cost quorum.',
  ],
};
