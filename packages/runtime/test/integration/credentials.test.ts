// Each kind of credential the kubeconfig loader knows, against the suite's real API server, which says who it
// took us for (SelfSubjectReview): the admin's client certificate, a ServiceAccount's token inline, in a
// token file, from an exec plugin and from an in-cluster mount; impersonation on top.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { LocalKube } from '@quorum/localkube';
import { Client } from '../../src/client/client.ts';
import { loadKubeConfig, type ConnectionOptions } from '../../src/client/config.ts';
import { Namespaces } from '../../src/client/resources.ts';

let kube: LocalKube;
let admin: Client;
let dir: string;
let token: string;
const namespace = `credentials-${Date.now().toString(36)}`;
const ACCOUNT = 'reader';
const SA_USER = `system:serviceaccount:${namespace}:${ACCOUNT}`;

before(async () => {
  const stateDir = process.env['LOCALKUBE_STATE_DIR'];
  if (!stateDir) throw new Error('LOCALKUBE_STATE_DIR is not set: run integration tests through `npm test`');
  kube = await LocalKube.attach(stateDir);
  admin = await Client.connect({ kubeconfig: kube.kubeconfig });
  await admin.create(Namespaces, { metadata: { name: namespace } });
  await admin.request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: ACCOUNT } });
  const request = await admin.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${ACCOUNT}/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } });
  token = request.status.token;
  dir = await mkdtemp(join(tmpdir(), 'credentials-it-'));
});
after(async () => {
  await admin?.delete(Namespaces, namespace).catch(() => undefined);
  admin?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Who the API server took this connection for. */
async function whoami(options: ConnectionOptions): Promise<string> {
  const client = await Client.connect(options);
  try {
    const review = await client.request<{ status: { userInfo: { username: string } } }>('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
    return review.status.userInfo.username;
  } finally {
    client.close();
  }
}

/** A kubeconfig for the suite's API server (its CA and address from the admin's) with the given user entry. */
async function kubeconfigWith(name: string, user: object): Promise<string> {
  const { cluster } = loadKubeConfig({ kubeconfig: kube.kubeconfig });
  const path = join(dir, `${name}.kubeconfig`);
  await writeFile(path, JSON.stringify({
    'current-context': name,
    clusters: [{ name: 'localkube', cluster: { server: cluster.server, 'certificate-authority-data': Buffer.from(cluster.ca ?? '').toString('base64') } }],
    users: [{ name, user }],
    contexts: [{ name, context: { cluster: 'localkube', user: name } }],
  }));
  return path;
}

test('a client certificate (the admin kubeconfig) and impersonation on top of it', async () => {
  const self = await whoami({ kubeconfig: kube.kubeconfig });
  assert.ok(self.length > 0 && self !== SA_USER, `the admin: ${self}`);
  const { user } = loadKubeConfig({ kubeconfig: kube.kubeconfig });
  const impersonating = await kubeconfigWith('impersonating', { 'client-certificate-data': Buffer.from(user.cert ?? '').toString('base64'), 'client-key-data': Buffer.from(user.key ?? '').toString('base64'), as: SA_USER });
  assert.equal(await whoami({ kubeconfig: impersonating }), SA_USER);
});

test('a ServiceAccount token inline, in a token file, and from an exec credential plugin', async () => {
  assert.equal(await whoami({ kubeconfig: await kubeconfigWith('inline', { token }) }), SA_USER);
  await writeFile(join(dir, 'token'), `${token}\n`);
  assert.equal(await whoami({ kubeconfig: await kubeconfigWith('tokenfile', { tokenFile: join(dir, 'token') }) }), SA_USER);
  const plugin = join(dir, 'plugin.mjs');
  await writeFile(plugin, `#!/usr/bin/env node\nconsole.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: process.env.TOKEN } }));\n`);
  await chmod(plugin, 0o755);
  const viaExec = await kubeconfigWith('exec', { exec: { command: plugin, apiVersion: 'client.authentication.k8s.io/v1', env: [{ name: 'TOKEN', value: token }] } });
  assert.equal(await whoami({ kubeconfig: viaExec }), SA_USER);
});

test('in-cluster: the API server address from KUBERNETES_SERVICE_HOST/PORT, the mounted CA and token', async () => {
  const { cluster } = loadKubeConfig({ kubeconfig: kube.kubeconfig });
  const mount = join(dir, 'serviceaccount');
  await mkdir(mount, { recursive: true });
  await writeFile(join(mount, 'ca.crt'), cluster.ca ?? '');
  await writeFile(join(mount, 'token'), token);
  await writeFile(join(mount, 'namespace'), namespace);
  const url = new URL(cluster.server);
  const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
  process.env.KUBERNETES_SERVICE_HOST = url.hostname;
  process.env.KUBERNETES_SERVICE_PORT = url.port || '443';
  try {
    assert.equal(await whoami({ inCluster: true, serviceAccountDir: mount }), SA_USER);
  } finally {
    for (const [k, v] of [['KUBERNETES_SERVICE_HOST', saved.host], ['KUBERNETES_SERVICE_PORT', saved.port]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
});
