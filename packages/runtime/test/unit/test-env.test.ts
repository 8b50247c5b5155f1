// @quorum/runtime/testing's TestEnv against a local HTTPS server standing in for an API server, reached
// through a kubeconfig file as a user's would be: the namespaces it makes and deletes, and the ServiceAccount
// client, whose token comes from the TokenRequest API and goes with its requests instead of the kubeconfig's.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { TestEnv } from '../../src/testing/index.ts';
import { generateCertificates } from '../../src/webhook/certs.ts';

interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** The API server's part: echoes created objects, hands out a token, answers anything else with an empty object. */
async function apiServer(t: { after: (fn: () => Promise<void>) => void }): Promise<{ kubeconfig: string; seen: Seen[] }> {
  const certs = await generateCertificates({ ipAddresses: ['127.0.0.1'] });
  const seen: Seen[] = [];
  const server = createServer({ cert: certs.cert, key: certs.key }, (req, res) => {
    let text = '';
    req.setEncoding('utf8').on('data', (d: string) => (text += d));
    req.on('end', () => {
      const body: unknown = text ? JSON.parse(text) : undefined;
      seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      const answer = req.url?.endsWith('/token') ? { status: { token: 'service-account-token' } } : (body ?? {});
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const dir = await mkdtemp(join(tmpdir(), 'test-env-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const ca = Buffer.from(certs.caCert).toString('base64');
  await writeFile(
    kubeconfig,
    `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: 'https://127.0.0.1:${port}', certificate-authority-data: ${ca} } }]
users: [{ name: u, user: { token: admin-token } }]
contexts: [{ name: ctx, context: { cluster: c, user: u } }]
current-context: ctx
`,
  );
  t.after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });
  return { kubeconfig, seen };
}

test('TestEnv.connect reaches the cluster a kubeconfig names, makes namespaces and deletes them at stop()', async (t) => {
  const { kubeconfig, seen } = await apiServer(t);
  const env = await TestEnv.connect({ kubeconfig });
  assert.equal(env.kubeconfig, kubeconfig);
  const ns = await env.namespace('demo', { labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } });
  assert.match(ns, /^demo-[0-9a-z]+-[0-9a-z]+$/);
  assert.deepEqual(seen[0]?.body, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } });
  assert.equal(seen[0]?.headers.authorization, 'Bearer admin-token');
  await env.stop();
  assert.deepEqual(
    seen.slice(1).map((s) => `${s.method} ${s.path.split('?')[0]}`),
    [`DELETE /api/v1/namespaces/${ns}`],
  );
});

test('without a kubeconfig option, TestEnv.connect takes $KUBECONFIG', async (t) => {
  const { kubeconfig, seen } = await apiServer(t);
  const before = process.env['KUBECONFIG'];
  process.env['KUBECONFIG'] = kubeconfig;
  t.after(() => {
    if (before === undefined) delete process.env['KUBECONFIG'];
    else process.env['KUBECONFIG'] = before;
  });
  const env = await TestEnv.connect();
  assert.equal(env.kubeconfig, kubeconfig);
  await env.namespace();
  await env.stop();
  assert.equal(seen.length, 2);
});

test("clientFor acts as the ServiceAccount: a TokenRequest, then that token on the client's requests", async (t) => {
  const { kubeconfig, seen } = await apiServer(t);
  const env = await TestEnv.connect({ kubeconfig });
  const client = await env.clientFor('team-a', 'deployer', 600);
  await client.request('GET', '/api/v1/namespaces/team-a/configmaps');
  client.close();
  await env.stop();
  const [token, read] = seen;
  assert.equal(token?.path, '/api/v1/namespaces/team-a/serviceaccounts/deployer/token');
  assert.equal(token?.headers.authorization, 'Bearer admin-token');
  assert.deepEqual(token?.body, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } });
  assert.equal(read?.headers.authorization, 'Bearer service-account-token');
});
