// spotahome/redis-operator as the peers benchmark runs it: built from source (build.ts), installed once,
// cluster-wide, with its RedisFailover CRD (manifests/, which the operator does not install itself) and its
// ClusterRole (manifests/kustomize/components/rbac); leader election is always on, in POD_NAMESPACE.
// A Redis is a RedisFailover of 3 Redis pods and 3 Sentinels, with:
// - imagePullPolicy IfNotPresent everywhere (its default, empty, becomes Always: images here are only loaded);
// - a claim per Redis pod (its default emptyDir loses the data when every pod restarts), Quorum's size;
// - the Sentinels' down-after-milliseconds and failover-timeout set to Quorum's defaults through customConfig,
//   which the operator applies with SENTINEL SET (its own template starts them at 1 s and 3 s).
// - its own commands (generator.go) with `--protected-mode no`: its configuration sets no password and no
//   protected-mode, and the official redis image it defaults to is compiled with protected mode off, Debian's
//   is not, so Redis refused the operator's SLAVEOF NO ONE from another pod (DENIED … protected mode).
// Its pods keep its default security context (uid 1000, read-only root, fsGroup 1000).
import { PEER_DOWN_AFTER_MS, PEER_FAILOVER_TIMEOUT_MS, PEER_STORAGE_SIZE } from './common.ts';
import { PEER_REDIS_IMAGE, spotahomeOperatorImage } from './images.ts';
import { operatorAccess, operatorDeployment, sourceClusterRole, sourceManifests, type Manifest } from './manifests.ts';

export const SPOTAHOME_GROUP = 'databases.spotahome.com';
export const SPOTAHOME_NAMESPACE = 'peers-spotahome-system';
export const SPOTAHOME_NAME = 'spotahome-redis-operator';
export const SPOTAHOME_MASTER_NAME = 'mymaster';

export async function spotahomeOperatorObjects(source: string, commit: string): Promise<Manifest[]> {
  const crds = await sourceManifests(source, `manifests/${SPOTAHOME_GROUP}_redisfailovers.yaml`);
  const deployment = operatorDeployment(SPOTAHOME_NAME, SPOTAHOME_NAMESPACE, {
    image: spotahomeOperatorImage(commit),
    env: [{ name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }],
  });
  return [...crds, ...operatorAccess(SPOTAHOME_NAME, SPOTAHOME_NAMESPACE), await sourceClusterRole(source, 'manifests/kustomize/components/rbac/clusterrole.yaml', SPOTAHOME_NAME), deployment];
}

/** The labels of the RedisFailover `name`'s pods of one component (generateSelectorLabels). */
export const spotahomeLabels = (name: string, component: 'redis' | 'sentinel'): Record<string, string> => ({
  'app.kubernetes.io/name': name,
  'app.kubernetes.io/component': component,
  'app.kubernetes.io/part-of': 'redis-failover',
});

/** The RedisFailover of one Redis (pure). */
export function spotahomeFailover(name: string, namespace: string): Manifest {
  return {
    apiVersion: `${SPOTAHOME_GROUP}/v1`,
    kind: 'RedisFailover',
    metadata: { name, namespace },
    spec: {
      redis: {
        replicas: 3,
        image: PEER_REDIS_IMAGE,
        imagePullPolicy: 'IfNotPresent',
        command: ['redis-server', '/redis/redis.conf', '--protected-mode', 'no'],
        storage: { persistentVolumeClaim: { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: PEER_STORAGE_SIZE } } } } },
      },
      sentinel: {
        replicas: 3,
        image: PEER_REDIS_IMAGE,
        imagePullPolicy: 'IfNotPresent',
        command: ['redis-server', '/redis/sentinel.conf', '--sentinel', '--protected-mode', 'no'],
        customConfig: [`down-after-milliseconds ${PEER_DOWN_AFTER_MS}`, `failover-timeout ${PEER_FAILOVER_TIMEOUT_MS}`],
      },
    },
  } as Manifest;
}
