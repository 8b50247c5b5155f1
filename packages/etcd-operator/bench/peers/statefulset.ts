// The plain StatefulSet peer, run the way the Bitnami etcd chart runs etcd: pods created in parallel, a
// headless Service that publishes not-ready addresses (members must find each other before any is Ready),
// a client Service, one PVC per member from volumeClaimTemplates, and a start script that, like the chart's
// setup.sh, restarts a member on its data, bootstraps the initial members with a static initial cluster, and
// joins a member added by a scale-up with `etcdctl member add` and `--initial-cluster-state existing`, one
// member at a time in ordinal order.
// Same etcd, requests, volume size and spreading as Quorum's defaults; Ready means etcd's /health, with the
// probes Quorum's members have.
import type { V1ServiceSpec, V1StatefulSetSpec } from '@kubernetes/client-node';
import type { KubeObject } from '@quorum/runtime';
import { PEER_ETCD_IMAGE } from './images.ts';
import { PEER_RESOURCES, PEER_STORAGE_SIZE, preferredAntiAffinity } from './common.ts';

type Manifest<S> = KubeObject & { apiVersion: string; kind: string; spec: S };

export const headlessServiceName = (name: string): string => `${name}-headless`;
export const statefulSetLabels = (name: string): Record<string, string> => ({ 'app.kubernetes.io/name': 'etcd', 'app.kubernetes.io/instance': name });

/**
 * The member's start script (POSIX sh, run by dash: only its builtins, etcd, etcdctl and sleep). Its inputs
 * are environment variables, none named ETCD_* (etcd would read those as flags and refuse the duplicates):
 * MY_POD_NAME, MY_NAMESPACE, HEADLESS_SERVICE, CLIENT_SERVICE, CLUSTER_DOMAIN, INITIAL_CLUSTER_SIZE (the
 * replicas the StatefulSet was created with) and DATA_DIR.
 *
 * A member with data restarts on it (a deleted pod, recreated on its PVC). Without data, an ordinal below
 * INITIAL_CLUSTER_SIZE bootstraps with the static initial cluster; a higher one joins: it asks the running
 * members (through the client Service) for the member list, adds itself unless a previous attempt already
 * did, and starts with --initial-cluster-state=existing and an initial cluster read back from the member list
 * just before it starts, since other members may join in parallel (etcd checks that the initial cluster
 * matches the membership it finds). Peer names are pod names, so an unstarted member's name is its peer URL's
 * first label. Not handled, as in the measured scenarios no member loses its data: a bootstrap member whose
 * PVC is gone (the chart removes and re-adds it).
 */
export const START_SCRIPT = `set -eu
name="$MY_POD_NAME"
domain="$HEADLESS_SERVICE.$MY_NAMESPACE.svc.$CLUSTER_DOMAIN"
base="\${name%-*}"
ordinal="\${name##*-}"
peer_url() { echo "http://$1.$domain:2380"; }
set -- --name="$name" --data-dir="$DATA_DIR" \\
  --listen-peer-urls=http://0.0.0.0:2380 --listen-client-urls=http://0.0.0.0:2379 --listen-metrics-urls=http://0.0.0.0:2381 \\
  --initial-advertise-peer-urls="$(peer_url "$name")" --advertise-client-urls="http://$name.$domain:2379"
if [ -d "$DATA_DIR/member" ]; then
  echo "start: restarting $name on its data"
  exec etcd "$@"
fi
if [ "$ordinal" -lt "$INITIAL_CLUSTER_SIZE" ]; then
  initial=""
  i=0
  while [ "$i" -lt "$INITIAL_CLUSTER_SIZE" ]; do
    initial="$initial\${initial:+,}$base-$i=$(peer_url "$base-$i")"
    i=$((i + 1))
  done
  echo "start: bootstrapping $name in $initial"
  exec etcd "$@" --initial-cluster-state=new --initial-cluster="$initial" --initial-cluster-token="$MY_NAMESPACE-$base"
fi
endpoint="http://$CLIENT_SERVICE.$MY_NAMESPACE.svc.$CLUSTER_DOMAIN:2379"
me="$(peer_url "$name")"
until list="$(etcdctl --endpoints="$endpoint" --dial-timeout=3s --command-timeout=5s member list)"; do
  echo "start: no member answers at $endpoint yet"
  sleep 2
done
# Joins go one at a time, in ordinal order: etcd checks a joining member's --initial-cluster against the
# membership it finds, so two members added at once (Parallel pods) would each start with a list missing the
# other and fail, leaving a data directory of no cluster. The previous ordinal must have started first.
prev=$((ordinal - 1))
while [ "$prev" -ge "$INITIAL_CLUSTER_SIZE" ]; do
  case "$list" in
    *"$me"*|*", started, $base-$prev, "*) break ;;
  esac
  echo "start: waiting for $base-$prev to join first"
  sleep 2
  list="$(etcdctl --endpoints="$endpoint" --dial-timeout=3s --command-timeout=5s member list)" || list=""
done
case "$list" in
  *"$me"*) echo "start: $name is already a member" ;;
  *) until etcdctl --endpoints="$endpoint" --dial-timeout=3s --command-timeout=5s member add "$name" --peer-urls="$me"; do sleep 2; done ;;
esac
list="$(etcdctl --endpoints="$endpoint" --dial-timeout=3s --command-timeout=5s member list)"
initial=""
while IFS=', ' read -r id state member url rest; do
  [ -n "$url" ] || continue
  host="\${url#*://}"
  initial="$initial\${initial:+,}\${host%%.*}=$url"
done <<MEMBERS
$list
MEMBERS
echo "start: joining $name to $initial"
exec etcd "$@" --initial-cluster-state=existing --initial-cluster="$initial"
`;

export function statefulSetObjects(name: string, namespace: string, replicas: number): Manifest<V1ServiceSpec | V1StatefulSetSpec>[] {
  const labels = statefulSetLabels(name);
  const headless: Manifest<V1ServiceSpec> = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: headlessServiceName(name), namespace, labels },
    spec: {
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector: labels,
      ports: [
        { name: 'client', port: 2379, targetPort: 2379 },
        { name: 'peer', port: 2380, targetPort: 2380 },
      ],
    },
  };
  const client: Manifest<V1ServiceSpec> = { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace, labels }, spec: { selector: labels, ports: [{ name: 'client', port: 2379, targetPort: 2379 }] } };
  const env = (n: string, value: string): { name: string; value: string } => ({ name: n, value });
  const statefulSet: Manifest<V1StatefulSetSpec> = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace, labels },
    spec: {
      replicas,
      serviceName: headlessServiceName(name),
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          affinity: preferredAntiAffinity(labels),
          terminationGracePeriodSeconds: 30,
          enableServiceLinks: false,
          automountServiceAccountToken: false,
          containers: [
            {
              name: 'etcd',
              image: PEER_ETCD_IMAGE,
              imagePullPolicy: 'IfNotPresent',
              command: ['/bin/sh', '-ec', START_SCRIPT],
              env: [
                { name: 'MY_POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                env('MY_NAMESPACE', namespace),
                env('HEADLESS_SERVICE', headlessServiceName(name)),
                env('CLIENT_SERVICE', name),
                env('CLUSTER_DOMAIN', 'cluster.local'),
                env('INITIAL_CLUSTER_SIZE', String(replicas)),
                env('DATA_DIR', '/var/lib/etcd/data'),
              ],
              ports: [
                { name: 'client', containerPort: 2379 },
                { name: 'peer', containerPort: 2380 },
                { name: 'metrics', containerPort: 2381 },
              ],
              resources: PEER_RESOURCES,
              volumeMounts: [{ name: 'data', mountPath: '/var/lib/etcd' }],
              // Quorum's members' probes (src/cluster/resources.ts), on the same metrics listener.
              readinessProbe: { httpGet: { path: '/health?exclude=NOSPACE', port: 2381 }, periodSeconds: 2, timeoutSeconds: 2, failureThreshold: 3 },
              livenessProbe: { httpGet: { path: '/health?serializable=true', port: 2381 }, initialDelaySeconds: 15, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 8 },
            },
          ],
        },
      },
      // The default StorageClass, as Quorum's default storage uses it.
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: PEER_STORAGE_SIZE } } } }],
    },
  };
  return [headless, client, statefulSet];
}
