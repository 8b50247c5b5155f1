// Every pod the operator makes meets the restricted Pod Security Standard: member pods (with and without the
// restore init containers, and under the user's own securityContext), backup and prune Jobs, and the
// operator's own Deployment, whose namespace enforces the profile. And the template fingerprint tells member
// pods rendered before this apart.
// The checker below follows the restricted profile's rules (kubernetes.io/docs/concepts/security/
// pod-security-standards, "latest"), including the baseline ones it builds on, as the API server's
// PodSecurity admission applies them to a pod.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Container, V1SecurityContext } from '@kubernetes/client-node';
import { applyDefaults, type EtcdCluster, type EtcdClusterSpec } from '../../src/cluster/spec.ts';
import { DEFAULT_ETCD_RESOURCES, MEMBER_POD_SECURITY, memberPod, outdatedFields, RENDER_REVISION, TEMPLATE_ANNOTATION, type MemberPod, type MemberPodOptions } from '../../src/cluster/resources.ts';

/** A pod's spec as the operator writes it (the runtime's Pod, client-node's model). */
type PodSpec = MemberPod['spec'];
import type { EtcdBackup } from '../../src/api/etcdbackup.ts';
import { backupJob, RESTRICTED_POD } from '../../src/backup/job.ts';
import { operatorManifests, RESTRICTED_NAMESPACE_LABELS } from '../../src/deploy/manifests.ts';
import { pruneJob } from '../../src/schedule/prune-job.ts';

/** The volume types restricted allows; every other one (hostPath first of all) is refused. */
const RESTRICTED_VOLUME_TYPES = new Set(['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret']);
/** The only capability a restricted container may add. */
const ADDABLE_CAPABILITIES = new Set(['NET_BIND_SERVICE']);
const ALLOWED_SECCOMP = new Set(['RuntimeDefault', 'Localhost']);

/** Every violation of the restricted profile, one line each; an empty list means the pod is admitted. */
function restrictedViolations(spec: PodSpec): string[] {
  const out: string[] = [];
  const pod = spec.securityContext ?? {};
  const containers: V1Container[] = [...(spec.initContainers ?? []), ...spec.containers, ...((spec.ephemeralContainers ?? []) as V1Container[])];
  const sc = (c: V1Container): V1SecurityContext => c.securityContext ?? {};

  // Baseline: host namespaces, privileged containers, host ports, hostPath.
  if (spec.hostNetwork) out.push('hostNetwork');
  if (spec.hostPID) out.push('hostPID');
  if (spec.hostIPC) out.push('hostIPC');
  for (const c of containers) {
    if (sc(c).privileged) out.push(`${c.name}: privileged`);
    for (const p of c.ports ?? []) if (p.hostPort) out.push(`${c.name}: hostPort ${p.hostPort}`);
    if (sc(c).procMount && sc(c).procMount !== 'Default') out.push(`${c.name}: procMount ${sc(c).procMount}`);
  }
  for (const v of spec.volumes ?? []) {
    const types = Object.keys(v).filter((k) => k !== 'name');
    for (const t of types) if (!RESTRICTED_VOLUME_TYPES.has(t)) out.push(`volume ${v.name}: type ${t}`);
  }

  // Restricted: no privilege escalation, every capability dropped, non-root, a seccomp profile.
  for (const c of containers) {
    if (sc(c).allowPrivilegeEscalation !== false) out.push(`${c.name}: allowPrivilegeEscalation is not false`);
    if (!sc(c).capabilities?.drop?.includes('ALL')) out.push(`${c.name}: capabilities do not drop ALL`);
    for (const cap of sc(c).capabilities?.add ?? []) if (!ADDABLE_CAPABILITIES.has(cap)) out.push(`${c.name}: adds capability ${cap}`);
  }
  // runAsNonRoot: true at pod level (no container setting false), or true in every container.
  for (const c of containers) if (sc(c).runAsNonRoot === false) out.push(`${c.name}: runAsNonRoot false`);
  if (pod.runAsNonRoot !== true && containers.some((c) => sc(c).runAsNonRoot !== true)) out.push('runAsNonRoot is not true for every container');
  if (pod.runAsUser === 0) out.push('pod runAsUser 0');
  for (const c of containers) if (sc(c).runAsUser === 0) out.push(`${c.name}: runAsUser 0`);
  // seccomp: RuntimeDefault or Localhost at pod level (no container overriding it otherwise), or in every container.
  for (const c of containers) {
    const type = sc(c).seccompProfile?.type;
    if (type !== undefined && !ALLOWED_SECCOMP.has(type)) out.push(`${c.name}: seccompProfile ${type}`);
  }
  if (!ALLOWED_SECCOMP.has(pod.seccompProfile?.type ?? '') && containers.some((c) => !ALLOWED_SECCOMP.has(sc(c).seccompProfile?.type ?? ''))) out.push('no RuntimeDefault or Localhost seccomp profile');
  return out;
}

const cluster = (spec: EtcdClusterSpec = {}): EtcdCluster => ({ apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name: 'c', namespace: 'ns', uid: 'uid-1' }, spec });

const OPTIONS: MemberPodOptions = {
  member: 'c-0',
  initialClusterState: 'new',
  initialCluster: ['c-0=http://c-0.c.ns.svc:2380'],
  waitForNames: ['c-0.c.ns.svc'],
  peerWaitImage: 'ghcr.io/quorum-dev/peer-wait:test',
};
const RESTORE_S3: MemberPodOptions = {
  ...OPTIONS,
  restore: { source: { destination: { s3: { bucket: 'quorum', credentialsSecret: 's3-credentials' } }, key: 'backups/c.db', sha256: 'a'.repeat(64) }, agentImage: 'ghcr.io/quorum-dev/etcd-operator:test' },
};
const RESTORE_PVC: MemberPodOptions = {
  ...OPTIONS,
  restore: { source: { destination: { pvc: { claimName: 'etcd-backups', path: 'c' } }, key: 'c.db', sha256: 'c'.repeat(64) }, agentImage: 'ghcr.io/quorum-dev/etcd-operator:test' },
};

const build = (spec: EtcdClusterSpec, options: MemberPodOptions): PodSpec => memberPod(cluster(spec), applyDefaults(spec), options).spec;
const container = (pod: PodSpec, name: string): V1Container => {
  const found = [...(pod.initContainers ?? []), ...pod.containers].find((c) => c.name === name);
  assert.ok(found, `container ${name}`);
  return found;
};

test('the checker refuses what restricted refuses, so that an empty list means something', () => {
  const good = build({}, OPTIONS);
  assert.deepEqual(restrictedViolations(good), []);
  const bad = (change: (pod: PodSpec) => void): string[] => {
    const pod = structuredClone(good);
    change(pod);
    return restrictedViolations(pod);
  };
  const etcd = (pod: PodSpec): V1SecurityContext => (pod.containers[0]!.securityContext ??= {});
  assert.ok(bad((p) => { p.securityContext = { ...p.securityContext, runAsUser: 0 }; }).includes('pod runAsUser 0'));
  assert.ok(bad((p) => { delete p.securityContext!.runAsNonRoot; }).includes('runAsNonRoot is not true for every container'));
  assert.ok(bad((p) => { delete p.securityContext!.seccompProfile; }).includes('no RuntimeDefault or Localhost seccomp profile'));
  assert.ok(bad((p) => { etcd(p).seccompProfile = { type: 'Unconfined' }; }).includes('etcd: seccompProfile Unconfined'));
  assert.ok(bad((p) => { etcd(p).allowPrivilegeEscalation = true; }).includes('etcd: allowPrivilegeEscalation is not false'));
  assert.ok(bad((p) => { etcd(p).capabilities = { add: ['SYS_ADMIN'] }; }).includes('etcd: adds capability SYS_ADMIN'));
  assert.ok(bad((p) => { etcd(p).capabilities = { drop: ['ALL'], add: ['NET_BIND_SERVICE'] }; }).length === 0, 'NET_BIND_SERVICE may be added');
  assert.ok(bad((p) => { etcd(p).privileged = true; }).includes('etcd: privileged'));
  assert.ok(bad((p) => { p.hostNetwork = true; }).includes('hostNetwork'));
  assert.ok(bad((p) => { p.hostPID = true; }).includes('hostPID'));
  assert.ok(bad((p) => { p.hostIPC = true; }).includes('hostIPC'));
  assert.ok(bad((p) => { p.containers[0]!.ports![0]!.hostPort = 2379; }).includes('etcd: hostPort 2379'));
  assert.ok(bad((p) => { p.volumes = [{ name: 'h', hostPath: { path: '/var/lib/etcd' } }]; }).includes('volume h: type hostPath'));
  assert.ok(bad((p) => { p.initContainers![0]!.securityContext!.runAsUser = 0; }).includes('peer-wait: runAsUser 0'));
});

test('a member pod meets the restricted profile, with or without the restore init containers', () => {
  for (const [what, spec, options] of [
    ['PVC storage', {}, OPTIONS],
    ['emptyDir storage', { storage: { emptyDir: {} } }, OPTIONS],
    ['restored from S3', {}, RESTORE_S3],
    ['restored from a PVC', {}, RESTORE_PVC],
    ['no init containers at all', {}, { ...OPTIONS, peerWaitImage: undefined }],
  ] as const) {
    const pod = build(spec, options);
    assert.deepEqual(restrictedViolations(pod), [], what);
  }
  const restored = build({}, RESTORE_S3);
  assert.deepEqual(restored.initContainers?.map((c) => c.name), ['peer-wait', 'restore-tools', 'fetch-snapshot', 'restore-snapshot']);
});

test('the defaults: uid and gid 65532, fsGroup, no token, a read-only root, default requests without limits', () => {
  const pod = build({}, RESTORE_S3);
  assert.deepEqual(pod.securityContext, { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532, fsGroupChangePolicy: 'OnRootMismatch', seccompProfile: { type: 'RuntimeDefault' } });
  assert.equal(pod.automountServiceAccountToken, false);
  for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
    assert.equal(c.securityContext?.readOnlyRootFilesystem, true, `${c.name}: read-only root filesystem`);
    assert.deepEqual(c.securityContext?.capabilities, { drop: ['ALL'] }, c.name);
    assert.notEqual(c.securityContext?.runAsUser, 0, c.name);
  }
  const etcd = container(pod, 'etcd');
  // No limits: a CPU limit throttles etcd, a memory limit kills a growing member.
  assert.deepEqual(etcd.resources, { requests: { cpu: '50m', memory: '128Mi' } });
  // fetch-snapshot runs as the pod's user (no root fallback), in the backup Jobs' group, which can read their
  // 0640 files; the user it runs as is then the same one that restores and runs etcd.
  const fetch = container(pod, 'fetch-snapshot');
  assert.equal(fetch.securityContext?.runAsUser, undefined);
  assert.equal(fetch.securityContext?.runAsNonRoot, undefined);
  assert.equal(fetch.securityContext?.runAsGroup, RESTRICTED_POD.fsGroup);
  assert.equal(RESTRICTED_POD.runAsUser, MEMBER_POD_SECURITY.runAsUser, 'backup Jobs write their files as the member user');
  // Every container writes only to volumes: /tmp of the agent is an emptyDir of its own.
  const tmp = fetch.volumeMounts?.find((m) => m.mountPath === '/tmp');
  assert.ok(tmp && pod.volumes?.find((v) => v.name === tmp.name)?.emptyDir, 'fetch-snapshot has an emptyDir at /tmp');
  assert.notEqual(tmp.name, 'restore-tools', 'the agent does not write where the restore binary lives');
  assert.equal(container(pod, 'restore-snapshot').securityContext, etcd.securityContext, 'etcdutl writes the data as the user etcd runs as');
});

test("the user's securityContext wins field by field, containerSecurityContext reaches the etcd container, resources replace the default", () => {
  const spec: EtcdClusterSpec = {
    podTemplate: {
      spec: {
        securityContext: { runAsUser: 1000, fsGroup: 2000, seccompProfile: { type: 'Localhost', localhostProfile: 'etcd.json' } },
        containerSecurityContext: { runAsUser: 1001, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } },
        resources: { requests: { cpu: '1', memory: '2Gi' } },
      },
    },
  };
  const pod = build(spec, RESTORE_PVC);
  assert.deepEqual(restrictedViolations(pod), []);
  assert.deepEqual(pod.securityContext, { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 65532, fsGroup: 2000, fsGroupChangePolicy: 'OnRootMismatch', seccompProfile: { type: 'Localhost', localhostProfile: 'etcd.json' } });
  const etcd = container(pod, 'etcd');
  assert.deepEqual(etcd.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsUser: 1001, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } });
  assert.deepEqual(etcd.resources, { requests: { cpu: '1', memory: '2Gi' } });
  // Restoring writes etcd's data as etcd's user; fetching leaves the snapshot to that user too.
  assert.deepEqual(container(pod, 'restore-snapshot').securityContext, etcd.securityContext);
  assert.equal(container(pod, 'fetch-snapshot').securityContext?.runAsUser, 1001);
  // The member tools keep their own user.
  assert.equal(container(pod, 'peer-wait').securityContext?.runAsUser, 65532);
  assert.equal(container(pod, 'restore-tools').securityContext?.runAsUser, 65532);
  // `{}` is a choice too: no requests.
  assert.deepEqual(container(build({ podTemplate: { spec: { resources: {} } } }, OPTIONS), 'etcd').resources, {});
  assert.deepEqual(DEFAULT_ETCD_RESOURCES, { requests: { cpu: '50m', memory: '128Mi' } });
});

test('a user override to root (for volumes without fsGroup support) is what restricted refuses, and nothing else changes', () => {
  const pod = build({ podTemplate: { spec: { securityContext: { runAsUser: 0, runAsNonRoot: false } } } }, RESTORE_S3);
  assert.deepEqual(restrictedViolations(pod), ['runAsNonRoot is not true for every container', 'pod runAsUser 0']);
  // fetch-snapshot and restore-snapshot run as the pod's user then: root, like etcd.
  assert.equal(container(pod, 'fetch-snapshot').securityContext?.runAsUser, undefined);
  assert.equal(container(pod, 'restore-snapshot').securityContext?.runAsUser, undefined);
});

test('the render revision makes pods rendered before it outdated, and only by the field render', () => {
  const spec = applyDefaults({});
  const current = memberPod(cluster(), spec, OPTIONS);
  assert.deepEqual(outdatedFields(current, spec), []);
  const fingerprint = JSON.parse(current.metadata.annotations![TEMPLATE_ANNOTATION]!) as Record<string, string>;
  assert.equal(fingerprint['render'], String(RENDER_REVISION));
  assert.ok(RENDER_REVISION >= 2, 'revision 2 is the restricted securityContext');

  const withFingerprint = (f: Record<string, string>): typeof current => ({ ...current, metadata: { ...current.metadata, annotations: { [TEMPLATE_ANNOTATION]: JSON.stringify(f) } } });
  // Made before the fingerprint had `render` (revision 1), from the same spec.
  const { render: _, ...before } = fingerprint;
  assert.deepEqual(outdatedFields(withFingerprint(before), spec), ['render']);
  assert.deepEqual(outdatedFields(withFingerprint({ ...fingerprint, render: '1' }), spec), ['render']);
  // Made before the fingerprint existed at all: the same image, but rendered before too.
  const bare = { ...current, metadata: { ...current.metadata, annotations: {} } };
  assert.deepEqual(outdatedFields(bare, spec), ['render']);
  // A spec change and the render revision are named together.
  const other = applyDefaults({ etcd: { snapshotCount: 5000 } });
  assert.deepEqual(outdatedFields(withFingerprint(before), other), ['etcd', 'render']);
});

test('backup and prune Jobs meet the restricted profile, for every kind of destination', () => {
  const destinations: EtcdBackup['spec']['destination'][] = [
    { s3: { bucket: 'quorum', credentialsSecret: 's3-credentials' } },
    { gcs: { bucket: 'quorum', credentialsSecret: 'gcs-credentials' } },
    { azure: { container: 'quorum', credentialsSecret: 'azure-credentials' } },
    { pvc: { claimName: 'etcd-backups' } },
  ];
  for (const destination of destinations) {
    const backup: EtcdBackup = { metadata: { name: 'b', namespace: 'ns', uid: 'u' }, spec: { clusterName: 'c', destination } };
    for (const [what, job] of [
      ['backup', backupJob(backup, { member: 'c-0', dbSize: 0, agentImage: 'img' })],
      ['prune', pruneJob(backup, { schedule: 's', key: 'k', agentImage: 'img' })],
    ] as const) {
      const pod = (job as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
      assert.deepEqual(restrictedViolations(pod), [], `${what} Job, ${Object.keys(destination).join()}`);
    }
  }
});

test("the operator's namespace enforces restricted, and the operator's pods meet it", () => {
  const objects = operatorManifests();
  const namespace = objects.find((o) => o.kind === 'Namespace');
  assert.ok(namespace);
  for (const [label, value] of Object.entries({ enforce: 'restricted', 'enforce-version': 'latest', warn: 'restricted', audit: 'restricted' })) {
    assert.equal(namespace.metadata.labels?.[`pod-security.kubernetes.io/${label}`], value, label);
  }
  assert.deepEqual(Object.fromEntries(Object.entries(namespace.metadata.labels ?? {}).filter(([k]) => k.startsWith('pod-security.'))), RESTRICTED_NAMESPACE_LABELS);
  const deployment = objects.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: PodSpec } } } | undefined;
  assert.ok(deployment);
  assert.deepEqual(restrictedViolations(deployment.spec.template.spec), []);
});

test('peer-wait is told where etcd keeps its member directory, read-only, so a member restarting on its own data waits 10 s at most', () => {
  const pod = build({}, OPTIONS);
  const wait = container(pod, 'peer-wait');
  const dataDir = container(pod, 'etcd').command?.concat(container(pod, 'etcd').args ?? []).find((a) => a.startsWith('--data-dir='))?.slice('--data-dir='.length);
  assert.ok(dataDir, 'etcd has a --data-dir');
  assert.deepEqual(wait.args, ['--timeout=120s', `--member-dir=${dataDir}/member`, '--restart-timeout=10s', 'c-0.c.ns.svc']);
  const etcdMount = container(pod, 'etcd').volumeMounts?.find((m) => m.name === 'data');
  assert.deepEqual(wait.volumeMounts, [{ name: 'data', mountPath: etcdMount?.mountPath, readOnly: true }]);
  assert.deepEqual(restrictedViolations(pod), []);
});
