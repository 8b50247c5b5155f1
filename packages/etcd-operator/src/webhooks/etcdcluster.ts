// Admission for EtcdCluster: defaults filled in on create (so the stored object says what runs), and the
// same validation the operator applies, with warnings for allowed-but-unwise choices (even replicas).
import type { AdmissionRequest, MutatingHandler, ValidatingHandler } from '@quorum/runtime';
import { PVC_KEY_RULE } from '@quorum/storage';
import { applyDefaults, validateSpec, versionChangeIssues } from '../api/defaults.ts';
import { MIN_35_FOR_36, type EtcdCluster } from '../api/etcdcluster.ts';
import { defaultTLSOnCreate, tlsOffIssue } from '../tls/defaults.ts';
import { admissionResult, type AdmissionChecks } from './admission.ts';
import { CREDENTIALS_ACCESS_CHECK_WEBHOOK_ONLY } from './credentials.ts';

export const defaultEtcdCluster: MutatingHandler<EtcdCluster> = (req) => {
  const cluster = req.object;
  const spec = applyDefaults(cluster.spec ?? {});
  // TLS by default only for a cluster being created: an update never turns a running plaintext cluster to TLS.
  return { ...cluster, spec: req.operation === 'CREATE' ? defaultTLSOnCreate(spec) : spec };
};

export const validateEtcdCluster: ValidatingHandler<EtcdCluster> = (req: AdmissionRequest<EtcdCluster>) => {
  if (req.operation === 'DELETE' || !req.object) return { allowed: true };
  const old = req.operation === 'UPDATE' ? req.oldObject : undefined;
  const issues = validateSpec(req.object.spec ?? {}, old?.spec);
  // What etcd allows depends on what the members run (the status), which CEL cannot see.
  const versionIssues = old ? versionChangeIssues(req.object.spec, old.spec, old.status) : [];
  // Whether the cluster runs TLS is in its status too: `disabled` on one that does is refused.
  const tlsOff = old ? tlsOffIssue(req.object.spec?.tls, { status: old.status }) : undefined;
  return admissionResult([...versionIssues, ...(tlsOff ? [{ field: 'spec.tls.disabled', message: tlsOff }] : []), ...issues]);
};

/** What the webhook adds to the CRD's schema and CEL rules (which it also checks, with the same messages). */
export const ETCDCLUSTER_ADMISSION: AdmissionChecks = {
  errors: [
    `\`spec.bootstrap.fromBackup.key\` with a \`pvc\` destination must be ${PVC_KEY_RULE}. Without the webhook, the operator reports such a spec as \`Degraded\`/\`InvalidSpec\` and creates nothing.`,
    `A \`spec.version\` change etcd would refuse, judged from \`status.clusterVersion\` and the members' versions: one minor version back once the cluster version has moved to the newer minor, or to 3.6 while a member runs 3.5 older than ${MIN_35_FOR_36}. Without the webhook, the operator changes no member and reports \`Degraded\`/\`UpgradeBlocked\`.`,
    '`spec.etcd.extraArgs` with a flag the etcd of `spec.version` no longer has (`--enable-v2` and `--experimental-enable-v2v3` in 3.6). Without the webhook, the operator reports `Degraded`/`InvalidSpec` and changes nothing.',
    CREDENTIALS_ACCESS_CHECK_WEBHOOK_ONLY,
    '`spec.tls.disabled: true` on a cluster whose status says it runs TLS (turning TLS off in place is not built). Without the webhook, the operator reports `Degraded`/`InvalidSpec` and changes nothing.',
  ],
  warnings: [
    '`spec.replicas` is 1 (no failure tolerated) or even (no more failures tolerated than with one member fewer).',
    '`spec.storage.emptyDir`: a member loses its data whenever its pod is deleted.',
    '`spec.antiAffinity: None` with more than one member: one node failure can cost quorum.',
  ],
};
