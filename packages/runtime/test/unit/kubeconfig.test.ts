// The kubeconfig loader without a cluster: kubectl's merge and path rules, every credential kind's parsing,
// clear refusals, token files read again as they rotate, an exec plugin run again before what it gave expires,
// and the in-cluster configuration. What the API server makes of each credential: integration/credentials.test.ts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { connect, loadKubeConfig } from '../../src/client/config.ts';
import { parseExecCredential } from '../../src/client/credentials.ts';
import { defaultKubeconfigFiles, readKubeconfig } from '../../src/client/kubeconfig.ts';

let dir: string;
const CA = '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n';
const b64 = (s: string): string => Buffer.from(s).toString('base64');

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubeconfig-test-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function kubeconfig(name: string, doc: object): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(doc));
  return path;
}

test('two files merge as kubectl merges them: the first to define a name wins, current-context from the first that sets it', async () => {
  await writeFile(join(dir, 'ca.crt'), CA);
  const first = await kubeconfig('first.yaml', {
    clusters: [{ name: 'c', cluster: { server: 'https://first:6443/', 'certificate-authority': 'ca.crt' } }],
    users: [{ name: 'u', user: { token: 'first-token' } }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', namespace: 'team-a' } }],
  });
  const second = await kubeconfig('second.yaml', {
    'current-context': 'ctx',
    clusters: [{ name: 'c', cluster: { server: 'https://second:6443' } }],
    users: [{ name: 'u', user: { token: 'second-token' } }],
    contexts: [{ name: 'other', context: { cluster: 'c' } }],
  });
  const resolved = readKubeconfig([first, second]);
  assert.equal(resolved.context, 'ctx');
  assert.equal(resolved.namespace, 'team-a');
  assert.equal(resolved.cluster.server, 'https://first:6443', 'the first file wins, the trailing slash dropped');
  assert.equal(resolved.cluster.ca, CA, 'a relative certificate-authority is read beside the kubeconfig');
  assert.equal(resolved.user.token, 'first-token');
  assert.equal(readKubeconfig([first, second], 'other').user.token, undefined, 'a context without a user has no credentials');
  assert.deepEqual(defaultKubeconfigFiles({ KUBECONFIG: `${first}:${join(dir, 'missing')}:${second}` }), [first, second], 'files $KUBECONFIG names that do not exist are skipped');
});

test('JSON is read without loading yaml; block and flow YAML (a mapping that starts like JSON but is not) read the same', async () => {
  const doc = { 'current-context': 'x', clusters: [{ name: 'c', cluster: { server: 'https://h:6443', 'certificate-authority-data': b64(CA) } }], users: [{ name: 'u', user: { token: 't' } }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace: 'ns' } }] };
  const json = await kubeconfig('form.json', doc);
  const block = join(dir, 'block.yaml');
  await writeFile(block, `current-context: x\nclusters:\n- name: c\n  cluster:\n    server: https://h:6443\n    certificate-authority-data: ${b64(CA)}\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context: {cluster: c, user: u, namespace: ns}\n`);
  const flow = join(dir, 'flow.yaml');
  await writeFile(flow, `{current-context: x, clusters: [{name: c, cluster: {server: "https://h:6443", certificate-authority-data: ${b64(CA)}}}], users: [{name: u, user: {token: t}}], contexts: [{name: x, context: {cluster: c, user: u, namespace: ns}}]}\n`);
  const expected = readKubeconfig([json]);
  assert.equal(expected.cluster.ca, CA);
  for (const file of [block, flow]) assert.deepEqual({ ...readKubeconfig([file]), files: [] }, { ...expected, files: [] });
  const yamlLoaded = (file: string): boolean => {
    const script = `
      const { readKubeconfig } = await import(${JSON.stringify(new URL('../../src/client/kubeconfig.ts', import.meta.url).href)});
      const { createRequire } = await import('node:module');
      readKubeconfig([${JSON.stringify(file)}]);
      console.log(Object.keys(createRequire(import.meta.url).cache).some((p) => /[\\/]node_modules[\\/]yaml[\\/]/.test(p)));`;
    return JSON.parse(execFileSync(process.execPath, ['--conditions=@quorum/source', '--input-type=module', '-e', script], { encoding: 'utf8' }).trim()) as boolean;
  };
  assert.equal(yamlLoaded(json), false, 'a JSON kubeconfig loads no yaml');
  assert.equal(yamlLoaded(block), true, 'a YAML kubeconfig is read by yaml');
});

test('client certificates as data or files, tokenFile and impersonation are read; the names of what is missing are given', async () => {
  await writeFile(join(dir, 'client.key'), 'KEY');
  const path = await kubeconfig('certs.yaml', {
    'current-context': 'ctx',
    clusters: [{ name: 'c', cluster: { server: 'https://h:6443', 'certificate-authority-data': b64(CA), 'tls-server-name': 'api.internal', 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user: { 'client-certificate-data': b64('CERT'), 'client-key': 'client.key', tokenFile: 'token', as: 'alice', 'as-uid': '42' } }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }, { name: 'broken', context: { cluster: 'nowhere', user: 'u' } }],
  });
  const { cluster, user } = readKubeconfig([path]);
  assert.deepEqual(cluster, { server: 'https://h:6443', ca: CA, insecureSkipTLSVerify: true, tlsServerName: 'api.internal' });
  assert.deepEqual(user, { cert: 'CERT', key: 'KEY', tokenFile: join(dir, 'token'), impersonate: { user: 'alice', uid: '42' } });
  assert.throws(() => readKubeconfig([path], 'missing'), /context "missing" is not in the kubeconfig/);
  assert.throws(() => readKubeconfig([path], 'broken'), /names cluster "nowhere", which is not defined/);
});

test('what Kubernetes no longer accepts is refused by name: auth-provider, basic authentication, an exec plugin of another API', async () => {
  const user = async (name: string, u: object): Promise<string> => kubeconfig(name, { 'current-context': 'x', clusters: [{ name: 'c', cluster: { server: 'https://h' } }], users: [{ name: 'u', user: u }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }] });
  assert.throws(() => readKubeconfig([]), /no current-context/);
  await assert.rejects(async () => readKubeconfig([await user('ap.yaml', { 'auth-provider': { name: 'oidc' } })]), /auth-provider, which Kubernetes removed in 1\.26/);
  await assert.rejects(async () => readKubeconfig([await user('basic.yaml', { username: 'a', password: 'b' })]), /basic authentication since Kubernetes 1\.19/);
  await assert.rejects(async () => readKubeconfig([await user('exec.yaml', { exec: { command: 'x', apiVersion: 'v1' } })]), /exec apiVersion must be client\.authentication\.k8s\.io/);
});

test('an ExecCredential is read for its token, client certificate and expiry; anything else is a clear error', () => {
  const exec = { command: 'plugin', apiVersion: 'client.authentication.k8s.io/v1' };
  const doc = (status: object, apiVersion = exec.apiVersion): string => JSON.stringify({ apiVersion, kind: 'ExecCredential', status });
  assert.deepEqual(parseExecCredential(doc({ token: 't', expirationTimestamp: '2030-01-01T00:00:00Z' }), exec), { token: 't', expiresAt: Date.parse('2030-01-01T00:00:00Z') });
  assert.deepEqual(parseExecCredential(doc({ clientCertificateData: 'C', clientKeyData: 'K' }), exec), { clientCertificateData: 'C', clientKeyData: 'K' });
  assert.throws(() => parseExecCredential('not json', exec), /printed no JSON ExecCredential/);
  assert.throws(() => parseExecCredential(doc({ token: 't' }, 'client.authentication.k8s.io/v1beta1'), exec), /asks for client\.authentication\.k8s\.io\/v1 ExecCredential/);
  assert.throws(() => parseExecCredential(doc({}), exec), /neither a token nor a client certificate/);
  assert.throws(() => parseExecCredential(doc({ token: 't', expirationTimestamp: 'soon' }), exec), /"soon" is not a time/);
});

test('a token file is read again after its refresh interval; an exec plugin runs again only when its token is about to expire', async () => {
  await writeFile(join(dir, 'token'), 'one\n');
  const tokenConfig = await kubeconfig('tokenfile.yaml', { 'current-context': 'x', clusters: [{ name: 'c', cluster: { server: 'https://h' } }], users: [{ name: 'u', user: { tokenFile: 'token' } }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }] });
  const conn = await connect({ kubeconfig: tokenConfig, tokenFileRefreshMs: 50 });
  assert.equal((await conn.headers()).Authorization, 'Bearer one');
  await writeFile(join(dir, 'token'), 'two\n');
  await new Promise((r) => setTimeout(r, 60));
  assert.equal((await conn.headers()).Authorization, 'Bearer two', 'the rotated token is used');

  // The plugin counts its runs; its first token expires within the 10 s margin, so the next request runs it again.
  const plugin = join(dir, 'plugin.mjs');
  await writeFile(plugin, `#!/usr/bin/env node
import { readFileSync, writeFileSync } from 'node:fs';
const runs = Number(readFileSync(process.env.RUNS_FILE, 'utf8')) + 1;
writeFileSync(process.env.RUNS_FILE, String(runs));
const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO);
const expires = new Date(Date.now() + (runs === 1 ? 5_000 : 3_600_000)).toISOString();
console.log(JSON.stringify({ apiVersion: info.apiVersion, kind: 'ExecCredential', status: { token: 'run-' + runs + '-' + info.spec.cluster.server, expirationTimestamp: expires } }));
`);
  await chmod(plugin, 0o755);
  const runsFile = join(dir, 'runs');
  await writeFile(runsFile, '0');
  const execConfig = await kubeconfig('exec.yaml', {
    'current-context': 'x',
    clusters: [{ name: 'c', cluster: { server: 'https://h:1' } }],
    users: [{ name: 'u', user: { exec: { command: './plugin.mjs', apiVersion: 'client.authentication.k8s.io/v1', provideClusterInfo: true, env: [{ name: 'RUNS_FILE', value: runsFile }] } } }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
  });
  const viaPlugin = await connect({ kubeconfig: execConfig });
  assert.equal((await viaPlugin.headers()).Authorization, 'Bearer run-2-https://h:1', 'the first token expires within the margin: run again');
  assert.equal((await viaPlugin.headers()).Authorization, 'Bearer run-2-https://h:1', 'a valid token is kept');
  assert.equal(await readFile(runsFile, 'utf8'), '2');
});

test('in-cluster: the Service address from the environment, the mounted CA, token and namespace', async () => {
  const sa = join(dir, 'serviceaccount');
  await rm(sa, { recursive: true, force: true });
  await mkdir(sa);
  await writeFile(join(sa, 'ca.crt'), CA);
  await writeFile(join(sa, 'token'), 'sa-token');
  await writeFile(join(sa, 'namespace'), 'operators');
  const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
  try {
    process.env.KUBERNETES_SERVICE_HOST = 'fd00::1';
    process.env.KUBERNETES_SERVICE_PORT = '443';
    const config = loadKubeConfig({ inCluster: true, serviceAccountDir: sa });
    assert.equal(config.cluster.server, 'https://[fd00::1]:443');
    assert.equal(config.namespace, 'operators');
    const conn = await connect({ inCluster: true, serviceAccountDir: sa });
    assert.equal(conn.tls.ca, CA);
    assert.equal((await conn.headers()).Authorization, 'Bearer sa-token');
    delete process.env.KUBERNETES_SERVICE_HOST;
    assert.throws(() => loadKubeConfig({ inCluster: true, serviceAccountDir: sa }), /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set/);
  } finally {
    for (const [k, v] of [['KUBERNETES_SERVICE_HOST', saved.host], ['KUBERNETES_SERVICE_PORT', saved.port]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
});
