// Who made a change, as the API server says it: the recorder installed as `quorum history install` installs it
// for a ChangeRecorder with spec.attribution.users (its image, its ValidatingWebhookConfiguration, its serving
// certificate and the CA it publishes), a ConfigMap edited and then deleted by a user the test impersonates
// (Impersonate-User: the API server authenticates the admin and then acts as, and admits as, that user), and
// the records, read through `quorum history` as another user, name that user beside the field manager.
//
// The recorder runs in a namespace of its own that the suite deletes; uninstallRecorder removes the cluster-wide
// objects, the ValidatingWebhookConfiguration among them, so no webhook outlives the file.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive recorder
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client, ConfigMaps, RoleBindings, Roles, ServiceAccounts, connect } from '@quorum/runtime';
import { eventually, TestEnv } from '@quorum/localkube/testing';
import { API_VERSION, KIND, type ChangeRecorder } from '../../src/api/changerecorder.ts';
import { historyCommand } from '../../src/cli/history.ts';
import { buildRecorderImage } from '../../src/deploy/image.ts';
import { installRecorder, uninstallRecorder } from '../../src/deploy/install.ts';
import type { RecordsResponse, RecordSummary } from '../../src/history/protocol.ts';
import { ChangeRecorders } from '../../src/resources.ts';

const USER = 'alice@example.com';
const EDITOR = 'users-e2e';

let env: TestEnv;
let recorderNs: string;
let appNs: string;
/** The API server as USER: the admin's credentials, impersonating. */
let alice: Client;
/** A ServiceAccount that may read the ConfigMaps' records (the history endpoint wants a bearer token). */
let readerKubeconfig: string;
const recorderName = `users-e2e-${Date.now().toString(36)}`;

const log = (m: string): void => void process.stderr.write(`[recorder-users] ${m}\n`);

async function records(name: string): Promise<RecordSummary[]> {
  let out = '';
  const code = await historyCommand(['list', `cm/${name}`, '-n', appNs, '-o', 'json', '--kubeconfig', readerKubeconfig, '--recorder-namespace', recorderNs], {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: () => true },
    env: {},
  });
  // No records yet is an error naming the object: "not yet".
  if (code !== 0) return [];
  return (JSON.parse(out) as RecordsResponse).records;
}

async function recordsUntil(name: string, count: number): Promise<RecordSummary[]> {
  return eventually(`${count} record(s) of ConfigMap ${appNs}/${name}`, async () => {
    const got = await records(name);
    return got.length >= count ? got : undefined;
  }, { timeoutMs: 60_000, intervalMs: 500 });
}

before(async () => {
  env = await TestEnv.start();
  const built = await buildRecorderImage();
  await env.kube.loadImage(built.archive);
  recorderNs = await env.namespace('recorder-users');
  appNs = await env.namespace('attributed');

  // USER may edit and delete ConfigMaps in appNs, nothing else; the reader may read them (and so their records).
  await env.client.create(Roles, { metadata: { name: 'editor', namespace: appNs }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'update', 'patch', 'delete'] }] });
  await env.client.create(RoleBindings, { metadata: { name: 'editor', namespace: appNs }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'editor' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: USER }] });
  await env.client.create(ServiceAccounts, { metadata: { name: 'reader', namespace: appNs } });
  await env.client.create(Roles, { metadata: { name: 'reader', namespace: appNs }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] });
  await env.client.create(RoleBindings, { metadata: { name: 'reader', namespace: appNs }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' }, subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: appNs }] });
  readerKubeconfig = await env.kube.serviceAccountKubeconfig(appNs, 'reader');

  const admin = await connect({ kubeconfig: env.kubeconfig });
  alice = new Client({ ...admin, headers: async () => ({ ...(await admin.headers()), 'Impersonate-User': USER }) });

  const recorder: ChangeRecorder = {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: recorderName },
    spec: { namespaces: { names: [appNs] }, resources: [{ group: '', kind: 'ConfigMap' }], attribution: { users: true } },
  };
  // Only this file's ChangeRecorder decides the role and the webhook's kinds.
  const result = await installRecorder(env.client, { namespace: recorderNs, image: built.name, recorders: [recorder], includeExisting: false, readyTimeoutMs: 180_000, log });
  assert.equal(result.usersWebhook, true);
  assert.deepEqual(result.ready.map((r) => [r.status, r.reason]), [['True', 'Recording']], JSON.stringify(result.ready));
  const attributed = await eventually('UsersAttributed True', async () => {
    const got = await env.client.get(ChangeRecorders, recorderName);
    return got.status?.conditions?.find((c) => c.type === 'UsersAttributed' && c.status === 'True');
  }, { timeoutMs: 60_000, intervalMs: 500 });
  assert.equal(attributed.reason, 'AdmissionWebhook');

  // The API server reaches the webhook through its Service once kube-proxy has programmed it; until then the
  // calls fail and are ignored (failurePolicy Ignore), and those edits are recorded as NotSeen. Edit a warm-up
  // ConfigMap until an edit is attributed: from then on the webhook is reached.
  await env.client.create(ConfigMaps, { metadata: { name: 'warm-up', namespace: appNs }, data: { n: '0' } });
  let n = 0;
  await eventually('an edit attributed to the user (the webhook reached)', async () => {
    await alice.apply(ConfigMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'warm-up', namespace: appNs }, data: { n: String(++n) } }, { fieldManager: EDITOR, force: true });
    return (await records('warm-up')).some((r) => r.changedBy?.user === USER);
  }, { timeoutMs: 120_000, intervalMs: 1000 });
});

after(async () => {
  await uninstallRecorder(env.client, { namespace: recorderNs }).catch((err: Error) => log(`uninstall: ${err.message}`));
  await env.client.delete(ChangeRecorders, recorderName).catch(() => undefined);
  alice?.close();
  await env.stop();
});

test('a ConfigMap edited and then deleted by an impersonated user: both records name the user, beside the field manager', async () => {
  await env.client.create(ConfigMaps, { metadata: { name: 'app', namespace: appNs }, data: { color: 'red' } });
  await alice.apply(ConfigMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: appNs }, data: { color: 'blue' } }, { fieldManager: EDITOR, force: true });
  const [edited] = await recordsUntil('app', 1);
  assert.equal(edited!.reason, 'Updated');
  assert.equal(edited!.changedBy?.manager, EDITOR, 'the field manager, from managedFields, as before');
  assert.equal(edited!.changedBy?.user, USER, 'the user, from admission');
  assert.ok(edited!.changedBy?.groups?.includes('system:authenticated'), JSON.stringify(edited!.changedBy));
  assert.equal(edited!.changedBy?.userUnknown, undefined);

  // The admin's own edit is the admin's, not the user's: each version is looked up on its own.
  await env.client.apply(ConfigMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: appNs }, data: { color: 'green' } }, { fieldManager: 'admin-edit', force: true });
  const [, byAdmin] = await recordsUntil('app', 2);
  assert.equal(byAdmin!.changedBy?.manager, 'admin-edit');
  assert.notEqual(byAdmin!.changedBy?.user, USER);
  assert.ok(byAdmin!.changedBy?.user, 'the admin is named too');

  await alice.delete(ConfigMaps, { namespace: appNs, name: 'app' });
  const all = await recordsUntil('app', 3);
  const deleted = all.at(-1)!;
  assert.equal(deleted.reason, 'Deleted');
  assert.equal(deleted.changedBy?.manager, undefined, 'a deletion leaves no managedFields entry');
  assert.equal(deleted.changedBy?.user, USER, 'but the API server said who sent the DELETE');
});

test('a dry run by the user leaves nothing to attribute: the next real edit by someone else is theirs, not ambiguous', async () => {
  await env.client.create(ConfigMaps, { metadata: { name: 'dry', namespace: appNs }, data: { v: '1' } });
  await alice.apply(ConfigMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry', namespace: appNs }, data: { v: 'dry' } }, { fieldManager: EDITOR, force: true, dryRun: true });
  await env.client.apply(ConfigMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry', namespace: appNs }, data: { v: '2' } }, { fieldManager: 'admin-edit', force: true });
  const [record] = await recordsUntil('dry', 1);
  assert.equal(record!.changedBy?.userUnknown, undefined, JSON.stringify(record!.changedBy));
  assert.notEqual(record!.changedBy?.user, USER);
  assert.ok(record!.changedBy?.user);
});
