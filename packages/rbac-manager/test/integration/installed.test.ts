// The RBAC manager as users run it: its image built and loaded into every node, installed from its manifests as
// `quorum rbac install` does (one replica here; leader election, the escalation webhook behind its Service with
// the certificate the manager issues and publishes, in-cluster configuration, exactly the RBAC its manifests
// give it). What only the installed manager shows: its webhook configuration counts as in place once its own
// CA, read from its serving Secret with the RBAC it ships, is the configuration's caBundle; a definition is
// granted; a view-only writer is refused by the webhook over TLS; a configuration weakened by hand (failing open)
// withholds new grants until `quorum rbac install` writes it back; a foreign CA put in its caBundle is put right
// by the manager's own publishing; uninstalled, the definitions and their bindings stay.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive rbac-manager
// @timeout 10m: the image is built and loaded, the manager rolled out twice; each wait is bounded below
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client, ClusterRoleBindings, ClusterRoles, connect, generateCertificates, ValidatingWebhookConfigurations, type OpenObject } from '@quorum/runtime';
import { eventually, TestEnv } from '@quorum/localkube/testing';
import { ESCALATION_WEBHOOK_CONFIGURATION } from '../../src/admission/serving.ts';
import { API_VERSION, KIND, type RBACDefinition } from '../../src/api/rbacdefinition.ts';
import { buildRbacManagerImage } from '../../src/deploy/image.ts';
import { installRbacManager, uninstallRbacManager } from '../../src/deploy/install.ts';
import { RBACDefinitions } from '../../src/resources.ts';

const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
const log = (m: string): void => void process.stderr.write(`[rbac-manager installed] ${m}\n`);
const bounded = { timeoutMs: 60_000, intervalMs: 200 };

let env: TestEnv;
let namespace = '';
let image = '';
const cleanup: (() => Promise<unknown>)[] = [];

async function canI(user: string, verb: string, resource: string, ns: string): Promise<boolean> {
  const out = await env.kube.kubectl(['auth', 'can-i', verb, resource, '-n', ns, '--as', user], { allowFailure: true });
  return out.trim().startsWith('yes');
}

async function definition(name: string, user: string, ns: string): Promise<void> {
  const rbacBindings: RBACDefinition['rbacBindings'] = [{ name: 'devs', subjects: [{ kind: 'User', name: user }], roleBindings: [{ clusterRole: 'edit', namespace: ns }] }];
  await env.client.create(RBACDefinitions, { apiVersion: API_VERSION, kind: KIND, metadata: { name }, rbacBindings });
  cleanup.push(() => env.client.delete(RBACDefinitions, name).catch(() => undefined));
}

/** The definition's Degraded condition for its current generation once it has one of this reason. */
function degraded(name: string, reason: string): Promise<{ message: string }> {
  return eventually(`${name}: Degraded ${reason}`, async () => {
    const got = await env.client.get(RBACDefinitions, name);
    const c = got.status?.conditions?.find((x) => x.type === 'Degraded');
    return c?.reason === reason && c.observedGeneration === got.metadata.generation ? c : undefined;
  }, bounded);
}

const hook = (config: OpenObject): { failurePolicy?: string; clientConfig: { caBundle?: string } } => (config['webhooks'] as { failurePolicy?: string; clientConfig: { caBundle?: string } }[])[0]!;

async function editConfiguration(edit: (config: OpenObject) => void): Promise<void> {
  const config = await env.client.get<OpenObject>(ValidatingWebhookConfigurations, ESCALATION_WEBHOOK_CONFIGURATION);
  edit(config);
  await env.client.replace(ValidatingWebhookConfigurations, config);
}

/** What the manager's pods, Service and webhook configuration looked like, and what its processes said: for a failure's report. */
async function diagnostics(): Promise<void> {
  const kubectl = (args: string[]): Promise<string> => env.kube.kubectl(args, { allowFailure: true }).catch((err: unknown) => String(err));
  const selector = 'app.kubernetes.io/component=rbac-manager';
  for (const args of [
    ['get', 'pods', '-n', namespace, '-o', 'wide'],
    ['get', 'endpointslices', '-n', namespace, '-o', 'yaml'],
    ['describe', 'pods', '-n', namespace, '-l', selector],
    ['logs', '-n', namespace, '-l', selector, '--tail', '80', '--prefix'],
    ['logs', '-n', namespace, '-l', selector, '--tail', '80', '--prefix', '--previous'],
    ['get', 'validatingwebhookconfiguration', ESCALATION_WEBHOOK_CONFIGURATION, '-o', 'yaml'],
    ['get', 'rbacdefinitions', '-o', 'yaml'],
  ]) log(`$ kubectl ${args.join(' ')}\n${await kubectl(args)}`);
}

before(async () => {
  const built = await buildRbacManagerImage();
  image = built.name;
  env = await TestEnv.start();
  await env.kube.loadImage(built.archive);
  namespace = await env.namespace('rbac-installed');
  const started = Date.now();
  await installRbacManager(env.client, { namespace, image, replicas: 1, log });
  log(`installed and serving in ${Date.now() - started} ms`);
});

after(async () => {
  for (const step of cleanup.reverse()) await step();
  await uninstallRbacManager(env.client, { namespace }).catch((err: unknown) => log(`uninstall: ${String(err)}`));
  await env?.stop();
});

test('installed: granted once its own CA is published, a view-only writer refused over TLS, a configuration failing open withholds new grants until `quorum rbac install` writes it back, a foreign CA in its caBundle put right by its publishing, uninstalling keeps every binding', async () => {
  try {
    await installedCase();
  } catch (err) {
    await diagnostics();
    throw err;
  }
});

async function installedCase(): Promise<void> {
  const ns = await env.namespace('rbac-installed-target');
  const gina = `gina-${run}`;
  const kept = `installed-${run}`;
  let started = Date.now();
  await definition(kept, gina, ns);
  await eventually('granted by the installed manager', () => canI(gina, 'create', 'deployments', ns), bounded);
  log(`a definition granted ${Date.now() - started} ms after it was created`);

  // The webhook, served by the pod behind its Service with the certificate the manager made: a view-only writer
  // cannot grant cluster-admin.
  const hank = `hank-${run}`;
  const writer = `rbac-writer-installed-${run}`;
  await env.client.create(ClusterRoles, { metadata: { name: writer }, rules: [{ apiGroups: ['rbac.quorum.dev'], resources: ['rbacdefinitions'], verbs: ['create'] }] });
  cleanup.push(() => env.client.delete(ClusterRoles, writer).catch(() => undefined));
  for (const role of [writer, 'view']) {
    await env.client.create(ClusterRoleBindings, { metadata: { name: `${writer}-${role}` }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: hank }] });
    cleanup.push(() => env.client.delete(ClusterRoleBindings, `${writer}-${role}`).catch(() => undefined));
  }
  const admin = await connect({ kubeconfig: env.kubeconfig });
  const asHank = new Client({ ...admin, headers: async () => ({ ...(await admin.headers()), 'Impersonate-User': hank }) });
  try {
    await assert.rejects(
      asHank.create(RBACDefinitions, { apiVersion: API_VERSION, kind: KIND, metadata: { name: `installed-esc-${run}` }, rbacBindings: [{ name: 'x', subjects: [{ kind: 'User', name: hank }], clusterRoleBindings: [{ clusterRole: 'cluster-admin' }] }] }),
      /may not grant what they could not bind themselves: .*bind ClusterRole cluster-admin cluster-wide/,
    );
  } finally {
    asHank.close();
  }

  // Failing open, by hand: what is granted stays; nothing new is granted, and the definitions say why.
  await editConfiguration((c) => void (hook(c).failurePolicy = 'Ignore'));
  await degraded(kept, 'WebhookMissing');
  const ivy = `ivy-${run}`;
  const later = `installed-later-${run}`;
  await definition(later, ivy, ns);
  assert.match((await degraded(later, 'WebhookMissing')).message, /its failurePolicy is Ignore; it must fail closed/);
  assert.equal(await canI(ivy, 'create', 'deployments', ns), false, 'granted while the webhook failed open');
  assert.equal(await canI(gina, 'create', 'deployments', ns), true, 'an existing grant was taken away');
  // The runbook: `quorum rbac install` writes the configuration back as shipped (keeping the published CA).
  started = Date.now();
  await installRbacManager(env.client, { namespace, image, replicas: 1 });
  await eventually('granted once the configuration is back', () => canI(ivy, 'create', 'deployments', ns), bounded);
  log(`granted ${Date.now() - started} ms after quorum rbac install began`);

  // A foreign CA beside its own in the caBundle: the manager's webhook serving publishes its own CA again (every
  // 30 s), and its definitions are in place again.
  const own = hook(await env.client.get<OpenObject>(ValidatingWebhookConfigurations, ESCALATION_WEBHOOK_CONFIGURATION)).clientConfig.caBundle ?? '';
  const foreign = await generateCertificates({ ipAddresses: ['127.0.0.1'] });
  started = Date.now();
  await editConfiguration((c) => void (hook(c).clientConfig.caBundle = Buffer.from(Buffer.from(own, 'base64').toString('utf8') + foreign.caCert).toString('base64')));
  await eventually('its own CA alone in the caBundle again', async () => hook(await env.client.get<OpenObject>(ValidatingWebhookConfigurations, ESCALATION_WEBHOOK_CONFIGURATION)).clientConfig.caBundle === own, bounded);
  log(`the foreign CA removed by the manager's publishing ${Date.now() - started} ms after it was put there`);
  await degraded(kept, 'AsAsked');
  await degraded(later, 'AsAsked');

  // Uninstalled: the webhook and the manager go, every definition and binding stays.
  await uninstallRbacManager(env.client, { namespace });
  assert.equal(await env.client.find(ValidatingWebhookConfigurations, ESCALATION_WEBHOOK_CONFIGURATION), undefined);
  assert.ok(await env.client.find(RBACDefinitions, kept));
  assert.equal(await canI(gina, 'create', 'deployments', ns), true, 'uninstalling took access away');
  assert.equal(await canI(ivy, 'create', 'deployments', ns), true, 'uninstalling took access away');
}
