// The constants of the operator's deployment that the operator process reads itself (its images, the webhooks'
// names and paths, its defaults). A leaf of their own so that the process, which imports them, does not load
// deploy/manifests.ts and with it CRD generation and yaml (issue 24); manifests.ts re-exports them.
import { GROUP } from '../api/etcdcluster.ts';

/** How long the old CA stays trusted after a CA rotation moved signing to the new one: applications get a week to pick up the new client certificate. */
export const DEFAULT_CA_ROTATION_OVERLAP_SECONDS = 7 * 24 * 3600;
/** Seconds a member may crash-loop before it is replaced, as shipped. */
export const DEFAULT_CRASHLOOP_GRACE_SECONDS = 60;

/** The namespace the operator installs into unless told otherwise (POD_NAMESPACE when it runs outside a pod). */
export const DEFAULT_OPERATOR_NAMESPACE = 'quorum-system';
/**
 * The namespaces whose pods may scrape the members' metrics port through each cluster's NetworkPolicy
 * (METRICS_NAMESPACES): kube-prometheus's and the usual kube-prometheus-stack release's namespace.
 */
export const DEFAULT_METRICS_NAMESPACES: readonly string[] = ['monitoring'];

export const OPERATOR_VERSION = '0.1.0';
export const OPERATOR_IMAGE = `ghcr.io/quorum-dev/etcd-operator:${OPERATOR_VERSION}`;
/**
 * The init container of every etcd member pod (tools/peer-wait): etcd starts only once its peers' names
 * resolve, because one failed lookup can leave a peer inactive on the leader for good (etcd-io/etcd#14523).
 */
export const PEER_WAIT_IMAGE = `ghcr.io/quorum-dev/peer-wait:${OPERATOR_VERSION}`;
export const NAME = 'quorum-etcd-operator';
export const WEBHOOK_SERVICE = 'quorum-webhook';
// The webhooks' serving certificate Secret and configurations: one CA and certificate for every replica, kept in
// the Secret, and the CA published into both configurations (the kit's webhookServing, operator/operator.ts).
export const CERT_SECRET = 'quorum-webhook-certs';
export const VALIDATING_WEBHOOK = 'quorum-etcd-validating';
export const MUTATING_WEBHOOK = 'quorum-etcd-defaulting';
/** The webhooks' names in their configurations (the API server's webhook metrics are labelled with them). */
export const MUTATING_WEBHOOK_NAME = `default.etcdclusters.${GROUP}`;
export const VALIDATING_WEBHOOK_NAME = `validate.etcdclusters.${GROUP}`;

/**
 * The validating webhooks, one per kind, all in one configuration (VALIDATING_WEBHOOK): the webhook's name,
 * the path the operator serves it on (operator.ts registers each kind's handler there), and the operations
 * the API server calls it for. Backups and restores have an immutable spec: only a create has anything to check.
 */
export const VALIDATING_WEBHOOKS = {
  etcdclusters: { name: VALIDATING_WEBHOOK_NAME, path: '/validate-etcdcluster', operations: ['CREATE', 'UPDATE'] },
  etcdbackups: { name: `validate.etcdbackups.${GROUP}`, path: '/validate-etcdbackup', operations: ['CREATE'] },
  etcdbackupschedules: { name: `validate.etcdbackupschedules.${GROUP}`, path: '/validate-etcdbackupschedule', operations: ['CREATE', 'UPDATE'] },
  etcdrestores: { name: `validate.etcdrestores.${GROUP}`, path: '/validate-etcdrestore', operations: ['CREATE'] },
} as const;
