// The Kubernetes objects a cluster consists of, as the operator wants them: the peer (headless) and client
// Services, the PodDisruptionBudget, and one PVC and one Pod per member.
import { createHash } from 'node:crypto';
import type { KubeObject, OwnerReference } from '@quorum/runtime';
import { etcdImage } from '../api/defaults.ts';
import type { DefaultedSpec, EtcdCluster } from './spec.ts';
import {
  CLIENT_PORT,
  DATA_DIR,
  METRICS_PORT,
  PEER_PORT,
  clientServiceName,
  clientURL,
  clusterLabels,
  memberLabels,
  pdbName,
  peerServiceName,
  peerURL,
  pvcName,
} from './names.ts';

type Obj = KubeObject & Record<string, unknown>;

export function ownerRef(cluster: EtcdCluster): OwnerReference {
  return { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', name: cluster.metadata.name!, uid: cluster.metadata.uid!, controller: true, blockOwnerDeletion: true };
}

const meta = (cluster: EtcdCluster, name: string, labels: Record<string, string>, owned = true): Obj['metadata'] => ({
  name,
  namespace: cluster.metadata.namespace,
  labels,
  ...(owned ? { ownerReferences: [ownerRef(cluster)] } : {}),
});

export function peerService(cluster: EtcdCluster): Obj {
  const name = cluster.metadata.name!;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(cluster, peerServiceName(name), clusterLabels(name)),
    spec: {
      clusterIP: 'None',
      // Members must find each other before they are ready: a member is not ready until it has joined.
      publishNotReadyAddresses: true,
      selector: clusterLabels(name),
      ports: [
        { name: 'peer', port: PEER_PORT, targetPort: PEER_PORT },
        { name: 'client', port: CLIENT_PORT, targetPort: CLIENT_PORT },
      ],
    },
  };
}

export function clientService(cluster: EtcdCluster): Obj {
  const name = cluster.metadata.name!;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(cluster, clientServiceName(name), clusterLabels(name)),
    spec: {
      selector: clusterLabels(name),
      ports: [{ name: 'client', port: CLIENT_PORT, targetPort: CLIENT_PORT }],
    },
  };
}

/** Voluntary disruptions (drains) may take one member at a time, and only from clusters that can lose one. */
export function podDisruptionBudget(cluster: EtcdCluster): Obj {
  const name = cluster.metadata.name!;
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: meta(cluster, pdbName(name), clusterLabels(name)),
    spec: { maxUnavailable: 1, selector: { matchLabels: clusterLabels(name) } },
  };
}

export function memberPVC(cluster: EtcdCluster, spec: DefaultedSpec, member: string): Obj {
  const template = spec.storage.volumeClaimTemplate ?? {};
  // With Retain the claim has no owner, so deleting the EtcdCluster leaves the data behind.
  const owned = spec.storage.reclaimPolicy === 'Delete';
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: meta(cluster, pvcName(member), memberLabels(cluster.metadata.name!, member), owned),
    spec: {
      accessModes: template.accessModes ?? ['ReadWriteOnce'],
      ...(template.storageClassName ? { storageClassName: template.storageClassName } : {}),
      resources: { requests: { storage: template.resources?.requests?.storage ?? '1Gi' } },
    },
  };
}

export interface MemberPodOptions {
  member: string;
  /** `new` only for the first member of a new cluster; `existing` for every member added later. */
  initialClusterState: 'new' | 'existing';
  /** name=peerURL of every member the new one must know about (itself included). */
  initialCluster: string[];
  /**
   * Host names etcd will dial at start, which must resolve before it starts (a pipeline message to a name
   * that does not resolve yet can leave the peer "inactive" for good: etcd-io/etcd#14523).
   */
  waitForNames?: string[];
  /** The image of our peer-wait init container; without it, no init container. */
  peerWaitImage?: string;
}

/** Where a member pod records which spec it was made from, field by field (see templateFingerprint). */
export const TEMPLATE_ANNOTATION = 'etcd.quorum.dev/template';

/**
 * What each user-facing part of the spec that shapes a member pod was when the pod was made: the image
 * (version or image), etcd options, podTemplate and antiAffinity, each as a short hash. Comparing with
 * the current spec names the fields a running member has not picked up.
 */
export function templateFingerprint(spec: DefaultedSpec): Record<string, string> {
  const h = (v: unknown): string => createHash('sha256').update(JSON.stringify(v ?? null)).digest('hex').slice(0, 12);
  return { image: etcdImage(spec), etcd: h(spec.etcd), podTemplate: h(spec.podTemplate), antiAffinity: spec.antiAffinity };
}

/** The fields of `spec` a pod was not made from; pods made before the annotation existed compare by image. */
export function outdatedFields(pod: KubeObject & { spec?: { containers?: { name: string; image?: string }[] } }, spec: DefaultedSpec): string[] {
  const want = templateFingerprint(spec);
  const recorded = pod.metadata.annotations?.[TEMPLATE_ANNOTATION];
  let had: Record<string, string>;
  try {
    had = recorded ? (JSON.parse(recorded) as Record<string, string>) : { image: pod.spec?.containers?.find((c) => c.name === 'etcd')?.image ?? '' };
  } catch {
    had = {};
  }
  return Object.keys(want).filter((k) => k in had && had[k] !== want[k]).map((k) => (k === 'image' ? `image ${had[k]} → ${want[k]}` : k));
}

export function memberPod(cluster: EtcdCluster, spec: DefaultedSpec, options: MemberPodOptions): Obj {
  const name = cluster.metadata.name!;
  const ns = cluster.metadata.namespace!;
  const { member } = options;
  const labels = { ...(spec.podTemplate?.metadata?.labels ?? {}), ...memberLabels(name, member) };
  const podSpec = spec.podTemplate?.spec ?? {};
  const e = spec.etcd ?? {};
  const args = [
    `--name=${member}`,
    `--data-dir=${DATA_DIR}/data`,
    `--listen-peer-urls=http://0.0.0.0:${PEER_PORT}`,
    `--listen-client-urls=http://0.0.0.0:${CLIENT_PORT}`,
    `--listen-metrics-urls=http://0.0.0.0:${METRICS_PORT}`,
    `--advertise-client-urls=${clientURL(name, ns, member)}`,
    `--initial-advertise-peer-urls=${peerURL(name, ns, member)}`,
    `--initial-cluster=${options.initialCluster.join(',')}`,
    `--initial-cluster-state=${options.initialClusterState}`,
    `--initial-cluster-token=${name}-${cluster.metadata.uid}`,
    ...(e.quotaBackendBytes !== undefined ? [`--quota-backend-bytes=${e.quotaBackendBytes}`] : []),
    ...(e.autoCompactionMode ? [`--auto-compaction-mode=${e.autoCompactionMode}`] : []),
    ...(e.autoCompactionRetention ? [`--auto-compaction-retention=${e.autoCompactionRetention}`] : []),
    ...(e.snapshotCount !== undefined ? [`--snapshot-count=${e.snapshotCount}`] : []),
    ...(e.heartbeatIntervalMs !== undefined ? [`--heartbeat-interval=${e.heartbeatIntervalMs}`] : []),
    ...(e.electionTimeoutMs !== undefined ? [`--election-timeout=${e.electionTimeoutMs}`] : []),
    ...(e.extraArgs ?? []),
  ];
  const antiAffinityTerm = { labelSelector: { matchLabels: clusterLabels(name) }, topologyKey: 'kubernetes.io/hostname' };
  const userAffinity = (podSpec['affinity'] ?? {}) as Record<string, unknown>;
  const affinity =
    spec.antiAffinity === 'Required'
      ? { ...userAffinity, podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [antiAffinityTerm] } }
      : spec.antiAffinity === 'Preferred'
        ? { ...userAffinity, podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: antiAffinityTerm }] } }
        : userAffinity;
  const volume = spec.storage.emptyDir
    ? { name: 'data', emptyDir: spec.storage.emptyDir }
    : { name: 'data', persistentVolumeClaim: { claimName: pvcName(member) } };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...meta(cluster, member, labels),
      annotations: {
        ...(spec.podTemplate?.metadata?.annotations ?? {}),
        'etcd.quorum.dev/initial-cluster-state': options.initialClusterState,
        [TEMPLATE_ANNOTATION]: JSON.stringify(templateFingerprint(spec)),
      },
    },
    spec: {
      hostname: member,
      subdomain: peerServiceName(name),
      // The operator, not the kubelet, decides when a member is replaced; a crashed etcd is restarted in place.
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      enableServiceLinks: false,
      ...pick(podSpec, ['nodeSelector', 'tolerations', 'topologySpreadConstraints', 'priorityClassName', 'securityContext']),
      ...(Object.keys(affinity).length ? { affinity } : {}),
      ...(options.peerWaitImage && options.waitForNames?.length
        ? {
            initContainers: [
              {
                name: 'peer-wait',
                image: options.peerWaitImage,
                imagePullPolicy: 'IfNotPresent',
                args: ['--timeout=120s', ...options.waitForNames],
                // Its last lines explain a wait that timed out (`kubectl describe pod`, status.members[].lastError).
                terminationMessagePolicy: 'FallbackToLogsOnError',
                resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '32Mi' } },
                securityContext: { runAsNonRoot: true, runAsUser: 65532, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
              },
            ],
          }
        : {}),
      containers: [
        {
          name: 'etcd',
          image: etcdImage(spec),
          imagePullPolicy: 'IfNotPresent',
          command: ['/usr/local/bin/etcd'],
          args,
          ports: [
            { name: 'client', containerPort: CLIENT_PORT },
            { name: 'peer', containerPort: PEER_PORT },
            { name: 'metrics', containerPort: METRICS_PORT },
          ],
          volumeMounts: [{ name: 'data', mountPath: DATA_DIR }],
          // etcd prints why it exits (a bad flag, a corrupt WAL) to its log: the kubelet keeps the last lines.
          terminationMessagePolicy: 'FallbackToLogsOnError',
          ...(podSpec['resources'] ? { resources: podSpec['resources'] } : {}),
          // Ready = this member serves: it has a leader and no alarm.
          readinessProbe: { httpGet: { path: '/health', port: METRICS_PORT }, periodSeconds: 2, timeoutSeconds: 2, failureThreshold: 3 },
          // Alive = the process answers locally; never restart a member just because the cluster lost quorum.
          livenessProbe: { httpGet: { path: '/health?serializable=true', port: METRICS_PORT }, initialDelaySeconds: 15, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 8 },
        },
      ],
      volumes: [volume],
    },
  };
}

function pick(source: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (source[k] !== undefined) out[k] = source[k];
  return out;
}
