// The users webhook's client CA (`--webhook-client-ca`, the ConfigMap mounted as a directory) is followed on disk:
// a CA replaced there (the kubelet swaps a ConfigMap volume's files in place) takes effect without a pod restart
// (issue 23). The recorder's runnable against an in-memory API, with real TLS handshakes before and after.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createCertificateAuthority, createLogger, issueLeafCertificate, type Client, type IssuedCertificate, type KubeObject } from '@quorum/runtime';
import { AdmittedUsers } from '../../src/attribution/admitted-users.ts';
import { USERS_WEBHOOK_PATH, usersWebhookRunnable } from '../../src/attribution/webhook.ts';

/** Just what the runnable calls: its certificate Secret (made once, then read) and its webhook configuration. */
function memoryApi(): Client {
  let secret: KubeObject | undefined;
  const configuration = { metadata: { name: 'quorum-recorder-users', resourceVersion: '1' }, webhooks: [{ name: 'users', clientConfig: {} }] };
  return {
    find: () => Promise.resolve(structuredClone(secret)),
    create: (_type: unknown, obj: KubeObject) => Promise.resolve((secret = structuredClone(obj))),
    get: () => Promise.resolve(structuredClone(configuration)),
    jsonPatch: () => Promise.resolve(configuration),
  } as unknown as Client;
}

/** Whether the webhook answers a review sent with `cert` (a failed handshake is false). */
function answered(port: number, cert: IssuedCertificate): Promise<boolean> {
  return new Promise((resolve) => {
    // The server's identity is not what this test is about: the client's certificate is.
    const req = request({ host: '127.0.0.1', port, path: USERS_WEBHOOK_PATH, method: 'POST', rejectUnauthorized: false, agent: false, cert: cert.certificatePem, key: cert.privateKeyPem }, (res) => {
      res.resume();
      res.on('end', () => resolve(true));
    });
    req.on('error', () => resolve(false));
    req.end('{}');
  });
}

test("a client CA replaced in the mounted ConfigMap's directory is trusted without a restart, the old one no longer", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'recorder-client-ca-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const caFile = join(dir, 'client-ca', 'ca.crt');
  await mkdir(join(dir, 'client-ca'));
  const replace = async (pem: string): Promise<void> => {
    await writeFile(`${caFile}.new`, pem);
    await rename(`${caFile}.new`, caFile);
  };
  const now = new Date();
  const [firstCA, nextCA] = await Promise.all([createCertificateAuthority({ commonName: 'api-server-client-ca-1' }, 1, now), createCertificateAuthority({ commonName: 'api-server-client-ca-2' }, 1, now)]);
  const [first, next] = await Promise.all([
    issueLeafCertificate({ commonName: 'kube-apiserver-webhook-client', usage: 'client', validityDays: 1 }, firstCA, now),
    issueLeafCertificate({ commonName: 'kube-apiserver-webhook-client', usage: 'client', validityDays: 1 }, nextCA, now),
  ]);
  await replace(firstCA.certificatePem);

  const webhook = usersWebhookRunnable({
    client: memoryApi(),
    users: new AdmittedUsers(),
    namespace: 'quorum-system',
    service: 'quorum-recorder',
    certDir: join(dir, 'serving'),
    port: 0,
    log: createLogger({ level: 'silent' }),
    clientAuth: { caFile, allowedNames: ['kube-apiserver-webhook-client'] },
  });
  const stop = new AbortController();
  const running = webhook.start(stop.signal);
  t.after(async () => {
    stop.abort();
    await running;
  });
  for (let i = 0; i < 400 && webhook.problem() !== undefined; i++) await new Promise((resolve) => setTimeout(resolve, 25));
  const port = webhook.port()!;
  assert.equal(await answered(port, first), true);
  assert.equal(await answered(port, next), false);

  await replace(nextCA.certificatePem);
  // The server polls every 10 s besides watching the directory; the watch sees the rename at once.
  for (let i = 0; i < 480 && !(await answered(port, next)); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  assert.equal(await answered(port, next), true, 'the new CA is trusted');
  assert.equal(await answered(port, first), false, 'the old one no longer');
});
