// The client's request against a local HTTPS server: extra headers per request (for a service proxy path
// whose backend reads its own header), which headers stay the client's own, and the error's body as the
// backend sent it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Client, requestHeaders } from '../../src/client/client.ts';
import { ApiError, NotFoundError } from '../../src/client/errors.ts';
import { generateCertificates } from '../../src/webhook/certs.ts';

async function serve(t: { after: (fn: () => Promise<void>) => void }, answer: (path: string) => { code: number; type: string; body: string }): Promise<{ client: Client; seen: IncomingHttpHeaders[] }> {
  const certs = await generateCertificates({ ipAddresses: ['127.0.0.1'] });
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer({ cert: certs.cert, key: certs.key }, (req, res) => {
    seen.push(req.headers);
    const { code, type, body } = answer(req.url ?? '/');
    res.writeHead(code, { 'content-type': type }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const client = new Client({ server: `https://127.0.0.1:${port}`, tls: { ca: certs.caCert }, headers: () => Promise.resolve({ Authorization: 'Bearer connection-token' }) });
  t.after(async () => {
    client.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { client, seen };
}

test("extra headers go with the request, beside the connection's own", async (t) => {
  const { client, seen } = await serve(t, () => ({ code: 200, type: 'application/json', body: '{"ok":true}' }));
  const got = await client.request<{ ok: boolean }>('GET', '/api/v1/namespaces/ns/services/https:svc:web/proxy/v1/kinds?x=1', undefined, { headers: { 'X-Backend-Authorization': 'Bearer caller-token' } });
  assert.deepEqual(got, { ok: true });
  assert.equal(seen[0]?.['x-backend-authorization'], 'Bearer caller-token');
  assert.equal(seen[0]?.authorization, 'Bearer connection-token');
  assert.equal(seen[0]?.accept, 'application/json');
  await client.request('GET', '/apis', undefined, { headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } });
  assert.equal(seen[1]?.accept, 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList', 'accept may be chosen');
});

test("the connection's and the body's headers cannot be set per request", () => {
  for (const name of ['Authorization', 'authorization', 'Impersonate-User', 'impersonate-group', 'Content-Type', 'content-length', 'Host']) {
    assert.throws(() => requestHeaders({ [name]: 'x' }, {}), TypeError, name);
  }
  assert.deepEqual(requestHeaders({ 'X-Extra': 'a' }, { Authorization: 'Bearer t', 'Impersonate-User': 'u' }), {
    accept: 'application/json',
    'x-extra': 'a',
    authorization: 'Bearer t',
    'impersonate-user': 'u',
  });
});

test("an error keeps the body as it came: a backend's JSON through a proxy, or a proxy's text", async (t) => {
  const { client } = await serve(t, (path) =>
    path.includes('json')
      ? { code: 404, type: 'application/json', body: '{"error":"ConfigMap default/app has no record 20260101"}' }
      : { code: 502, type: 'text/html', body: '<html>bad gateway</html>' },
  );
  const json = await client.request('GET', '/proxy/json').then(() => undefined, (err: unknown) => err);
  assert.ok(json instanceof NotFoundError);
  assert.equal(json.code, 404);
  assert.deepEqual(json.body, { error: 'ConfigMap default/app has no record 20260101' });
  const text = await client.request('GET', '/proxy/text').then(() => undefined, (err: unknown) => err);
  assert.ok(text instanceof ApiError);
  assert.equal(text.code, 502);
  assert.equal(text.body, '<html>bad gateway</html>');
  assert.equal(text.status.message, '<html>bad gateway</html>');
});

test('writes ask for strict field validation unless told otherwise', async (t) => {
  const paths: string[] = [];
  const { client } = await serve(t, (path) => {
    paths.push(path);
    return { code: 200, type: 'application/json', body: '{"metadata":{"name":"cm","namespace":"ns"}}' };
  });
  const ConfigMaps = { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
  await client.apply(ConfigMaps, { metadata: { name: 'cm', namespace: 'ns' } }, { fieldManager: 'm', force: true, fieldValidation: 'Strict' });
  await client.create(ConfigMaps, { metadata: { name: 'cm', namespace: 'ns' } }, { fieldValidation: 'Strict', dryRun: true });
  await client.create(ConfigMaps, { metadata: { name: 'cm', namespace: 'ns' } });
  await client.create(ConfigMaps, { metadata: { name: 'cm', namespace: 'ns' } }, { fieldValidation: 'Warn' });
  assert.equal(paths[0], '/api/v1/namespaces/ns/configmaps/cm?fieldManager=m&fieldValidation=Strict&force=true');
  assert.equal(paths[1], '/api/v1/namespaces/ns/configmaps?dryRun=All&fieldValidation=Strict');
  assert.equal(paths[2], '/api/v1/namespaces/ns/configmaps?fieldValidation=Strict');
  assert.equal(paths[3], '/api/v1/namespaces/ns/configmaps?fieldValidation=Warn');
});
