// Bad input is rejected by the API server (or, for what the CRD cannot check, the validating webhooks) with a
// message naming the field; deleting an EtcdCluster removes its pods and Services and treats its PVCs per
// reclaimPolicy; paused stops every change. The operator runs with only its generated RBAC throughout (it is
// deployed in-cluster). What disturbs the operator itself (uninstalling it, removing its webhooks) is in
// uninstall.test.ts, which holds it alone.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
// @shared operator
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client, connect, PersistentVolumeClaims, Pods, RoleBindings, Roles, Secrets, Services, type KubeObject, type ResourceType } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import { EtcdBackups, EtcdBackupSchedules, EtcdClusters, EtcdRestores } from '../../src/resources.ts';
import type { EtcdCluster } from '../../src/api/etcdcluster.ts';
import type { Destination } from '../../src/api/destination.ts';
import { applyCluster, clientServiceEndpoint, etcdctl, eventually, PLAINTEXT, setUpOperator, waitAvailable } from './support.ts';

let env: TestEnv;
let ns: string;
before(async () => {
  env = await setUpOperator();
  ns = await env.namespace('validate');
});
after(() => env.stop());

async function rejected(spec: Record<string, unknown>, pattern: RegExp, name = 'bad'): Promise<void> {
  await assert.rejects(applyCluster(env.client, ns, name, spec), (err: Error) => {
    assert.match(err.message, pattern);
    return true;
  });
}

test('invalid specs are rejected by the API server with a message naming the field', async () => {
  await rejected({ replicas: 0 }, /spec\.replicas/);
  await rejected({ replicas: 10 }, /spec\.replicas/);
  await rejected({ version: '3.6' }, /spec\.version/);
  await rejected({ version: 'latest' }, /spec\.version/);
  await rejected({ replicas: 3, storage: { volumeClaimTemplate: { resources: { requests: { storage: '1Gi' } } }, emptyDir: {} } }, /spec\.storage/);
  // An unknown field, with the strict field validation kubectl uses by default.
  const unknown = await env.kube.kubectl(['apply', '-n', ns, '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name: 'typo' }, spec: { replica: 3 } }),
    allowFailure: true,
  });
  assert.match(unknown, /unknown field "spec\.replica"/);
});

test('a privileged or root podTemplate is refused by the CRD itself', async () => {
  // Server-side dry runs. The API server checks a custom resource's schema and CEL rules before it calls any
  // validating webhook, and these messages are the CEL rules' own: the operator's webhook does not check these
  // fields (validateSpec does not mirror the rules, api-cel.test.ts), so the CRD alone refuses them, as it does
  // with the operator scaled to 0 or its webhooks skipped.
  const dryRun = (name: string, podTemplate: Record<string, unknown>): Promise<unknown> =>
    env.client.create(EtcdClusters, { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name, namespace: ns }, spec: { replicas: 1, podTemplate } }, { dryRun: true });
  await assert.rejects(dryRun('privileged', { spec: { containerSecurityContext: { privileged: true, capabilities: { add: ['SYS_ADMIN'] } } } }), (err: Error) => {
    assert.match(err.message, /spec\.podTemplate\.spec\.containerSecurityContext must not set privileged: true or allowPrivilegeEscalation: true/);
    assert.match(err.message, /capabilities\.add must be empty/);
    return true;
  });
  await assert.rejects(dryRun('root', { spec: { securityContext: { runAsUser: 0, seccompProfile: { type: 'Unconfined' } } } }), (err: Error) => {
    assert.match(err.message, /spec\.podTemplate\.spec\.securityContext must not run members as root/);
    assert.match(err.message, /seccompProfile must not be Unconfined/);
    return true;
  });
  await dryRun('another-user', { spec: { securityContext: { runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000 } } });
});

test('storage cannot change after creation; even replicas are accepted with a warning and a condition', async () => {
  await applyCluster(env.client, ns, 'fixed', { replicas: 1, storage: { volumeClaimTemplate: { resources: { requests: { storage: '1Gi' } } } } });
  await rejected({ replicas: 1, storage: { volumeClaimTemplate: { resources: { requests: { storage: '2Gi' } } } } }, /storage is immutable/, 'fixed');
  const warned = await env.kube.kubectl(['apply', '-n', ns, '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name: 'even' }, spec: { replicas: 2 } }),
    allowFailure: true,
  });
  assert.match(warned, /Warning: .*even number of members/);
  await eventually('EvenReplicas condition', async () => (await env.client.get(EtcdClusters, { namespace: ns, name: 'even' })).status?.conditions?.some((c) => c.type === 'EvenReplicas' && c.status === 'True'), { timeoutMs: 60_000 });
  for (const name of ['fixed', 'even']) await env.client.delete(EtcdClusters, { namespace: ns, name });
});

test('the backup kinds: what the CRD cannot check is refused by their validating webhooks, naming the field', async () => {
  // Server-side dry runs: admission runs in full, and nothing is created (no restore or schedule starts).
  const apiVersion = 'etcd.quorum.dev/v1alpha1';
  const s3 = { s3: { bucket: 'quorum', credentialsSecret: 's3-credentials' } };
  const refusedCreate = async (create: Promise<unknown>, pattern: RegExp): Promise<void> => {
    await assert.rejects(create, (err: Error) => {
      assert.match(err.message, pattern);
      return true;
    });
  };
  const schedule = (name: string, spec: Record<string, unknown>): Promise<unknown> =>
    env.client.create(EtcdBackupSchedules, { apiVersion, kind: 'EtcdBackupSchedule', metadata: { name, namespace: ns }, spec: { clusterName: 'example', schedule: '0 3 * * *', destination: s3, ...spec } }, { dryRun: true });
  const backup = (name: string, spec: Record<string, unknown>): Promise<unknown> =>
    env.client.create(EtcdBackups, { apiVersion, kind: 'EtcdBackup', metadata: { name, namespace: ns }, spec: { clusterName: 'example', destination: s3, ...spec } }, { dryRun: true });
  const restore = (name: string, spec: Record<string, unknown>): Promise<unknown> =>
    env.client.create(EtcdRestores, { apiVersion, kind: 'EtcdRestore', metadata: { name, namespace: ns }, spec: { clusterName: 'restored', ...spec } }, { dryRun: true });

  // EtcdBackupSchedule: the cron expression, parsed as the schedule controller parses it.
  await refusedCreate(schedule('bad-cron', { schedule: '61 * * * *' }), /spec\.schedule "61 \* \* \* \*" is not a valid cron expression: Constraint error, got value 61 expected range 0-59/);
  await refusedCreate(schedule('never', { schedule: '0 0 30 2 *' }), /spec\.schedule "0 0 30 2 \*" is not a valid cron expression/);
  await refusedCreate(schedule('seconds', { schedule: '* * * * * *' }), /spec\.schedule .* fires more than once a minute/);
  // A `..` segment is refused by the CRD's pattern (KEY_PREFIX_PATTERN) before any webhook; the webhooks' own check
  // of the path stands behind it for objects stored before the pattern refused it.
  await refusedCreate(schedule('dot-dot', { destination: { pvc: { claimName: 'etcd-backups', path: 'a/../b' } } }), /spec\.destination\.pvc\.path: Invalid value: "a\/\.\.\/b"/);
  await schedule('fine', { schedule: '@daily', retention: { maxCount: 7, maxAge: '720h' } });
  // EtcdBackup: a name its Job cannot carry as a label, a PVC path no snapshot can be stored under.
  await refusedCreate(backup('b'.repeat(64), {}), /metadata\.name is 64 characters, more than the 63 of a label value/);
  await refusedCreate(backup('dot-dot', { destination: { pvc: { claimName: 'etcd-backups', path: '..' } } }), /spec\.destination\.pvc\.path: Invalid value: "\.\."/);
  await backup('fine', { destination: { pvc: { claimName: 'etcd-backups', path: 'example' } } });
  // EtcdRestore: the EtcdCluster it would create must be valid; a PVC key must stay inside the volume.
  await refusedCreate(restore('both-images', { backupName: 'nightly', clusterSpec: { image: 'registry.example/etcd:v3.6.16', repository: 'registry.example/etcd' } }), /spec\.clusterSpec: in the EtcdCluster this restore creates, spec\.image and spec\.repository are mutually exclusive/);
  await refusedCreate(restore('outside', { destination: { pvc: { claimName: 'etcd-backups' } }, key: '../x.db', sha256: 'a'.repeat(64) }), /spec\.key "\.\.\/x\.db" is not a file path inside the volume/);
  await refusedCreate(restore('r'.repeat(64), { backupName: 'nightly' }), /metadata\.name is 64 characters/);
  // A snapshot given by destination and key must come with its SHA-256 (issue 23): the CRD refuses it without.
  await refusedCreate(restore('unhashed', { destination: { pvc: { claimName: 'etcd-backups' } }, key: 'x.db' }), /must set either backupName, or destination, key and sha256/);
  await restore('fine', { backupName: 'nightly' });
  // EtcdCluster.spec.bootstrap.fromBackup: the same PVC key rule.
  await refusedCreate(
    env.client.create(EtcdClusters, { apiVersion, kind: 'EtcdCluster', metadata: { name: 'outside', namespace: ns }, spec: { bootstrap: { fromBackup: { destination: { pvc: { claimName: 'etcd-backups' } }, key: '/abs.db', sha256: 'a'.repeat(64) } } } }, { dryRun: true }),
    /spec\.bootstrap\.fromBackup\.key "\/abs\.db" is not a file path inside the volume/,
  );
  // The restored cluster's warnings come back to whoever creates the restore.
  const warned = await env.kube.kubectl(['apply', '--dry-run=server', '-n', ns, '-f', '-'], {
    input: JSON.stringify({ apiVersion, kind: 'EtcdRestore', metadata: { name: 'even' }, spec: { clusterName: 'restored', backupName: 'nightly', clusterSpec: { replicas: 2 } } }),
    allowFailure: true,
  });
  assert.match(warned, /Warning: spec\.clusterSpec\.replicas is 2: an even number of members/);
  assert.match(warned, /etcdrestore\.etcd\.quorum\.dev\/even created \(server dry run\)/);
});

test('no confused deputy: a user who may create backups but not get a Secret cannot name it as credentials; http only to an in-cluster Service', async () => {
  // RBAC as the API server decides it: mallory may create the backup kinds, and get one Secret by name only.
  const rbac = 'rbac.authorization.k8s.io';
  const write = { fieldManager: 'validation-it' };
  await env.client.create(Roles, { apiVersion: `${rbac}/v1`, kind: 'Role', metadata: { name: 'backup-author', namespace: ns }, rules: [
    { apiGroups: ['etcd.quorum.dev'], resources: ['etcdbackups', 'etcdbackupschedules', 'etcdrestores'], verbs: ['create', 'get', 'list'] },
    { apiGroups: [''], resources: ['secrets'], resourceNames: ['team-s3'], verbs: ['get'] },
  ] }, write);
  await env.client.create(RoleBindings, { apiVersion: `${rbac}/v1`, kind: 'RoleBinding', metadata: { name: 'backup-author', namespace: ns }, roleRef: { apiGroup: rbac, kind: 'Role', name: 'backup-author' }, subjects: [{ apiGroup: rbac, kind: 'User', name: 'mallory' }] }, write);
  await env.client.create(Secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'victim-db', namespace: ns }, stringData: { accessKeyId: 'app', secretAccessKey: 'not-for-mallory' } });
  const admin = await connect({ kubeconfig: env.kube.kubeconfig });
  const mallory = new Client({ ...admin, headers: async () => ({ ...(await admin.headers()), 'Impersonate-User': 'mallory' }) });
  const apiVersion = 'etcd.quorum.dev/v1alpha1';
  const s3 = (credentialsSecret: string, endpoint = 'https://s3.example.com'): Destination => ({ s3: { bucket: 'quorum', endpoint, credentialsSecret } });
  const backup = (name: string, destination: Destination, dryRun = false): Promise<unknown> =>
    mallory.create(EtcdBackups, { apiVersion, kind: 'EtcdBackup', metadata: { name, namespace: ns }, spec: { clusterName: 'example', destination } }, { dryRun });
  const refusal = /credentialsSecret "victim-db": mallory may not get the Secret victim-db in namespace .*a pod of the operator would mount it with the operator's identity/;
  try {
    await assert.rejects(backup('steal', s3('victim-db')), (err: Error) => (assert.match(err.message, refusal), true));
    assert.equal(await env.client.find(EtcdBackups, { namespace: ns, name: 'steal' }), undefined, 'nothing is created');
    await assert.rejects(
      mallory.create(EtcdRestores, { apiVersion, kind: 'EtcdRestore', metadata: { name: 'steal', namespace: ns }, spec: { clusterName: 'stolen', destination: s3('victim-db'), key: 'x.db', sha256: 'a'.repeat(64) } }),
      (err: Error) => (assert.match(err.message, refusal), true),
    );
    // The one Secret mallory may read is theirs to name (server-side dry run: admission in full, nothing made).
    await backup('own', s3('team-s3'), true);
    // The credentials travel to the endpoint: https, or plain http only to a Service of this cluster (the CRD's CEL).
    await assert.rejects(backup('plain', s3('team-s3', 'http://minio.example.com:9000'), true), /an endpoint must be https:\/\/, or http:\/\/ only to a Service in this cluster/);
    await backup('in-cluster', s3('team-s3', 'http://s3.localkube-storage.svc:9000'), true);
  } finally {
    mallory.close();
  }
});

const owned = async (client: Client, kind: ResourceType<KubeObject>, name: string): Promise<number> =>
  (await client.list(kind, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${name}` })).items.filter((o) => !o.metadata.deletionTimestamp).length;

test('deleting an EtcdCluster removes pods and Services; PVCs stay with Retain and go with Delete', async () => {
  for (const [name, reclaimPolicy] of [['keep', 'Retain'], ['drop', 'Delete']] as const) {
    await applyCluster(env.client, ns, name, { replicas: 1, storage: { reclaimPolicy, volumeClaimTemplate: { resources: { requests: { storage: '1Gi' } } } } });
  }
  await waitAvailable(env.client, ns, 'keep', 1);
  await waitAvailable(env.client, ns, 'drop', 1);
  for (const name of ['keep', 'drop']) await env.client.delete(EtcdClusters, { namespace: ns, name });
  for (const name of ['keep', 'drop']) {
    await eventually(`${name}: pods and Services gone`, async () => (await owned(env.client, Pods, name)) === 0 && (await owned(env.client, Services, name)) === 0, { timeoutMs: 90_000 });
  }
  await eventually('Delete: PVC gone', async () => (await owned(env.client, PersistentVolumeClaims, 'drop')) === 0, { timeoutMs: 90_000 });
  assert.equal(await owned(env.client, PersistentVolumeClaims, 'keep'), 1, 'Retain: the PVC and its data stay');
});

/**
 * The positive signal that the operator has seen and acted on `generation` while paused: a paused
 * reconcile writes this status (observedGeneration, phase and a Progressing condition of that generation
 * with reason Paused) and returns without taking any step. So once it shows, nothing that generation asks
 * for has been done, and every later reconcile reads the same paused spec from its cache.
 */
async function pausedAt(name: string, generation: number): Promise<NonNullable<EtcdCluster['status']>> {
  return eventually(`${name} reports Paused for generation ${generation}`, async () => {
    const { status } = await env.client.get(EtcdClusters, { namespace: ns, name });
    const progressing = status?.conditions?.find((c) => c.type === 'Progressing');
    const seen = status?.observedGeneration === generation && progressing?.observedGeneration === generation;
    return seen && status?.phase === 'Paused' && progressing?.reason === 'Paused' ? status : undefined;
  }, { timeoutMs: 60_000 });
}

test('paused: true stops every change and says so; unpausing resumes', async () => {
  await applyCluster(env.client, ns, 'sleepy', { ...PLAINTEXT, replicas: 1 });
  const running = await waitAvailable(env.client, ns, 'sleepy', 1);
  const claims = await owned(env.client, PersistentVolumeClaims, 'sleepy');
  const endpoint = await clientServiceEndpoint(env.client, ns, 'sleepy');
  // paused and the new size in one patch, so no reconcile ever saw the new size unpaused. A second paused
  // generation shows that later reconciles (not only the first one after pausing) change nothing either.
  for (const replicas of [5, 3]) {
    const patched = await env.client.mergePatch(EtcdClusters, { namespace: ns, name: 'sleepy' }, { spec: { paused: true, replicas } });
    const status = await pausedAt('sleepy', patched.metadata.generation ?? 0);
    assert.deepEqual(status.members?.map((m) => m.name), running.members.map((m) => m.name), `no member added while paused (replicas ${replicas})`);
    assert.equal(await owned(env.client, Pods, 'sleepy'), 1, 'no pod created while paused');
    assert.equal(await owned(env.client, PersistentVolumeClaims, 'sleepy'), claims, 'no claim created while paused');
    const listed = JSON.parse(await etcdctl(endpoint, 'member', 'list', '-w', 'json')) as { members: unknown[] };
    assert.equal(listed.members.length, 1, 'etcd has no new (learner) member');
  }
  await env.client.mergePatch(EtcdClusters, { namespace: ns, name: 'sleepy' }, { spec: { paused: false } });
  await waitAvailable(env.client, ns, 'sleepy', 3);
  await env.client.delete(EtcdClusters, { namespace: ns, name: 'sleepy' });
});
