// The admission webhook's decisions (no confused deputy through backups): a RedisBackup, or a Redis bootstrapped
// from one, is admitted only when the requesting user may get the credentials Secret it would have mounted and the
// Secret is labelled for Redis backups; a check that cannot be made refuses; the manifests install the webhook,
// namespace-scoped like the rest, with its certificate's RBAC by name.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { credentialsRefusal, type CredentialsRefusal } from '@quorum/kit';
import type { AdmissionRequest, KubeObject, UserInfo, ValidationResult } from '@quorum/runtime';
import { REDIS_BACKUP_CREDENTIALS_LABEL } from '../../src/api/backup.ts';
import type { BackupDestination } from '../../src/api/destination.ts';
import { operatorManifests, WEBHOOK_CERT_ROLE, WEBHOOK_CLUSTER_ROLE } from '../../src/deploy/manifests.ts';
import { configFromEnv, WEBHOOK_CERT_SECRET } from '../../src/operator/config.ts';
import { validateCredentials, VALIDATING_WEBHOOK, type CredentialsWebhookDeps } from '../../src/webhooks/credentials.ts';

const s3 = (credentialsSecret: string): BackupDestination => ({ s3: { bucket: 'b', endpoint: 'https://s3.example.com', credentialsSecret } });
const backup = (destination: BackupDestination): KubeObject => ({ apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'RedisBackup', metadata: { name: 'b1', namespace: 'shop' }, spec: { redisName: 'cache', destination } }) as KubeObject;
const redis = (backupName?: string): KubeObject => ({ apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'Redis', metadata: { name: 'restored', namespace: 'shop' }, spec: backupName ? { bootstrap: { fromBackup: { backupName } } } : {} }) as KubeObject;
const request = (object: KubeObject, operation: AdmissionRequest['operation'] = 'CREATE'): AdmissionRequest<KubeObject> =>
  ({ uid: '1', kind: { group: 'redis.quorum.dev', version: 'v1alpha1', kind: object.kind }, resource: { group: 'redis.quorum.dev', version: 'v1alpha1', resource: 'x' }, namespace: 'shop', operation, userInfo: { username: 'mallory', groups: ['team'] }, object }) as AdmissionRequest<KubeObject>;

/** A namespace where mallory may get `readable`, and the Secrets' labels (absent: the Secret does not exist). */
function deps(readable: readonly string[], labels: Record<string, Record<string, string>>, backups: Record<string, BackupDestination> = {}) {
  const asked: { user: UserInfo; namespace: string; name: string }[] = [];
  const d: CredentialsWebhookDeps = {
    access: (user, namespace, name) => (asked.push({ user, namespace, name }), Promise.resolve({ allowed: readable.includes(name), reason: readable.includes(name) ? '' : 'RBAC: no rule' })),
    labelRefusal: (_ns, destination) => {
      const secret = destination.s3!.credentialsSecret;
      return Promise.resolve(credentialsRefusal(secret, labels[secret] ?? null, REDIS_BACKUP_CREDENTIALS_LABEL));
    },
    findBackup: (_ns, name) => Promise.resolve(backups[name] ? { spec: { destination: backups[name] } } : undefined),
  };
  return { d, asked };
}
const LABELLED = { [REDIS_BACKUP_CREDENTIALS_LABEL]: 'true' };
const refused = (r: ValidationResult): string => (r.allowed ? assert.fail('admitted') : r.message);

test('a RedisBackup naming a Secret the user may not get is refused, naming the field, the Secret, the user and why; nothing else is asked', async () => {
  const { d, asked } = deps([], { 'victim-db': LABELLED });
  const result = await validateCredentials(d)(request(backup(s3('victim-db'))));
  assert.equal(result.allowed, false);
  assert.equal((result as { code?: number }).code, 403);
  assert.equal(refused(result), 'spec.destination.s3.credentialsSecret "victim-db": mallory may not get the Secret victim-db in namespace shop (RBAC: no rule), and a pod of the operator would mount it with the operator\'s identity: name a Secret you may read');
  // The review is the requesting user's, in full (groups too), for exactly that Secret.
  assert.deepEqual(asked, [{ user: { username: 'mallory', groups: ['team'] }, namespace: 'shop', name: 'victim-db' }]);
});

test('a Secret the user may get is admitted only when labelled for Redis backups, and must exist', async () => {
  const { d } = deps(['team-s3', 'plain', 'gone'], { 'team-s3': LABELLED, plain: {} });
  assert.deepEqual(await validateCredentials(d)(request(backup(s3('team-s3')))), { allowed: true });
  assert.match(refused(await validateCredentials(d)(request(backup(s3('plain'))))), /^spec\.destination\.s3\.credentialsSecret "plain": the credentials Secret plain is not labelled redis\.quorum\.dev\/backup-credentials=true.*\(CredentialsNotLabelled\)$/);
  assert.match(refused(await validateCredentials(d)(request(backup(s3('gone'))))), /the credentials Secret gone does not exist.*\(CredentialsSecretNotFound\)$/);
});

test('a Redis bootstrapped from a backup is checked against the credentials that backup names; one not made yet, or none, is admitted', async () => {
  const { d, asked } = deps(['team-s3'], { 'team-s3': LABELLED, 'victim-db': LABELLED }, { theirs: s3('victim-db'), ours: s3('team-s3'), local: { pvc: { claimName: 'backups' } } });
  assert.match(refused(await validateCredentials(d)(request(redis('theirs')))), /^spec\.bootstrap\.fromBackup\.backupName "theirs" \(whose spec\.destination\.s3\.credentialsSecret "victim-db"\): mallory may not get the Secret victim-db/);
  assert.deepEqual(await validateCredentials(d)(request(redis('ours'))), { allowed: true });
  asked.length = 0;
  for (const name of ['local', 'not-yet', undefined]) assert.deepEqual(await validateCredentials(d)(request(redis(name))), { allowed: true }, String(name));
  assert.deepEqual(asked, [], 'a PVC destination, a missing backup and no bootstrap name no Secret');
});

test('a check the API server does not answer refuses the object; updates and deletes are not checked (the backup is fixed at creation)', async () => {
  const failing: CredentialsWebhookDeps = { ...deps([], {}).d, access: async () => Promise.reject(new Error('connection refused')) };
  const result = await validateCredentials(failing)(request(backup(s3('x'))));
  assert.equal((result as { code?: number }).code, 500);
  assert.match(refused(result), /could not check whether mallory may use the Secret x .*connection refused/);
  const labelFails: CredentialsWebhookDeps = { ...deps(['x'], {}).d, labelRefusal: async (): Promise<CredentialsRefusal> => Promise.reject(new Error('timeout')) };
  assert.match(refused(await validateCredentials(labelFails)(request(backup(s3('x'))))), /timeout/);
  for (const op of ['UPDATE', 'DELETE'] as const) assert.deepEqual(await validateCredentials(failing)(request(backup(s3('x')), op)), { allowed: true });
});

test('the manifests install the webhook: creates of the three kinds, failing open, only the watched namespace, its RBAC by name', () => {
  const find = (objects: KubeObject[], kind: string, name: string): Record<string, unknown> => {
    const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
    assert.ok(found, `${kind} ${name}`);
    return found as unknown as Record<string, unknown>;
  };
  const scoped = operatorManifests({ namespaces: ['shop'] });
  const config = find(scoped, 'ValidatingWebhookConfiguration', VALIDATING_WEBHOOK) as { webhooks: { rules: { operations: string[]; resources: string[] }[]; failurePolicy: string; namespaceSelector?: unknown; clientConfig: { service: { name: string; namespace: string } } }[] };
  assert.deepEqual(config.webhooks.map((w) => w.rules[0]!.resources[0]).sort(), ['redisbackups', 'redisbackupschedules', 'redises']);
  for (const w of config.webhooks) {
    assert.deepEqual(w.rules[0]!.operations, ['CREATE']);
    assert.equal(w.failurePolicy, 'Ignore');
    assert.deepEqual(w.namespaceSelector, { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['shop'] }] });
    assert.deepEqual([w.clientConfig.service.name, w.clientConfig.service.namespace], ['quorum-redis-webhook', 'quorum-system']);
  }
  assert.equal(scoped.at(-1)?.kind, 'ValidatingWebhookConfiguration', 'applied last, once the operator can answer');
  find(scoped, 'Service', 'quorum-redis-webhook');
  assert.deepEqual(find(scoped, 'ClusterRole', WEBHOOK_CLUSTER_ROLE)['rules'], [{ apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], resourceNames: [VALIDATING_WEBHOOK], verbs: ['get', 'patch'] }]);
  const certRole = find(scoped, 'Role', WEBHOOK_CERT_ROLE) as { metadata: { namespace: string }; rules: { resourceNames?: string[]; verbs: string[] }[] };
  assert.equal(certRole.metadata.namespace, 'quorum-system');
  assert.deepEqual(certRole.rules.find((r) => r.resourceNames)?.resourceNames, [WEBHOOK_CERT_SECRET]);
  // The SubjectAccessReviews are the metrics-auth ClusterRole's, which every install has.
  assert.ok(JSON.stringify(find(scoped, 'ClusterRole', 'quorum-redis-operator-metrics-auth')).includes('subjectaccessreviews'));
  // Cluster-wide (only when asked for): every namespace. Without webhooks: none of it, and the operator serves none.
  assert.equal((find(operatorManifests({ clusterWide: true }), 'ValidatingWebhookConfiguration', VALIDATING_WEBHOOK) as { webhooks: { namespaceSelector?: unknown }[] }).webhooks[0]!.namespaceSelector, undefined);
  const none = operatorManifests({ webhooks: false });
  assert.ok(!none.some((o) => o.kind === 'ValidatingWebhookConfiguration' || o.metadata.name === WEBHOOK_CLUSTER_ROLE || o.metadata.name === WEBHOOK_CERT_ROLE));
  assert.match(JSON.stringify(none.find((o) => o.kind === 'Deployment')), /"name":"WEBHOOKS","value":"false"/);
  assert.equal(configFromEnv({ WEBHOOKS: 'false' }).webhooks, false);
  assert.deepEqual([configFromEnv({}).webhooks, configFromEnv({}).webhookPort], [true, 9443]);
});
