// Whose a Secret at one of the operator-managed TLS names is. The names are predictable (`<cluster>-peer-ca`,
// `<member>-tls`), so a Secret of the same name may be someone else's: the operator must neither adopt it as a CA
// (every member would trust whoever holds its key) nor overwrite or delete it. Ours is a Secret the operator made
// for this very cluster (a controlling owner reference to its uid), or one a person handed over on purpose, as the
// runbook's restore of a CA Secret from a copy does: no controller, and the operator's labels for this cluster.
import type { KubeObject } from '@quorum/runtime';
import { LABELS } from '../names.ts';

export type SecretOwner = 'ours' | 'foreign';

export function secretOwner(secret: KubeObject, cluster: { metadata: { name?: string; uid?: string } }): SecretOwner {
  const controller = (secret.metadata.ownerReferences ?? []).find((r) => r.controller === true);
  if (controller) return controller.kind === 'EtcdCluster' && controller.uid === cluster.metadata.uid ? 'ours' : 'foreign';
  const labels = secret.metadata.labels ?? {};
  return labels[LABELS.managedBy] === 'quorum' && labels[LABELS.instance] === cluster.metadata.name ? 'ours' : 'foreign';
}

/** The status message (Degraded TLSSecretInvalid) for a Secret in the way of one the operator manages. */
export function foreignSecretProblem(secret: KubeObject, cluster: { metadata: { name?: string } }): string {
  const controller = (secret.metadata.ownerReferences ?? []).find((r) => r.controller === true);
  const whose = controller ? `it is controlled by ${controller.kind} ${controller.name}` : `it has no owner and lacks the labels ${LABELS.managedBy}=quorum, ${LABELS.instance}=${cluster.metadata.name}`;
  return `Secret ${secret.metadata.name} is in the way of the one the operator manages for EtcdCluster ${cluster.metadata.name} (${whose}): it is never used, overwritten or deleted. Rename or delete it, or hand it over with those labels if it is this cluster's (docs/tls.md)`;
}
