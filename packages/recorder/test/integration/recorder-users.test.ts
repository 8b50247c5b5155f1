// Who made a change, as the API server says it: the recorder installed as `quorum history install` installs it
// for a ChangeRecorder with spec.attribution.users (its image, its ValidatingWebhookConfiguration, its serving
// certificate and the CA it publishes), a ConfigMap edited and then deleted by a user the test impersonates
// (Impersonate-User: the API server authenticates the admin and then acts as, and admits as, that user), and
// the records, read through `quorum history` as another user, name that user beside the field manager.
//
// The webhook answers only the API server (issue 23, finding 1): it is installed with localkube's webhook client
// CA and with its NetworkPolicy (the webhook's port from every address but the pods'), which localkube's policy
// agent enforces: a pod cannot even connect to the webhook's port, while its history port answers the same pod
// and the API server's reviews still arrive (localkube's API server calls from the host, which the agent admits).
//
// The recorder runs in a namespace of its own that the suite deletes; uninstallRecorder removes the cluster-wide
// objects, the ValidatingWebhookConfiguration among them, so no webhook outlives the file.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive recorder
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client, ConfigMaps, NetworkPolicies, Pods, RoleBindings, Roles, ServiceAccounts, connect } from '@quorum/runtime';
import { APISERVER_WEBHOOK_CLIENT_NAME, topology } from '@quorum/localkube';
import { eventually, TestEnv } from '@quorum/localkube/testing';
import { API_VERSION, KIND, type ChangeRecorder } from '../../src/api/changerecorder.ts';
import { historyCommand } from '../../src/cli/history.ts';
import { buildRecorderImage } from '../../src/deploy/image.ts';
import { installRecorder, uninstallRecorder } from '../../src/deploy/install.ts';
import type { RecordsResponse, RecordSummary } from '../../src/history/protocol.ts';
import { ChangeRecorders } from '../../src/resources.ts';
import { USERS_WEBHOOK_PATH, WEBHOOK_PORT } from '../../src/attribution/webhook.ts';
import { NAME } from '../../src/deploy/manifests.ts';
import { HISTORY_PORT, HISTORY_SERVICE } from '../../src/history/protocol.ts';

const USER = 'alice@example.com';
const EDITOR = 'users-e2e';

let env: TestEnv;
let recorderNs: string;
let appNs: string;
/** The API server as USER: the admin's credentials, impersonating. */
let alice: Client;
/** A ServiceAccount that may read the ConfigMaps' records (the history endpoint wants a bearer token). */
let readerKubeconfig: string;
let recorderImage: string;
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
  recorderImage = built.name;
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
  // As `npm start` does on localkube: only the API server's client certificate for webhooks is answered.
  const webhookClientCA = await env.kube.webhookClientCA();
  const result = await installRecorder(env.client, {
    namespace: recorderNs,
    image: built.name,
    recorders: [recorder],
    includeExisting: false,
    readyTimeoutMs: 180_000,
    log,
    webhookClientCA,
    webhookClientNames: [APISERVER_WEBHOOK_CLIENT_NAME],
    // localkube's Nodes carry no spec.podCIDRs (its CNI's host-local ranges are per node, not allocated by the
    // controller-manager), so the install is told the pod network, as --pod-cidr tells it on such clusters.
    podCIDRs: [topology.POD_NETWORK],
  });
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

/** Run in a pod: the forged review to the webhook's Service port, then a GET of the history port on the same Service. */
const FORGER = `
const https = require('node:https');
const call = (port, path, method, body) => new Promise((resolve) => {
  const req = https.request({ host: process.env.SERVICE, port, path, method, rejectUnauthorized: false, timeout: 10000, headers: { 'content-type': 'application/json' } }, (res) => {
    res.resume();
    res.on('end', () => resolve({ status: res.statusCode }));
  });
  req.on('timeout', () => req.destroy(new Error('timeout')));
  req.on('error', (e) => resolve({ error: (e.code || '') + ' ' + e.message }));
  req.end(body);
});
(async () => {
  const webhook = await call(443, process.env.WEBHOOK_PATH, 'POST', process.env.REVIEW);
  const history = await call(Number(process.env.HISTORY_PORT), '/', 'GET');
  console.log(JSON.stringify({ webhook, history }));
})();
`;

test("a pod cannot connect to the webhook's port (its NetworkPolicy) while its history port answers it; the user's real edit from that version is hers, not Ambiguous", async () => {
  // The positive signal first: the policy is in the API, refusing the pod network, and since it was applied the
  // API server's reviews have been arriving (before(): an edit attributed to the user).
  const policy = await env.client.get(NetworkPolicies, { namespace: recorderNs, name: NAME });
  const webhookRule = policy.spec?.ingress?.find((rule) => rule.ports?.some((p) => p.port === WEBHOOK_PORT));
  assert.deepEqual(webhookRule?.from, [{ ipBlock: { cidr: '0.0.0.0/0', except: [topology.POD_NETWORK] } }], JSON.stringify(policy.spec));
  assert.ok((await records('warm-up')).some((r) => r.changedBy?.user === USER), 'a real review recorded under the policy');
  const cm = await env.client.create(ConfigMaps, { metadata: { name: 'forged', namespace: appNs }, data: { v: '1' } });
  const review = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'forged-1',
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      namespace: appNs,
      name: 'forged',
      operation: 'UPDATE',
      userInfo: { username: 'mallory@example.com', groups: ['system:authenticated'] },
      object: cm,
      oldObject: cm,
    },
  };
  const service = `${HISTORY_SERVICE}.${recorderNs}.svc`;
  await env.client.create(Pods, {
    metadata: { name: 'forger', namespace: appNs },
    spec: {
      restartPolicy: 'Never',
      securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'forger',
          image: recorderImage,
          imagePullPolicy: 'IfNotPresent',
          command: ['/usr/local/bin/node', '-e', FORGER],
          env: [
            { name: 'SERVICE', value: service },
            { name: 'WEBHOOK_PATH', value: USERS_WEBHOOK_PATH },
            { name: 'HISTORY_PORT', value: String(HISTORY_PORT) },
            { name: 'REVIEW', value: JSON.stringify(review) },
          ],
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
        },
      ],
    },
  });
  await eventually('the forger pod done', async () => {
    const pod = await env.client.get(Pods, { namespace: appNs, name: 'forger' });
    return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed' ? pod : undefined;
  }, { timeoutMs: 90_000, intervalMs: 1000 });
  const output = (await env.kube.kubectl(['logs', '-n', appNs, 'forger'])).trim();
  log(`forger: ${output}`);
  const outcome = JSON.parse(output.split('\n').at(-1)!) as { webhook: { status?: number; error?: string }; history: { status?: number; error?: string } };
  assert.ok(outcome.history.status !== undefined, `the pod reaches the recorder's Service (its history port answers): ${output}`);
  assert.equal(outcome.webhook.status, undefined, `the forged review got an HTTP answer: ${output}`);
  // Refused before any TLS (the policy agent's REJECT), not in the handshake (the client CA, behind it).
  assert.match(outcome.webhook.error ?? '', /ECONNREFUSED|timeout|ETIMEDOUT/i, output);

  // The real edit from the same version: had the forgery been remembered, two users for one version would say Ambiguous.
  await alice.apply(ConfigMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'forged', namespace: appNs }, data: { v: '2' } }, { fieldManager: EDITOR, force: true });
  const [record] = await recordsUntil('forged', 1);
  assert.equal(record!.changedBy?.user, USER, JSON.stringify(record!.changedBy));
  assert.equal(record!.changedBy?.userUnknown, undefined);
});
