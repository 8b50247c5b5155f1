// The Kubernetes objects of a Redis: one Pod and one PersistentVolumeClaim per instance, one Pod per Sentinel
// (its state is rebuilt from the others: no volume), the Services, the ConfigMap the pods start from, and the
// generated password Secret. Pure: the same inputs give the same objects, compared field by field by the planner.
// Instance pods are built from an instance's name and the shared config only, so that a sharded kind can reuse them.
import { createHash } from 'node:crypto';
import type { V1ConfigMap, V1EnvVar, V1PersistentVolumeClaim, V1Pod, V1Probe, V1Service, V1Volume } from '@kubernetes/client-node';
import { restrictedContainerSecurity, restrictedPodSecurity } from '@quorum/kit';
import type { DefaultedSpec } from '../api/defaults.ts';
import type { BootstrapStatus } from '../api/redis.ts';
import { restoreInitContainer } from '../backup/job.ts';
import { LABELS, REDIS_PORT, SENTINEL_PORT, names, objectLabels, ownerRef, selectorLabels, type Component, type RedisRef } from '../names.ts';
import { CONFIG_DIR, DATA_DIR, SENTINEL_DIR, TEMPLATE_DIR, TLS_DIR } from './config.ts';

/** Objects as the operator builds them: fully typed by the client models, with our metadata always present. */
type Built<T extends { metadata?: unknown }> = Omit<T, 'metadata'> & { apiVersion: string; kind: string; metadata: { name: string; namespace: string; labels: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: ReturnType<typeof ownerRef>[] } };

/** The ConfigMap keys the pods read at start. */
export const CONFIG_KEYS = { redis: 'redis.conf', sentinel: 'sentinel.conf', primary: 'primary' } as const;
/** The pod annotation holding a hash of what the pod was started from (a change needs a rollout). */
export const CONFIG_HASH_ANNOTATION = 'redis.quorum.dev/config-hash';

export interface Rendering {
  redis: RedisRef;
  spec: DefaultedSpec;
  image: string;
  /** The Secret and key holding the password. */
  auth: { secretName: string; key: string };
  /** spec.bootstrap.fromBackup resolved: every instance pod gets the restore init container (only the primary fetches). */
  restore?: { bootstrap: BootstrapStatus; agentImage: string };
  /** The TLS Secret the pods serve (absent without TLS), and a hash of its certificate: a new one rolls the pods. */
  tls?: { secretName: string; fingerprint?: string };
  /**
   * spec.users' passwords as an HMAC keyed by the Redis's password (observe.ts): instances write them into their
   * redis.conf as they start, so a changed password rolls them (replicas first, then a planned failover).
   */
  usersFingerprint?: string;
}

export function configHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

function passwordEnv(r: Rendering, name: string): V1EnvVar {
  return { name, valueFrom: { secretKeyRef: { name: r.auth.secretName, key: r.auth.key } } };
}

function podEnv(r: Rendering): V1EnvVar[] {
  return [
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'HEADLESS', value: `${names.headlessService(r.redis.name)}.${r.redis.namespace}.svc` },
    passwordEnv(r, 'REDIS_PASSWORD'),
    // redis-cli in the probes authenticates with it, without the password on its command line.
    passwordEnv(r, 'REDISCLI_AUTH'),
  ];
}

// The instance's start: the shared redis.conf, its own announced host, and whom it replicates: nobody when it
// is the primary the ConfigMap names (the authority's last decision, which the operator records before it
// recreates a pod), else that primary. Sentinel or the operator repoints it later through REPLICAOF.
const INSTANCE_START = [
  'set -e',
  `cp ${TEMPLATE_DIR}/redis.conf ${CONFIG_DIR}/redis.conf`,
  `echo "replica-announce-ip $POD_NAME.$HEADLESS" >> ${CONFIG_DIR}/redis.conf`,
  `primary=$(cat ${TEMPLATE_DIR}/primary)`,
  `if [ "$primary" != "$POD_NAME" ]; then echo "replicaof $primary.$HEADLESS ${REDIS_PORT}" >> ${CONFIG_DIR}/redis.conf; fi`,
].join('\n');

/** The environment variable an ACL user's password reaches the config init container by (never the pod spec itself). */
export const userPasswordEnv = (index: number): string => `REDIS_USER_PASSWORD_${index}`;

/**
 * spec.users as `user` lines appended to the instance's own copy of redis.conf (an emptyDir, never the ConfigMap):
 * each password double-quoted with `\` and `"` escaped, as redis.conf reads a quoted value. Names and rules are
 * validated by the schema (no quotes, spaces only between rules).
 */
function userLines(r: Rendering): string[] {
  return (r.spec.users ?? []).map((u, i) =>
    `printf 'user %s on ">%s" %s\\n' '${u.name}' "$(printf %s "$${userPasswordEnv(i)}" | sed 's/[\\\\"]/\\\\&/g')" '${u.rules}' >> ${CONFIG_DIR}/redis.conf`,
  );
}

function userEnv(r: Rendering): V1EnvVar[] {
  return (r.spec.users ?? []).map((u, i) => ({ name: userPasswordEnv(i), valueFrom: { secretKeyRef: { name: u.passwordSecret.name, key: u.passwordSecret.key } } }));
}

// A Sentinel's start: the shared sentinel.conf (Sentinel rewrites its copy), and an identity that survives the
// pod being recreated (myid from its name; its hostname announced), so the others never count a stale Sentinel.
function sentinelStart(redis: string): string {
  return [
    'set -e',
    `cp ${TEMPLATE_DIR}/sentinel.conf ${SENTINEL_DIR}/sentinel.conf`,
    `id=$(printf %s "$POD_NAMESPACE/$POD_NAME" | sha1sum | cut -c1-40)`,
    `cat >> ${SENTINEL_DIR}/sentinel.conf <<EOF`,
    'sentinel myid $id',
    'sentinel announce-ip $POD_NAME.$HEADLESS',
    `sentinel auth-pass ${redis} "$REDIS_PASSWORD"`,
    'sentinel sentinel-pass "$REDIS_PASSWORD"',
    'requirepass "$REDIS_PASSWORD"',
    'EOF',
  ].join('\n');
}

/** redis-cli's flags for the pod's own server: TLS with the mounted CA bundle when the Redis has TLS. */
function cliFlags(r: Rendering): string {
  return r.tls ? ` --tls --cacert ${TLS_DIR}/ca.crt` : '';
}

// Ready: a primary that answers, or a replica whose link to its primary is up (a new replica counts once synced).
function instanceReady(r: Rendering): string {
  return `r=$(redis-cli -h 127.0.0.1${cliFlags(r)} --no-auth-warning info replication) || exit 1
case "$r" in *role:master*) exit 0;; *master_link_status:up*) exit 0;; esac
exit 1`;
}
function sentinelReady(r: Rendering): string {
  return `[ "$(redis-cli -h 127.0.0.1 -p ${SENTINEL_PORT}${cliFlags(r)} --no-auth-warning ping)" = PONG ]`;
}

/** The TLS Secret's volume, mounted whole and read-only (files 0440, readable through fsGroup). */
function tlsVolumes(r: Rendering): V1Volume[] {
  return r.tls ? [{ name: 'tls', secret: { secretName: r.tls.secretName, defaultMode: 0o440 } }] : [];
}
function tlsMounts(r: Rendering): { name: string; mountPath: string; readOnly: boolean }[] {
  return r.tls ? [{ name: 'tls', mountPath: TLS_DIR, readOnly: true }] : [];
}

function probes(port: number, ready: string): { readinessProbe: V1Probe; livenessProbe: V1Probe } {
  return {
    readinessProbe: { exec: { command: ['/bin/sh', '-c', ready] }, periodSeconds: 2, timeoutSeconds: 2, failureThreshold: 2 },
    livenessProbe: { tcpSocket: { port }, initialDelaySeconds: 10, periodSeconds: 10, failureThreshold: 6 },
  };
}

function meta(r: Rendering, name: string, component?: Component, annotations?: Record<string, string>): Built<V1Pod>['metadata'] {
  return { name, namespace: r.redis.namespace, labels: objectLabels(r.redis.name, component), ...(annotations ? { annotations } : {}), ownerReferences: [ownerRef(r.redis)] };
}

function antiAffinity(r: Rendering, component: Component): V1Pod['spec'] {
  return {
    affinity: {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: selectorLabels(r.redis.name, component) } } }],
      },
    },
  } as V1Pod['spec'];
}

function podSpec(r: Rendering, pod: string, component: Component, volumes: V1Volume[]): NonNullable<V1Pod['spec']> {
  return {
    ...antiAffinity(r, component),
    hostname: pod,
    subdomain: names.headlessService(r.redis.name),
    enableServiceLinks: false,
    securityContext: restrictedPodSecurity({ fsGroupChangePolicy: 'OnRootMismatch' }),
    terminationGracePeriodSeconds: 30,
    volumes: [{ name: 'template', configMap: { name: names.config(r.redis.name) } }, ...volumes],
    containers: [],
  };
}

/** An instance's pod: redis-server on its claim, from the shared config and its own start-up additions. */
export function instancePod(r: Rendering, instance: string, hash: string): Built<V1Pod> {
  const mounts = [
    { name: 'data', mountPath: DATA_DIR },
    { name: 'config', mountPath: CONFIG_DIR },
    { name: 'template', mountPath: TEMPLATE_DIR, readOnly: true },
  ];
  const security = restrictedContainerSecurity();
  // The RDB is fetched and checked before redis-server starts, which then loads it as its own dump.rdb.
  const restore = r.restore ? restoreInitContainer(r.restore.bootstrap, r.restore.agentImage, { data: DATA_DIR, template: TEMPLATE_DIR }) : undefined;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: meta(r, instance, 'redis', { [CONFIG_HASH_ANNOTATION]: hash }),
    spec: {
      ...podSpec(r, instance, 'redis', [{ name: 'data', persistentVolumeClaim: { claimName: names.claim(instance) } }, { name: 'config', emptyDir: {} }, ...(restore?.volumes ?? []), ...tlsVolumes(r)]),
      initContainers: [...(restore ? [restore.container] : []), { name: 'config', image: r.image, command: ['/bin/sh', '-c', [INSTANCE_START, ...userLines(r)].join('\n')], env: [...podEnv(r), ...userEnv(r)], volumeMounts: mounts, securityContext: security }],
      containers: [
        {
          name: 'redis',
          image: r.image,
          command: ['/usr/bin/redis-server'],
          // $(VAR) is expanded by the kubelet: the password never appears in the pod spec or the ConfigMap.
          args: [`${CONFIG_DIR}/redis.conf`, '--requirepass', '$(REDIS_PASSWORD)', '--masterauth', '$(REDIS_PASSWORD)'],
          env: podEnv(r),
          ports: [{ name: 'redis', containerPort: REDIS_PORT }],
          ...probes(REDIS_PORT, instanceReady(r)),
          ...(r.spec.resources ? { resources: r.spec.resources } : {}),
          volumeMounts: [...mounts, ...tlsMounts(r)],
          securityContext: security,
        },
      ],
    },
  };
}

/** A Sentinel's pod: redis-sentinel on an emptyDir (its state comes back from the other Sentinels and the instances). */
export function sentinelPod(r: Rendering, sentinel: string, hash: string): Built<V1Pod> {
  const mounts = [
    { name: 'sentinel', mountPath: SENTINEL_DIR },
    { name: 'template', mountPath: TEMPLATE_DIR, readOnly: true },
  ];
  const env = [...podEnv(r), { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }];
  const security = restrictedContainerSecurity();
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: meta(r, sentinel, 'sentinel', { [CONFIG_HASH_ANNOTATION]: hash }),
    spec: {
      ...podSpec(r, sentinel, 'sentinel', [{ name: 'sentinel', emptyDir: {} }, ...tlsVolumes(r)]),
      initContainers: [{ name: 'config', image: r.image, command: ['/bin/sh', '-c', sentinelStart(r.redis.name)], env, volumeMounts: mounts, securityContext: security }],
      containers: [
        {
          name: 'sentinel',
          image: r.image,
          command: ['/usr/bin/redis-sentinel', `${SENTINEL_DIR}/sentinel.conf`],
          env,
          ports: [{ name: 'sentinel', containerPort: SENTINEL_PORT }],
          ...probes(SENTINEL_PORT, sentinelReady(r)),
          resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '64Mi' } },
          volumeMounts: [...mounts, ...tlsMounts(r)],
          securityContext: security,
        },
      ],
    },
  };
}

/**
 * What a pod made now would be made from, as its config-hash annotation: its pod spec (image, command,
 * resources, probes) and the configuration file it starts from, for a placeholder name. A Sentinel's also counts
 * the certificate it serves (Sentinel cannot reload one: a renewed certificate rolls the Sentinels, one at a
 * time); an instance reloads its own (planReload), and counts spec.users' passwords (a changed one is rolled in).
 * A pod carrying another hash is rolled.
 */
export function podHashes(r: Rendering, files: { redisConf: string; sentinelConf: string }): { redis: string; sentinel: string } {
  const certificate = r.tls?.fingerprint ?? '';
  return {
    redis: configHash(JSON.stringify(instancePod(r, '$instance', '').spec) + files.redisConf + (r.usersFingerprint ?? '')),
    sentinel: configHash(JSON.stringify(sentinelPod(r, '$sentinel', '').spec) + files.sentinelConf + certificate),
  };
}

/** An instance's claim: owned by the Redis only with reclaimPolicy Delete, so that Retain outlives it. */
export function instanceClaim(r: Rendering, instance: string): Built<V1PersistentVolumeClaim> {
  const { ownerReferences, ...metadata } = meta(r, names.claim(instance), 'redis');
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { ...metadata, ...(r.spec.storage.reclaimPolicy === 'Delete' ? { ownerReferences } : {}) },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: r.spec.storage.size } },
      ...(r.spec.storage.storageClassName !== undefined ? { storageClassName: r.spec.storage.storageClassName } : {}),
    },
  };
}

function service(r: Rendering, name: string, selector: Record<string, string>, ports: { name: string; port: number }[], headless = false): Built<V1Service> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(r, name),
    spec: {
      selector,
      ports: ports.map((p) => ({ name: p.name, port: p.port })),
      ...(headless ? { clusterIP: 'None', publishNotReadyAddresses: true } : { type: 'ClusterIP' }),
    },
  };
}

/** `<name>` (the primary), `<name>-replicas`, `<name>-sentinel` (none without Sentinels) and `<name>-headless`. */
export function services(r: Rendering): Built<V1Service>[] {
  const redis = r.redis.name;
  const redisPort = [{ name: 'redis', port: REDIS_PORT }];
  return [
    service(r, names.primaryService(redis), { ...selectorLabels(redis, 'redis'), [LABELS.role]: 'primary' }, redisPort),
    service(r, names.replicasService(redis), { ...selectorLabels(redis, 'redis'), [LABELS.role]: 'replica' }, redisPort),
    ...(r.spec.sentinel.replicas > 0 ? [service(r, names.sentinelService(redis), selectorLabels(redis, 'sentinel'), [{ name: 'sentinel', port: SENTINEL_PORT }])] : []),
    service(r, names.headlessService(redis), selectorLabels(redis), [...redisPort, { name: 'sentinel', port: SENTINEL_PORT }], true),
  ];
}

/** The ConfigMap the pods start from; `primary` is the authority's last decision, recorded by the operator. */
export function configMap(r: Rendering, files: { redisConf: string; sentinelConf: string }, primary: string): Built<V1ConfigMap> {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta(r, names.config(r.redis.name)),
    data: { [CONFIG_KEYS.redis]: files.redisConf, [CONFIG_KEYS.sentinel]: files.sentinelConf, [CONFIG_KEYS.primary]: primary },
  };
}
