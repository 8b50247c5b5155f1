// The Kubernetes objects a cluster consists of, as the operator wants them: the peer (headless) and client
// Services, the PodDisruptionBudget, the NetworkPolicy, and one PVC and one Pod per member.
import { createHash } from 'node:crypto';
import type {
  V1Affinity,
  V1Container,
  V1NetworkPolicyPeer,
  V1PersistentVolumeClaim,
  V1Pod,
  V1PodDisruptionBudget,
  V1PodSecurityContext,
  V1SecurityContext,
  V1Service,
} from '@kubernetes/client-node';
import type { BuiltinObject, KubeObject, NetworkPolicy } from '@quorum/runtime';
import { etcdImage } from '../api/defaults.ts';
import { DEFAULT_ETCD_RESOURCES, MEMBER_CONTAINER_SECURITY, MEMBER_POD_SECURITY } from '../api/etcdcluster.ts';
import type { Destination } from '../api/destination.ts';
import { AGENT_SCRIPT, BACKUP_JOB_LABELS, destinationVolumes, RESTRICTED_POD, type Volume } from '../backup/job.ts';
import type { DefaultedSpec, EtcdCluster } from './spec.ts';
import {
  CLIENT_PORT,
  DATA_DIR,
  METRICS_PORT,
  OPERATOR_SELECTOR,
  PEER_PORT,
  clientServiceName,
  clientURL,
  clusterLabels,
  memberLabels,
  networkPolicyName,
  pdbName,
  peerServiceName,
  peerURL,
  pvcName,
  ownerRef,
} from '../names.ts';
import { finalTLSStage, memberTLS, tlsFingerprint, type CABundles, type MemberTLSRender, type TLSStage } from '../tls/members.ts';

/**
 * An object as the operator builds it for the API server: the runtime's typed object of its kind (client-node's
 * model, field by field), with no status (the API server's to write) and its apiVersion and kind always set.
 */
export type Built<T> = BuiltinObject<Omit<T, 'status'>> & { apiVersion: string; kind: string };

const meta = (cluster: EtcdCluster, name: string, labels: Record<string, string>, owned = true): KubeObject['metadata'] => ({
  name,
  namespace: cluster.metadata.namespace,
  labels,
  ...(owned ? { ownerReferences: [ownerRef(cluster)] } : {}),
});

export function peerService(cluster: EtcdCluster): Built<V1Service> {
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

export function clientService(cluster: EtcdCluster): Built<V1Service> {
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
export function podDisruptionBudget(cluster: EtcdCluster): Built<V1PodDisruptionBudget> {
  const name = cluster.metadata.name!;
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: meta(cluster, pdbName(name), clusterLabels(name)),
    // AlwaysAllow: a member that is not Ready (crash-looping on a bad spec) can always be evicted, for a
    // rollback that replaces its pod; it serves nobody, so the budget loses nothing.
    spec: { maxUnavailable: 1, selector: { matchLabels: clusterLabels(name) }, unhealthyPodEvictionPolicy: 'AlwaysAllow' },
  };
}

/** Who besides the members may reach them, from the operator's configuration (NetworkPolicyOptions in deps.ts). */
export interface NetworkPolicyOptions {
  /** The operator's own namespace (POD_NAMESPACE): its pods dial every member's client and metrics ports. */
  operatorNamespace: string;
  /** Namespaces whose pods may scrape the members' metrics port (METRICS_NAMESPACES). */
  metricsNamespaces: readonly string[];
}

const namespaceNamed = (namespace: string): V1NetworkPolicyPeer['namespaceSelector'] => ({ matchLabels: { 'kubernetes.io/metadata.name': namespace } });
const tcp = (port: number): { protocol: string; port: number } => ({ protocol: 'TCP', port });

/**
 * The members' ingress, all other of it refused: peers (2380) from the members and the operator's pods (which
 * only complete a TLS handshake there, to see which CA a member's peer certificate comes from during a CA
 * rotation: tls/cluster-secrets.ts membersNotServedBy); clients (2379) from the
 * members, the operator's pods, the cluster's backup Jobs (pods of the cluster's namespace labelled as the
 * backup Jobs are) and spec.network.clientsFrom (unset: every pod of the namespace); metrics (2381), which
 * etcd serves in plain http even with TLS, from the operator's pods and the monitoring namespaces. Ingress
 * only: what members dial (their peers, nothing else) is not restricted.
 */
export function networkPolicy(cluster: EtcdCluster, spec: DefaultedSpec, options: NetworkPolicyOptions): NetworkPolicy & { apiVersion: string; kind: string } {
  const name = cluster.metadata.name!;
  const members: V1NetworkPolicyPeer = { podSelector: { matchLabels: clusterLabels(name) } };
  const operator: V1NetworkPolicyPeer = { namespaceSelector: namespaceNamed(options.operatorNamespace), podSelector: { matchLabels: { ...OPERATOR_SELECTOR } } };
  const backupJobs: V1NetworkPolicyPeer = { podSelector: { matchLabels: { ...BACKUP_JOB_LABELS } } };
  const clients: V1NetworkPolicyPeer[] = spec.network?.clientsFrom ?? [{ podSelector: {} }];
  const monitoring = options.metricsNamespaces.map((ns): V1NetworkPolicyPeer => ({ namespaceSelector: namespaceNamed(ns) }));
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: meta(cluster, networkPolicyName(name), clusterLabels(name)),
    spec: {
      podSelector: { matchLabels: clusterLabels(name) },
      policyTypes: ['Ingress'],
      ingress: [
        { from: [members, operator], ports: [tcp(PEER_PORT)] },
        { from: [members, operator, backupJobs, ...clients], ports: [tcp(CLIENT_PORT)] },
        { from: [operator, ...monitoring], ports: [tcp(METRICS_PORT)] },
      ],
    },
  };
}

export function memberPVC(cluster: EtcdCluster, spec: DefaultedSpec, member: string): Built<V1PersistentVolumeClaim> {
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

/**
 * The revision of how the operator renders member pods, recorded in each pod's template fingerprint. Raised
 * whenever a change of this file must reach running members, so that pods made before it count as outdated.
 * 1: before the fingerprint recorded it; 2: the restricted Pod Security Standard (securityContext defaults,
 * no service account token, default requests); 3: readiness is /health?exclude=NOSPACE (a NOSPACE alarm is the
 * whole cluster's: with plain /health every member left the client Service at once, reads included).
 */
export const RENDER_REVISION = 3;

// Declared with the API, whose podTemplate descriptions state them.
export { DEFAULT_ETCD_RESOURCES, MEMBER_CONTAINER_SECURITY, MEMBER_POD_SECURITY };

/** The member tools (peer-wait, restore-tools) run as this user whatever the pod's: they need no other. */
const TOOLS_USER: V1SecurityContext = { runAsNonRoot: true, runAsUser: 65532 };

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
  /** Start etcd with --force-new-cluster: a disaster recovery from this member's data alone. */
  forceNewCluster?: boolean;
  /** Restore this member's data from a snapshot before etcd first starts (a new cluster from a backup). */
  restore?: { source: RestoreSource; agentImage: string };
  /** For a cluster with TLS: the CA bundles its members trust now, recorded in the template fingerprint. */
  caBundles?: CABundles;
  /** The member's TLS stage (tls/members.ts desiredTLSStage); unset: the spec's final one, as for a new cluster. */
  tlsStage?: TLSStage;
}

/** A stored snapshot to restore from: where, which object, and its SHA-256, which fetch-snapshot checks before etcd starts. */
export interface RestoreSource {
  destination: Destination;
  key: string;
  sha256: string;
}

/** Init containers of a restored member's pod whose failure means the snapshot was refused (see observePod). */
export const RESTORE_CONTAINERS = ['fetch-snapshot', 'restore-snapshot'] as const;
const SNAPSHOT_FILE = `${DATA_DIR}/restore/snapshot.db`;
const MEMBER_DATA = `${DATA_DIR}/data`;

/**
 * The init containers that restore a member from a snapshot, in order:
 * - restore-tools copies the static member-restore binary into a shared volume (the etcd image has no shell);
 * - fetch-snapshot (the backup agent) downloads the snapshot onto the member's volume and checks its SHA-256
 *   and etcd's own trailing hash, unless the member's data exists already;
 * - restore-snapshot runs the etcd image's own etcdutl through member-restore, which restores into a scratch
 *   directory and renames it into place only on success, and does nothing once the data exists (the pod's
 *   sandbox may be recreated long after etcd wrote to it).
 * No etcd starts on a snapshot that failed a check: the member's pod stays in its init containers.
 */
function restoreInitContainers(spec: DefaultedSpec, options: MemberPodOptions & { restore: NonNullable<MemberPodOptions['restore']> }, name: string, ns: string, token: string, toolsImage: string, etcdSecurity: V1SecurityContext): { containers: V1Container[]; volumes: Volume[] } {
  const { source, agentImage } = options.restore;
  const store = destinationVolumes(source.destination);
  const storeMounts = store.mounts;
  // The secret may be deleted once the cluster runs: the restore is skipped then, and must not need it.
  const volumes = store.volumes.map((v) => (v.secret ? { ...v, secret: { ...v.secret, optional: true } } : v));
  // The user etcd runs as: the snapshot fetch-snapshot leaves is then etcd's user's, which restore-snapshot
  // (running as that user too) deletes once restored.
  const etcdUser: V1SecurityContext = {
    ...(etcdSecurity.runAsUser !== undefined ? { runAsUser: etcdSecurity.runAsUser } : {}),
    ...(etcdSecurity.runAsNonRoot !== undefined ? { runAsNonRoot: etcdSecurity.runAsNonRoot } : {}),
  };
  return {
    volumes: [
      ...volumes,
      { name: 'restore-tools', emptyDir: { sizeLimit: '64Mi' } },
      // The agent's own scratch space (Node.js and the storage SDKs may write under /tmp): the root filesystem
      // is read-only, and the binary restore-snapshot runs must not sit in a directory the agent writes to.
      { name: 'restore-tmp', emptyDir: { sizeLimit: '16Mi' } },
    ],
    containers: [
      {
        name: 'restore-tools',
        image: toolsImage,
        imagePullPolicy: 'IfNotPresent',
        command: ['/member-restore', 'install', '/restore-tools'],
        // It writes only the restore-tools volume.
        volumeMounts: [{ name: 'restore-tools', mountPath: '/restore-tools' }],
        resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '32Mi' } },
        // Never the user's identity: it touches no member data, and the binary it copies is 0755.
        securityContext: { ...MEMBER_CONTAINER_SECURITY, ...TOOLS_USER },
      },
      {
        name: 'fetch-snapshot',
        image: agentImage,
        imagePullPolicy: 'IfNotPresent',
        command: ['/usr/local/bin/node', AGENT_SCRIPT, 'fetch'],
        args: [
          `--destination-json=${JSON.stringify(source.destination)}`,
          `--key=${source.key}`,
          `--sha256=${source.sha256}`,
          `--out=${SNAPSHOT_FILE}`,
          `--skip-if-exists=${MEMBER_DATA}`,
          ...store.args,
        ],
        terminationMessagePolicy: 'FallbackToLogsOnError',
        // It writes the snapshot under the data volume, and its scratch files under /tmp.
        volumeMounts: [{ name: 'data', mountPath: DATA_DIR }, ...storeMounts, { name: 'restore-tmp', mountPath: '/tmp' }],
        resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '320Mi' } },
        // In the backup Jobs' group: a backup on a PVC is their file (0640, group fsGroup), and this user has
        // no capability to read past that.
        securityContext: { ...MEMBER_CONTAINER_SECURITY, ...etcdUser, runAsGroup: RESTRICTED_POD.fsGroup },
      },
      {
        name: 'restore-snapshot',
        image: etcdImage(spec),
        imagePullPolicy: 'IfNotPresent',
        command: ['/restore-tools/member-restore', 'restore', `--snapshot=${SNAPSHOT_FILE}`, `--data-dir=${MEMBER_DATA}`, '--'],
        args: ['/usr/local/bin/etcdutl', 'snapshot', 'restore', SNAPSHOT_FILE,
          `--name=${options.member}`,
          `--initial-cluster=${options.initialCluster.join(',')}`,
          `--initial-cluster-token=${token}`,
          `--initial-advertise-peer-urls=${peerURL(name, ns, options.member, memberTLS(spec, options.member, options.tlsStage).advertisePeer)}`,
        ],
        terminationMessagePolicy: 'FallbackToLogsOnError',
        // etcdutl writes only under --data-dir (its scratch directory, then renamed) and deletes the snapshot.
        volumeMounts: [{ name: 'data', mountPath: DATA_DIR }, { name: 'restore-tools', mountPath: '/restore-tools', readOnly: true }],
        ...(spec.podTemplate?.spec?.resources ? { resources: spec.podTemplate.spec.resources } : {}),
        // etcd's own identity: the data it restores is etcd's (0700 directories, 0600 files), so it must be
        // written by the user that etcd then runs as.
        securityContext: etcdSecurity,
      },
    ],
  };
}

/** Marks a pod started with --force-new-cluster, to be restarted without it once it serves. */
export const FORCE_NEW_CLUSTER_ANNOTATION = 'etcd.quorum.dev/force-new-cluster';

/** Where a member pod records which spec it was made from, field by field (see templateFingerprint). */
export const TEMPLATE_ANNOTATION = 'etcd.quorum.dev/template';

/**
 * What each user-facing part of the spec that shapes a member pod was when the pod was made: the image
 * (version or image), etcd options, podTemplate and antiAffinity, each as a short hash, and the operator's
 * own way of rendering pods (`render`, RENDER_REVISION). Comparing with the current spec names the fields a
 * running member has not picked up.
 */
export function templateFingerprint(spec: DefaultedSpec, ca?: CABundles, stage?: TLSStage): Record<string, string> {
  const h = (v: unknown): string => createHash('sha256').update(JSON.stringify(v ?? null)).digest('hex').slice(0, 12);
  return { image: etcdImage(spec), etcd: h(spec.etcd), podTemplate: h(spec.podTemplate), antiAffinity: spec.antiAffinity, render: String(RENDER_REVISION), ...tlsFingerprint(spec, ca, stage ?? finalTLSStage(spec)) };
}

/**
 * The fields of `spec` a pod was not made from; pods made before the annotation existed compare by image.
 * A pod whose fingerprint has no `render` was rendered before the revision was recorded: revision 1.
 */
export function outdatedFields(pod: KubeObject & { spec?: { containers?: { name: string; image?: string }[] } }, spec: DefaultedSpec, ca?: CABundles, stage?: TLSStage): string[] {
  const want = templateFingerprint(spec, ca, stage);
  const recorded = pod.metadata.annotations?.[TEMPLATE_ANNOTATION];
  let had: Record<string, string>;
  try {
    had = { render: '1', ...(recorded ? (JSON.parse(recorded) as Record<string, string>) : { image: pod.spec?.containers?.find((c) => c.name === 'etcd')?.image ?? '' }) };
  } catch {
    had = {};
  }
  // A pod made without TLS has no `tls` entry: it is outdated once spec.tls asks for TLS (plaintext to TLS in place).
  return Object.keys(want).filter((k) => (k in had || k === 'tls') && had[k] !== want[k]).map((k) => (k === 'image' ? `image ${had[k]} → ${want[k]}` : k));
}

/** Whether a pod was made with TLS material (certificates it trusts a CA by): its fingerprint has a `tls` entry. */
export function madeWithTLS(pod: KubeObject): boolean {
  const recorded = pod.metadata.annotations?.[TEMPLATE_ANNOTATION];
  try {
    return recorded !== undefined && 'tls' in (JSON.parse(recorded) as Record<string, string>);
  } catch {
    return false;
  }
}

/** The cluster's own initial-cluster-token: a restored cluster gets a new cluster ID from it. */
const clusterToken = (cluster: EtcdCluster): string => `${cluster.metadata.name}-${cluster.metadata.uid}`;

/** A member pod: the Pod object, with its spec (always set) typed for the code (and tests) that read it back. */
export type MemberPod = Built<V1Pod> & { spec: NonNullable<Built<V1Pod>['spec']> };

export function memberPod(cluster: EtcdCluster, spec: DefaultedSpec, options: MemberPodOptions): MemberPod {
  const name = cluster.metadata.name!;
  const ns = cluster.metadata.namespace!;
  const { member } = options;
  const labels = { ...(spec.podTemplate?.metadata?.labels ?? {}), ...memberLabels(name, member) };
  const podSpec = spec.podTemplate?.spec ?? {};
  const tls = memberTLS(spec, member, options.tlsStage);
  const args = etcdArgs(cluster, spec, options, tls);
  const affinity = memberAffinity(spec, name);
  const volume: Volume = spec.storage.emptyDir
    ? { name: 'data', emptyDir: spec.storage.emptyDir }
    : { name: 'data', persistentVolumeClaim: { claimName: pvcName(member) } };
  // The user's fields win, one by one (a whole seccompProfile, say, replaces the default one).
  const podSecurity: V1PodSecurityContext = { ...MEMBER_POD_SECURITY, ...podSpec.securityContext };
  const etcdSecurity: V1SecurityContext = { ...MEMBER_CONTAINER_SECURITY, ...podSpec.containerSecurityContext };
  const restore = options.restore && options.peerWaitImage ? restoreInitContainers(spec, { ...options, restore: options.restore }, name, ns, clusterToken(cluster), options.peerWaitImage, etcdSecurity) : undefined;
  const peerWait = peerWaitContainers(options);
  // peer-wait runs before the restore: it takes an existing member directory for a restart (and waits 10 s at
  // most), and restore-snapshot creates that directory, so after it a fresh restored member would not wait.
  const initContainers = [...peerWait, ...(restore?.containers ?? [])];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...meta(cluster, member, labels),
      annotations: {
        ...(spec.podTemplate?.metadata?.annotations ?? {}),
        'etcd.quorum.dev/initial-cluster-state': options.initialClusterState,
        ...(options.forceNewCluster ? { [FORCE_NEW_CLUSTER_ANNOTATION]: 'true' } : {}),
        [TEMPLATE_ANNOTATION]: JSON.stringify(templateFingerprint(spec, options.caBundles, options.tlsStage)),
        ...tls.annotations,
      },
    },
    spec: {
      hostname: member,
      subdomain: peerServiceName(name),
      // The operator, not the kubelet, decides when a member is replaced; a crashed etcd is restarted in place.
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      enableServiceLinks: false,
      // etcd never calls the Kubernetes API: a token would only be something to steal.
      automountServiceAccountToken: false,
      securityContext: podSecurity,
      ...(podSpec.nodeSelector ? { nodeSelector: podSpec.nodeSelector } : {}),
      ...(podSpec.tolerations ? { tolerations: podSpec.tolerations } : {}),
      ...(podSpec.topologySpreadConstraints ? { topologySpreadConstraints: podSpec.topologySpreadConstraints } : {}),
      ...(podSpec.priorityClassName ? { priorityClassName: podSpec.priorityClassName } : {}),
      ...(Object.keys(affinity).length ? { affinity } : {}),
      ...(initContainers.length > 0 ? { initContainers } : {}),
      containers: [etcdContainer(spec, args, tls, podSpec, etcdSecurity)],
      // tls/members.ts builds client-node's V1Volumes, whose ephemeral claim templates type timestamps as Date;
      // its Secret volumes carry no timestamp, so they are these JSON volumes as they are.
      volumes: [volume, ...(tls.volumes as Volume[]), ...(restore?.volumes ?? [])],
    },
  };
}

/** etcd's flags for a member: its names and URLs, the initial cluster, TLS, and spec.etcd's options. */
function etcdArgs(cluster: EtcdCluster, spec: DefaultedSpec, options: MemberPodOptions, tls: MemberTLSRender): string[] {
  const name = cluster.metadata.name!;
  const ns = cluster.metadata.namespace!;
  const { member } = options;
  const e = spec.etcd ?? {};
  return [
    `--name=${member}`,
    `--data-dir=${DATA_DIR}/data`,
    `--listen-peer-urls=${tls.listenPeer}`,
    `--listen-client-urls=${tls.listenClient}`,
    // Plain http always: the probes and the peer-activity metrics read it without a certificate.
    `--listen-metrics-urls=http://0.0.0.0:${METRICS_PORT}`,
    `--advertise-client-urls=${clientURL(name, ns, member, tls.advertiseClient)}`,
    `--initial-advertise-peer-urls=${peerURL(name, ns, member, tls.advertisePeer)}`,
    `--initial-cluster=${options.initialCluster.join(',')}`,
    `--initial-cluster-state=${options.initialClusterState}`,
    `--initial-cluster-token=${clusterToken(cluster)}`,
    ...tls.args,
    ...(e.quotaBackendBytes !== undefined ? [`--quota-backend-bytes=${e.quotaBackendBytes}`] : []),
    ...(e.autoCompactionMode ? [`--auto-compaction-mode=${e.autoCompactionMode}`] : []),
    ...(e.autoCompactionRetention ? [`--auto-compaction-retention=${e.autoCompactionRetention}`] : []),
    ...(e.snapshotCount !== undefined ? [`--snapshot-count=${e.snapshotCount}`] : []),
    ...(e.heartbeatIntervalMs !== undefined ? [`--heartbeat-interval=${e.heartbeatIntervalMs}`] : []),
    ...(e.electionTimeoutMs !== undefined ? [`--election-timeout=${e.electionTimeoutMs}`] : []),
    ...(e.extraArgs ?? []),
    ...(options.forceNewCluster ? ['--force-new-cluster'] : []),
  ];
}

/** The user's affinity, with the antiAffinity shortcut's term (one member per node) added. */
function memberAffinity(spec: DefaultedSpec, name: string): V1Affinity {
  const userAffinity = spec.podTemplate?.spec?.affinity ?? {};
  const antiAffinityTerm = { labelSelector: { matchLabels: clusterLabels(name) }, topologyKey: 'kubernetes.io/hostname' };
  return spec.antiAffinity === 'Required'
    ? { ...userAffinity, podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [antiAffinityTerm] } }
    : spec.antiAffinity === 'Preferred'
      ? { ...userAffinity, podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: antiAffinityTerm }] } }
      : userAffinity;
}

/** The init container that waits for the peers' names to resolve, when there is an image for it and names to wait for. */
function peerWaitContainers(options: MemberPodOptions): V1Container[] {
  return options.peerWaitImage && options.waitForNames?.length
    ? [
        {
          name: 'peer-wait',
          image: options.peerWaitImage,
          imagePullPolicy: 'IfNotPresent',
          // A member restarting on its own data (its member directory exists) waits 10 s at most, then starts:
          // etcd takes its peers from that data, and a name here may be a member removed since the pod was made.
          args: ['--timeout=120s', `--member-dir=${MEMBER_DATA}/member`, '--restart-timeout=10s', ...options.waitForNames],
          volumeMounts: [{ name: 'data', mountPath: DATA_DIR, readOnly: true }],
          // Its last lines explain a wait that timed out (`kubectl describe pod`, status.members[].lastError).
          // It writes nothing but that termination message (a file the kubelet mounts).
          terminationMessagePolicy: 'FallbackToLogsOnError',
          resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '32Mi' } },
          securityContext: { ...MEMBER_CONTAINER_SECURITY, ...TOOLS_USER },
        },
      ]
    : [];
}

/** spec.podTemplate.spec: the user's part of every member pod. */
type UserPodSpec = NonNullable<NonNullable<DefaultedSpec['podTemplate']>['spec']>;

/** The etcd container: its flags, ports, data and TLS mounts, resources, and the probes that say when it serves. */
function etcdContainer(spec: DefaultedSpec, args: string[], tls: MemberTLSRender, podSpec: UserPodSpec, etcdSecurity: V1SecurityContext): V1Container {
  return {
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
    volumeMounts: [{ name: 'data', mountPath: DATA_DIR }, ...tls.mounts],
    // etcd prints why it exits (a bad flag, a corrupt WAL) to its log: the kubelet keeps the last lines.
    terminationMessagePolicy: 'FallbackToLogsOnError',
    // Only an unset field gets the default: `{}` is the user asking for no requests at all.
    resources: podSpec.resources ?? DEFAULT_ETCD_RESOURCES,
    securityContext: etcdSecurity,
    // Ready = this member serves: it has a leader and no alarm.
    // The member itself: a leader, a linearizable read, no CORRUPT alarm. NOSPACE is excluded (etcd 3.4.23,
    // 3.5 and 3.6 all take exclude=): it is raised cluster-wide and would empty the client Service, reads
    // included, while the operator recovers from it (Degraded NoSpace says so).
    readinessProbe: { httpGet: { path: '/health?exclude=NOSPACE', port: METRICS_PORT }, periodSeconds: 2, timeoutSeconds: 2, failureThreshold: 3 },
    // Alive = the process answers locally; never restart a member just because the cluster lost quorum.
    livenessProbe: { httpGet: { path: '/health?serializable=true', port: METRICS_PORT }, initialDelaySeconds: 15, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 8 },
  };
}
