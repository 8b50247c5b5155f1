// Deterministic names and addresses of a cluster's objects. A member is `<cluster>-<index>`; indexes are
// never reused, so a member whose data was lost comes back under a new name, never a stale one. A leaf: it
// imports nothing of the operator, so every folder may use it.
import type { OwnerReference } from '@quorum/runtime';

export const LABELS = {
  name: 'app.kubernetes.io/name',
  instance: 'app.kubernetes.io/instance',
  managedBy: 'app.kubernetes.io/managed-by',
  member: 'etcd.quorum.dev/member',
} as const;

export const FIELD_MANAGER = 'quorum-etcd-operator';
/** The operator's pods, as its Deployment, webhook Service, PodDisruptionBudget and scrape configs select them. */
export const OPERATOR_SELECTOR = { 'app.kubernetes.io/name': 'quorum', 'app.kubernetes.io/component': 'operator' };
/** An EtcdCluster annotation: setting it to a new value retries a halted rolling update (docs/upgrades.md). */
export const RETRY_ROLLOUT_ANNOTATION = 'etcd.quorum.dev/retry-rollout';
/** On an EtcdBackup the operator took itself: why (`before-version-change`). */
export const PURPOSE_LABEL = 'etcd.quorum.dev/purpose';
/**
 * An EtcdCluster annotation: a new value has every operator-managed leaf certificate (members', the client's)
 * issued again. Each leaf Secret records the value it was issued under (same key), so the request is done
 * exactly when every Secret carries it, whatever the operator went through meanwhile.
 */
export const ROTATE_CERTIFICATES_ANNOTATION = 'etcd.quorum.dev/rotate-certificates';
/**
 * An EtcdCluster annotation: a new value rotates the operator-managed CAs (peer, then client), each through
 * TrustNew, Reissue and DropOld (docs/tls.md). Each CA Secret records the value its rotation answered.
 */
export const ROTATE_CA_ANNOTATION = 'etcd.quorum.dev/rotate-ca';
export const CLIENT_PORT = 2379;
export const PEER_PORT = 2380;
export const METRICS_PORT = 2381;
export const DATA_DIR = '/var/lib/etcd';

export function memberName(cluster: string, index: number): string {
  return `${cluster}-${index}`;
}

/** The index of a member name of this cluster, or undefined for anything else. */
export function memberIndex(cluster: string, name: string): number | undefined {
  if (!name.startsWith(`${cluster}-`)) return undefined;
  const rest = name.slice(cluster.length + 1);
  return /^\d+$/.test(rest) ? Number(rest) : undefined;
}

export const peerServiceName = (cluster: string): string => cluster;
export const clientServiceName = (cluster: string): string => `${cluster}-client`;
export const pvcName = (member: string): string => `data-${member}`;
export const pdbName = (cluster: string): string => cluster;
export const networkPolicyName = (cluster: string): string => cluster;

/** `<member>.<cluster>.<namespace>.svc`: stable across pod restarts, published before the pod is ready. */
export function memberHost(cluster: string, namespace: string, member: string): string {
  return `${member}.${peerServiceName(cluster)}.${namespace}.svc`;
}

export type Scheme = 'http' | 'https';

/** The URL peers reach a member on: https once spec.tls.peer is set (TLS is fixed at creation). */
export const peerURL = (cluster: string, namespace: string, member: string, scheme: Scheme = 'http'): string => `${scheme}://${memberHost(cluster, namespace, member)}:${PEER_PORT}`;
/** The URL clients reach a member on: https once spec.tls.client is set. */
export const clientURL = (cluster: string, namespace: string, member: string, scheme: Scheme = 'http'): string => `${scheme}://${memberHost(cluster, namespace, member)}:${CLIENT_PORT}`;
/** The client Service's URL: what applications should use. */
export const clientServiceURL = (cluster: string, namespace: string, scheme: Scheme = 'http'): string => `${scheme}://${clientServiceName(cluster)}.${namespace}.svc:${CLIENT_PORT}`;

/** The member a peer URL belongs to, if it is one of ours. */
export function memberFromPeerURL(cluster: string, namespace: string, url: string): string | undefined {
  const match = /^https?:\/\/([^.]+)\.([^.]+)\.([^.]+)\.svc(?:\.[^:]*)?:\d+$/.exec(url);
  if (!match || match[2] !== peerServiceName(cluster) || match[3] !== namespace) return undefined;
  return memberIndex(cluster, match[1]!) === undefined ? undefined : match[1];
}

export function clusterLabels(cluster: string): Record<string, string> {
  return { [LABELS.name]: 'etcd', [LABELS.instance]: cluster, [LABELS.managedBy]: 'quorum' };
}

export function memberLabels(cluster: string, member: string): Record<string, string> {
  return { ...clusterLabels(cluster), [LABELS.member]: member };
}

/** A label selector (`k=v,k=v`) matching every one of `labels`. */
export function labelSelector(labels: Record<string, string>): string {
  return Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(',');
}

export function clusterSelector(cluster: string): string {
  return labelSelector(clusterLabels(cluster));
}

/** The owner reference every object of a cluster carries (its pods, claims, Services, Secrets): deleting the cluster deletes them. */
export function ownerRef(cluster: { metadata: { name?: string; uid?: string } }): OwnerReference {
  return { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', name: cluster.metadata.name!, uid: cluster.metadata.uid!, controller: true, blockOwnerDeletion: true };
}
