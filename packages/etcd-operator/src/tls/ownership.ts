// Whose a Secret at one of the operator-managed TLS names is: the kit's check, with the etcd operator's owner and
// hand-over labels. The names are predictable (`<cluster>-peer-ca`, `<member>-tls`), so a Secret of the same name
// may be someone else's: ours is one the operator made for this very cluster (a controlling owner reference to its
// uid), or one a person handed over on purpose, as the runbook's restore of a CA Secret from a copy does: no
// controller, and the operator's labels for this cluster.
import { foreignSecretProblem as kitForeignSecretProblem, secretOwner as kitSecretOwner, type SecretOwner, type SecretOwnerSpec } from '@quorum/kit';
import type { KubeObject } from '@quorum/runtime';
import { LABELS } from '../names.ts';

export type { SecretOwner };

type ClusterRef = { metadata: { name?: string; uid?: string } };

/** The kit's owner description of an EtcdCluster's TLS Secrets. */
export function clusterSecretOwner(cluster: ClusterRef): SecretOwnerSpec {
  const name = cluster.metadata.name ?? '';
  return { kind: 'EtcdCluster', name, uid: cluster.metadata.uid, handOverLabels: { [LABELS.managedBy]: 'quorum', [LABELS.instance]: name }, noun: 'cluster', docs: 'docs/tls.md' };
}

export function secretOwner(secret: KubeObject, cluster: ClusterRef): SecretOwner {
  return kitSecretOwner(secret, clusterSecretOwner(cluster));
}

/** The status message (Degraded TLSSecretInvalid) for a Secret in the way of one the operator manages. */
export function foreignSecretProblem(secret: KubeObject, cluster: ClusterRef): string {
  return kitForeignSecretProblem(secret, clusterSecretOwner(cluster));
}
