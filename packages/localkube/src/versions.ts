// The exact upstream versions localkube builds and runs. Changing one here (and in tools/<project>/go.mod)
// is how an upgrade starts; every cache path is keyed by these strings.
export const KUBERNETES_VERSION = 'v1.34.4';
/** etcd releases built from the Go module proxy, newest last; the newest runs the API server's store. */
export const ETCD_VERSIONS = ['3.5.35', '3.6.16'] as const;
export type EtcdVersion = (typeof ETCD_VERSIONS)[number];
export const CONTROL_PLANE_ETCD: EtcdVersion = '3.6.16';
/** Debian bookworm's etcd-server, a third version for upgrade tests; its image is built from the package. */
export const DEBIAN_ETCD_VERSION = '3.4.23';
export const COREDNS_VERSION = 'v1.14.7';
/** kube-router, whose network policy controller enforces NetworkPolicy (tools/kube-router; docs/localkube.md says why this one). */
export const KUBE_ROUTER_VERSION = 'v2.1.0';
/** The sandbox image tag kubelet 1.34 expects; the binary is our own pause (tools/pause). */
export const PAUSE_TAG = '3.10';
/** The object-store servers of the storage addons (`localkube addon enable s3|gcs|azure`), built only when first enabled. */
export const MINIO_VERSION = 'v0.0.0-20260212201848-7aac2a2c5b7c';
export const FAKE_GCS_SERVER_VERSION = 'v1.56.1';
/** npm's azurite, an exact dependency of @quorum/localkube; checked against node_modules/azurite when its image is built. */
export const AZURITE_VERSION = '3.37.0';
/** helm, for the operator chart's tests (`helm lint`, `helm template`, install and upgrade on localkube); built on first use. */
export const HELM_VERSION = 'v3.22.0';
/** Prometheus (module version; release 3.16.0) and promtool: the prometheus addon and the alert rules' tests; built on first use. */
export const PROMETHEUS_VERSION = 'v0.316.0';
/**
 * coreos/etcd-operator, the archived operator the peers benchmark compares Quorum with
 * (`npm run bench -- peers`); built on first use from tools/coreos-etcd-operator, which pins its dependencies.
 */
export const COREOS_ETCD_OPERATOR_VERSION = 'v0.9.4';
