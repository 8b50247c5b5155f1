// No confused deputy through a credentials Secret: the webhooks admit an object naming one only when the
// requesting user may get it (asked as that user: name, uid, groups, extra), and, since the webhooks fail
// open, the backup and restore controllers mount only a Secret labelled for Quorum backups, reading nothing
// of it but its metadata.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NotFoundError, type AdmissionRequest, type Client, type KubeObject, type Operation, type UserInfo } from '@quorum/runtime';
import type { EtcdBackup } from '../../src/api/etcdbackup.ts';
import type { EtcdCluster } from '../../src/api/etcdcluster.ts';
import { BACKUP_CREDENTIALS_LABEL, checkCredentials, credentialsRefusal } from '../../src/backup/credentials.ts';
import { planBackup } from '../../src/backup/plan.ts';
import { planRestore } from '../../src/restore/plan.ts';
import { validateEtcdBackup } from '../../src/webhooks/etcdbackup.ts';
import { validateEtcdCluster } from '../../src/webhooks/etcdcluster.ts';
import { secretAccessReviews, withCredentialsAccess, type SecretAccess } from '../../src/webhooks/credentials.ts';
import { backupReconcilerFixture } from './backup-reconciler-fixture.ts';

const USER: UserInfo = { username: 'mallory', uid: 'u-7', groups: ['devs', 'system:authenticated'], extra: { scopes: ['a'] } };
const S3 = (secret: string): EtcdBackup['spec']['destination'] => ({ s3: { bucket: 'quorum', credentialsSecret: secret } });
const backup = (destination = S3('victim-db')): EtcdBackup => ({ apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdBackup', metadata: { name: 'b', namespace: 'team' }, spec: { clusterName: 'c', destination } });

function request<T extends KubeObject>(object: T, operation: Operation = 'CREATE', oldObject?: T): AdmissionRequest<T> {
  return { uid: 'r', kind: { group: 'etcd.quorum.dev', version: 'v1alpha1', kind: object.kind ?? '' }, resource: { group: 'etcd.quorum.dev', version: 'v1alpha1', resource: 'x' }, namespace: 'team', operation, userInfo: USER, object, ...(oldObject ? { oldObject } : {}) };
}

/** A SecretAccess that allows only `readable`, and remembers what it was asked. */
function access(readable: string[]): { check: SecretAccess; asked: string[] } {
  const asked: string[] = [];
  return { asked, check: (user, ns, name) => (asked.push(`${user.username} ${ns}/${name}`), Promise.resolve({ allowed: readable.includes(name), reason: readable.includes(name) ? '' : 'no RBAC policy matched' })) };
}

test('the webhook refuses a credentialsSecret the requesting user may not get, naming it and the authorizer\'s words', async () => {
  const a = access(['team-s3']);
  const handler = withCredentialsAccess(validateEtcdBackup, a.check);
  const refused = await handler(request(backup()));
  assert.equal(refused.allowed, false);
  assert.ok(!refused.allowed && refused.code === 403 && /credentialsSecret "victim-db": mallory may not get the Secret victim-db in namespace team \(no RBAC policy matched\)/.test(refused.message), JSON.stringify(refused));
  assert.equal((await handler(request(backup(S3('team-s3'))))).allowed, true);
  assert.equal((await handler(request(backup({ pvc: { claimName: 'backups' } })))).allowed, true, 'a PVC names no Secret');
  assert.deepEqual(a.asked, ['mallory team/victim-db', 'mallory team/team-s3']);
  // An update that keeps the Secret is not asked again (a schedule edited by someone else); one that changes it is.
  assert.equal((await handler(request(backup(), 'UPDATE', backup()))).allowed, true);
  assert.equal((await handler(request(backup(), 'UPDATE', backup(S3('team-s3'))))).allowed, false);
  assert.equal((await handler({ ...request(backup(), 'DELETE'), object: undefined, oldObject: backup() })).allowed, true);
  // A review that cannot be made refuses: a failed check is no permission.
  const broken = withCredentialsAccess(validateEtcdBackup, () => Promise.reject(new Error('connection refused')));
  const failed = await broken(request(backup()));
  assert.ok(!failed.allowed && failed.code === 500 && /could not check whether mallory may get the Secret victim-db \(credentialsSecret\): connection refused/.test(failed.message));
});

test("an EtcdCluster's bootstrap.fromBackup destination is checked the same way", async () => {
  const a = access([]);
  const cluster: EtcdCluster = { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name: 'c', namespace: 'team' }, spec: { replicas: 1, bootstrap: { fromBackup: { destination: S3('victim-db'), key: 'k.db' } } } };
  const result = await withCredentialsAccess(validateEtcdCluster, a.check)(request(cluster));
  assert.ok(!result.allowed && /credentialsSecret "victim-db"/.test(result.message));
  // Its backups before a version change are made by the operator, with its identity: their Secret is the author's to read too.
  const withBackups: EtcdCluster = { ...cluster, spec: { replicas: 1, backup: { destination: S3('other-db') } } };
  const refused = await withCredentialsAccess(validateEtcdCluster, a.check)(request(withBackups));
  assert.ok(!refused.allowed && /credentialsSecret "other-db"/.test(refused.message));
  assert.deepEqual(a.asked, ['mallory team/victim-db', 'mallory team/other-db']);
});

test("the TLS Secrets an EtcdCluster or a restore's cluster names are checked the same way: members would serve with them", async () => {
  const a = access(['team-peer']);
  const tls = { peer: { secretName: 'team-peer' }, client: { secretName: 'victim-tls' } };
  const cluster: EtcdCluster = { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name: 'c', namespace: 'team' }, spec: { replicas: 1, tls } };
  const refused = await withCredentialsAccess(validateEtcdCluster, a.check)(request(cluster));
  assert.ok(!refused.allowed && refused.code === 403 && /spec\.tls\.client\.secretName "victim-tls": mallory may not get the Secret victim-tls/.test(refused.message), JSON.stringify(refused));
  assert.deepEqual(a.asked, ['mallory team/team-peer', 'mallory team/victim-tls']);
  // An EtcdRestore's cluster is created by the operator, with its identity: the restore's author is the one asked.
  const restore = { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdRestore', metadata: { name: 'r', namespace: 'team' }, spec: { clusterName: 'c2', backupName: 'b', clusterSpec: { replicas: 1, tls: { peer: { secretName: 'victim-tls' } } } } };
  const restoreRefused = await withCredentialsAccess<typeof restore>(() => Promise.resolve({ allowed: true }), a.check)(request(restore));
  assert.ok(!restoreRefused.allowed && /spec\.clusterSpec\.tls\.peer\.secretName "victim-tls"/.test(restoreRefused.message), JSON.stringify(restoreRefused));
  // Operator-managed TLS ({}) and disabled TLS name no Secret.
  const managed: EtcdCluster = { ...cluster, spec: { replicas: 1, tls: { peer: {}, client: {} } } };
  assert.equal((await withCredentialsAccess(validateEtcdCluster, access([]).check)(request(managed))).allowed, true);
});

test("the review is the request's user, uid, groups and extra asking to get that one Secret", async () => {
  const created: KubeObject[] = [];
  const client = { create: (_t: unknown, obj: KubeObject) => (created.push(obj), Promise.resolve({ ...obj, status: { allowed: false, reason: 'RBAC: no' } })) } as unknown as Pick<Client, 'create'>;
  assert.deepEqual(await secretAccessReviews(client)(USER, 'team', 'victim-db'), { allowed: false, reason: 'RBAC: no' });
  assert.deepEqual((created[0] as unknown as { spec: unknown }).spec, { user: 'mallory', uid: 'u-7', groups: ['devs', 'system:authenticated'], extra: { scopes: ['a'] }, resourceAttributes: { verb: 'get', group: '', resource: 'secrets', namespace: 'team', name: 'victim-db' } });
});

test('the operator mounts only a Secret labelled for backups, reading its metadata only', async () => {
  const asked: { path: string; accept: string | undefined }[] = [];
  const secrets: Record<string, Record<string, string>> = { labelled: { [BACKUP_CREDENTIALS_LABEL]: 'true' }, other: { app: 'db' } };
  const client = {
    request: (_m: string, path: string, _b: unknown, options: { headers?: Record<string, string> }) => {
      asked.push({ path, accept: options.headers?.['accept'] });
      const name = path.split('/').at(-1)!;
      const labels = secrets[name];
      return labels ? Promise.resolve({ kind: 'PartialObjectMetadata', metadata: { name, labels } }) : Promise.reject(new NotFoundError('GET', path, 404, { reason: 'NotFound', message: 'not found' }));
    },
  } as unknown as Pick<Client, 'request'>;
  assert.equal(await checkCredentials(client, 'team', S3('labelled')), undefined);
  assert.equal((await checkCredentials(client, 'team', S3('other')))?.reason, 'CredentialsNotLabelled');
  assert.equal((await checkCredentials(client, 'team', S3('gone')))?.reason, 'CredentialsSecretNotFound');
  assert.equal(await checkCredentials(client, 'team', { pvc: { claimName: 'x' } }), undefined);
  assert.equal(asked.length, 3);
  for (const a of asked) assert.match(a.accept ?? '', /^application\/json;as=PartialObjectMetadata;g=meta\.k8s\.io;v=v1/, a.path);
  assert.equal(asked[0]?.path, '/api/v1/namespaces/team/secrets/labelled');
  assert.match(credentialsRefusal('other', {})!.message, /not labelled etcd\.quorum\.dev\/backup-credentials=true.*kubectl label secret other etcd\.quorum\.dev\/backup-credentials=true/);
});

test('an unlabelled Secret fails the backup before any Job, and the restore before any cluster', () => {
  const refusal = credentialsRefusal('victim-db', { app: 'db' })!;
  const member = { name: 'c-1', healthy: true, leader: false, learner: false, hasLeader: true, appliedIndex: '1', dbSize: 1 };
  const backupPlan = planBackup({ phase: undefined, clusterExists: true, members: [member], job: undefined, now: 0, cannotStartGraceMs: 1, credentials: refusal });
  assert.deepEqual(backupPlan, { type: 'fail', reason: 'CredentialsNotLabelled', message: refusal.message });
  // Also a backup recorded Running whose Job was never made (the operator stopped in between).
  assert.equal(planBackup({ phase: 'Running', recordedMember: 'c-1', clusterExists: true, members: [member], job: undefined, now: 0, cannotStartGraceMs: 1, credentials: refusal }).type, 'fail');
  const restorePlan = planRestore({ phase: undefined, usesBackupName: false, createdAt: 0, now: 0, backupWaitMs: 1000, credentials: refusal });
  assert.ok(restorePlan.type === 'fail' && restorePlan.reason === 'CredentialsNotLabelled' && /no cluster was created$/.test(restorePlan.message), JSON.stringify(restorePlan));
});

test('the backup controller: an unlabelled Secret is Failed with the reason, a Warning event, and no Job', async () => {
  const fixture = backupReconcilerFixture({ ...backup(), metadata: { name: 'b', namespace: 'team', uid: 'b-uid', generation: 1 } }, { credentialsLabels: { app: 'db' } });
  await fixture.reconcile('team', 'b');
  const status = fixture.backups.get('team/b')?.status;
  assert.equal(status?.phase, 'Failed');
  const failed = status?.conditions?.find((c) => c.type === 'Failed');
  assert.equal(failed?.reason, 'CredentialsNotLabelled');
  assert.match(failed?.message ?? '', /credentials Secret victim-db is not labelled etcd\.quorum\.dev\/backup-credentials=true/);
  assert.deepEqual(fixture.events.map((e) => [e.type, e.reason]), [['Warning', 'BackupFailed']]);
  assert.deepEqual(fixture.writes, [], 'no Job');
});
