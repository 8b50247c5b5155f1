// OT-CONTAINER-KIT/redis-operator as the peers benchmark runs it: built from source (build.ts), installed once,
// cluster-wide, with its four CRDs and its generated ClusterRole (config/), webhooks off (its own
// config/manager does the same), no leader election (one replica), and the GenerateConfigInInitContainer
// feature gate, which its CI sets: an init container running INIT_CONTAINER_IMAGE's `/operator agent
// bootstrap` writes redis.conf or sentinel.conf into an emptyDir and the main container runs `redis-server
// /etc/redis/redis.conf` or `redis-sentinel /etc/redis/sentinel.conf`, so any image with Redis and a shell
// works (without the gate the main container relies on the opstree image's entrypoint script).
// A Redis is a RedisReplication of 3 (a primary and 2 replicas, persistence on its claims) and a RedisSentinel
// of 3 watching it: the embedded RedisReplication.spec.sentinel gets no command, config volume or init
// container (redisreplication_sentinel.go), so it cannot start from a plain Redis image. Both get the preferred
// one-pod-per-node anti-affinity that Quorum's and spotahome's pods have by default (OT sets none).
import { preferredAntiAffinity } from '../../../etcd-operator/bench/peers/common.ts';
import { PEER_DOWN_AFTER_MS, PEER_FAILOVER_TIMEOUT_MS, PEER_POD_SECURITY, PEER_STORAGE_SIZE } from './common.ts';
import { otOperatorImage, PEER_REDIS_IMAGE } from './images.ts';
import { operatorAccess, operatorDeployment, sourceClusterRole, sourceManifests, type Manifest } from './manifests.ts';

export const OT_GROUP = 'redis.redis.opstreelabs.in';
export const OT_NAMESPACE = 'peers-ot-system';
export const OT_NAME = 'ot-redis-operator';
export const OT_MASTER_NAME = 'mymaster';
const CRD_FILES = ['redis', 'redisclusters', 'redisreplications', 'redissentinels'].map((plural) => `config/crd/bases/${OT_GROUP}_${plural}.yaml`);

/** The operator's objects, in the order they are applied (CRDs first). */
export async function otOperatorObjects(source: string, commit: string): Promise<Manifest[]> {
  const crds = (await Promise.all(CRD_FILES.map((f) => sourceManifests(source, f)))).flat();
  const image = otOperatorImage(commit);
  const deployment = operatorDeployment(OT_NAME, OT_NAMESPACE, {
    image,
    command: ['/operator', 'manager'],
    args: ['--leader-elect=false', '--enable-webhooks=false', '--metrics-bind-address=0', '--health-probe-bind-address=:8081'],
    env: [
      { name: 'ENABLE_WEBHOOKS', value: 'false' },
      { name: 'FEATURE_GATES', value: 'GenerateConfigInInitContainer=true' },
      { name: 'INIT_CONTAINER_IMAGE', value: image },
      // Its client looks for ~/.kube/config before the in-cluster config and stops at any error but "not
      // found": the base image's /home/nonroot is root's, mode 0700, so the lookup is refused (EACCES).
      { name: 'HOME', value: '/tmp' },
    ],
    readinessProbe: { httpGet: { path: '/readyz', port: 8081 }, periodSeconds: 2 },
  });
  return [...crds, ...operatorAccess(OT_NAME, OT_NAMESPACE), await sourceClusterRole(source, 'config/rbac/role.yaml', OT_NAME), deployment];
}

/** Pods of the RedisReplication `name` (common.GetRedisLabels). */
export const otRedisLabels = (name: string): Record<string, string> => ({ app: name, redis_setup_type: 'replication', role: 'replication' });
/** Pods of the RedisSentinel `name`: its StatefulSet is `<name>-sentinel`. */
export const otSentinelLabels = (name: string): Record<string, string> => ({ app: `${name}-sentinel`, redis_setup_type: 'sentinel', role: 'sentinel' });

/** The RedisReplication and the RedisSentinel of one Redis (pure). */
export function otRedis(name: string, namespace: string): Manifest[] {
  const kubernetesConfig = { image: PEER_REDIS_IMAGE, imagePullPolicy: 'IfNotPresent' };
  const replication = {
    apiVersion: `${OT_GROUP}/v1beta2`,
    kind: 'RedisReplication',
    metadata: { name, namespace },
    spec: {
      clusterSize: 3,
      podSecurityContext: PEER_POD_SECURITY,
      affinity: preferredAntiAffinity(otRedisLabels(name)),
      kubernetesConfig,
      storage: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: PEER_STORAGE_SIZE } } } } },
    },
  };
  const sentinel = {
    apiVersion: `${OT_GROUP}/v1beta2`,
    kind: 'RedisSentinel',
    metadata: { name, namespace },
    spec: {
      clusterSize: 3,
      podSecurityContext: PEER_POD_SECURITY,
      affinity: preferredAntiAffinity(otSentinelLabels(name)),
      kubernetesConfig,
      // Quorum's defaults (down-after 5 s, failover-timeout 10 s), which are OT's CRD defaults too.
      redisSentinelConfig: { redisReplicationName: name, masterGroupName: OT_MASTER_NAME, quorum: '2', downAfterMilliseconds: String(PEER_DOWN_AFTER_MS), failoverTimeout: String(PEER_FAILOVER_TIMEOUT_MS) },
    },
  };
  return [replication, sentinel];
}
