// Admission for EtcdCluster: defaults filled in on create (so the stored object says what runs), and the
// same validation the operator applies, with warnings for allowed-but-unwise choices (even replicas).
import type { AdmissionRequest, MutatingHandler, ValidatingHandler } from '@quorum/runtime';
import { applyDefaults, validateSpec } from '../api/defaults.ts';
import type { EtcdCluster } from '../api/etcdcluster.ts';

export const defaultEtcdCluster: MutatingHandler<EtcdCluster> = (req) => {
  const cluster = req.object;
  return { ...cluster, spec: applyDefaults(cluster.spec ?? {}) };
};

export const validateEtcdCluster: ValidatingHandler<EtcdCluster> = (req: AdmissionRequest<EtcdCluster>) => {
  if (req.operation === 'DELETE' || !req.object) return { allowed: true };
  const results = validateSpec(req.object.spec ?? {}, req.operation === 'UPDATE' ? req.oldObject?.spec : undefined);
  const errors = results.filter((r) => !r.warning);
  const warnings = results.filter((r) => r.warning).map((r) => r.message);
  if (errors.length > 0) {
    return { allowed: false, code: 422, reason: 'Invalid', message: errors.map((e) => e.message).join('; '), warnings };
  }
  return { allowed: true, warnings };
};
