// The RBAC manager against a real API server (localkube), whose RBAC decides every question
// (`kubectl auth can-i --as`). The manager runs in-process, but as a ServiceAccount holding exactly the RBAC
// its manifests give it (deploy/rbac.ts), so the smallest RBAC is proven to work; its escalation webhook is
// served in-process too, registered fail-closed by URL (after the first test has seen the manager grant nothing
// without it). No pods: definitions, namespaces and bindings only.
// `kubectl quorum access --explain` and `quorum rbac import` run as the CLI runs them, against the same cluster.
//
// The CRDs (ours and FairwindsOps', for the import) have fixed names; everything else is named per run, and the
// webhook configuration and the definitions are removed at the end.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive rbac-manager
// @timeout 5m: the cases wait for the API server and garbage collector, each well under 30 s
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  Client,
  ClusterRoleBindings,
  ClusterRoles,
  connect,
  createLogger,
  CustomResourceDefinitions,
  Events,
  generateCertificates,
  Namespaces,
  RoleBindings,
  Roles,
  ServiceAccounts,
  sleep,
  ValidatingWebhookConfigurations,
  type OpenObject,
} from '@quorum/runtime';
import { eventually, TestEnv } from '@quorum/localkube/testing';
import { accessCommand } from '../../src/cli/access.ts';
import { rbacDefinitionCRD } from '../../src/api/crd.ts';
import { API_VERSION, KIND, type RBACDefinition } from '../../src/api/rbacdefinition.ts';
import { clusterRules, eventRules, EVENTS_NAMESPACE } from '../../src/deploy/rbac.ts';
import { FairwindsDefinitions, importFairwindsDefinitions } from '../../src/migrate/fairwinds.ts';
import { createRbacManager } from '../../src/operator/manager.ts';
import { RBACDefinitions } from '../../src/resources.ts';
import { serveEscalationWebhook, type InProcessWebhook } from './support.ts';

const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
const quiet = createLogger({ level: 'warn' });
const log = (m: string): void => void process.stderr.write(`[rbac-manager] ${m}\n`);

let env: TestEnv;
let managerClient: Client;
let stopManager: () => Promise<void> = () => Promise.resolve();
let webhook: InProcessWebhook | undefined;
const webhookConfig = `quorum-rbac-manager-it-${run}`;
const managerRole = `quorum-rbac-manager-it-${run}`;
const cleanup: (() => Promise<unknown>)[] = [];

const fast = { timeoutMs: 30_000, intervalMs: 100 };

async function startManager(): Promise<void> {
  const { manager } = await createRbacManager({ escalationWebhook: webhook!.ref, logger: quiet, manager: { client: managerClient, gracefulShutdownMs: 2_000 } });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  stopManager = async () => {
    stop.abort();
    await running.catch(() => undefined);
  };
}

function impersonating(admin: Awaited<ReturnType<typeof connect>>, user: string): Client {
  return new Client({ ...admin, headers: async () => ({ ...(await admin.headers()), 'Impersonate-User': user }) });
}

async function canI(user: string, verb: string, resource: string, namespace: string, group?: string): Promise<boolean> {
  const out = await env.kube.kubectl(['auth', 'can-i', verb, resource, '-n', namespace, '--as', user, ...(group ? ['--as-group', group] : [])], { allowFailure: true });
  return out.trim().startsWith('yes');
}

async function applyCRD(crd: OpenObject): Promise<void> {
  await env.client.apply(CustomResourceDefinitions, crd, { fieldManager: 'rbac-manager-it', force: true });
  await eventually(`${crd.metadata.name} established`, async () => {
    const got = (await env.client.get(CustomResourceDefinitions, crd.metadata.name ?? '')) as OpenObject & { status?: { conditions?: { type: string; status: string }[] } };
    return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  }, fast);
}

async function definition(name: string, rbacBindings: RBACDefinition['rbacBindings']): Promise<RBACDefinition> {
  const created = await env.client.create(RBACDefinitions, { apiVersion: API_VERSION, kind: KIND, metadata: { name }, rbacBindings });
  cleanup.push(() => env.client.delete(RBACDefinitions, name).catch(() => undefined));
  return created;
}

async function ready(name: string): Promise<RBACDefinition> {
  return eventually(`${name} Ready`, async () => {
    const got = await env.client.get(RBACDefinitions, name);
    const c = got.status?.conditions?.find((x) => x.type === 'Ready');
    return c !== undefined && c.observedGeneration === got.metadata.generation && c.status === 'True' ? got : undefined;
  }, fast);
}

before(async () => {
  env = await TestEnv.start();
  await applyCRD(rbacDefinitionCRD());
  // The manager as a ServiceAccount with its manifests' cluster rules and Events role, nothing more.
  const home = await env.namespace('rbac-manager');
  await env.client.create(ServiceAccounts, { metadata: { name: 'manager', namespace: home } });
  const subject = [{ kind: 'ServiceAccount', name: 'manager', namespace: home }];
  await env.client.create(ClusterRoles, { metadata: { name: managerRole }, rules: clusterRules(undefined, webhookConfig) });
  await env.client.create(ClusterRoleBindings, { metadata: { name: managerRole }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: managerRole }, subjects: subject });
  await env.client.create(Roles, { metadata: { name: managerRole, namespace: EVENTS_NAMESPACE }, rules: eventRules() });
  await env.client.create(RoleBindings, { metadata: { name: managerRole, namespace: EVENTS_NAMESPACE }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: managerRole }, subjects: subject });
  cleanup.push(
    () => env.client.delete(ClusterRoleBindings, managerRole).catch(() => undefined),
    () => env.client.delete(ClusterRoles, managerRole).catch(() => undefined),
    () => env.client.delete(RoleBindings, { namespace: EVENTS_NAMESPACE, name: managerRole }).catch(() => undefined),
    () => env.client.delete(Roles, { namespace: EVENTS_NAMESPACE, name: managerRole }).catch(() => undefined),
  );
  managerClient = await env.clientFor(home, 'manager');
  webhook = await serveEscalationWebhook(env.client, managerClient, webhookConfig);
  await startManager();
});

after(async () => {
  await webhook?.stop();
  for (const step of cleanup.reverse()) await step();
  await stopManager();
  managerClient?.close();
  await env?.stop();
});

test('nothing is granted while the escalation webhook is not in place: the definition says why; registering the webhook lets the grant through', async () => {
  const ns = await env.namespace('rbac-gate');
  const dave = `dave-${run}`;
  const name = `gate-${run}`;
  // Written while no webhook checks it: the manager must not act on it.
  await definition(name, [{ name: 'devs', subjects: [{ kind: 'User', name: dave }], roleBindings: [{ clusterRole: 'edit', namespace: ns }] }]);
  const withheld = await eventually('the definition reports WebhookMissing', async () => {
    const got = await env.client.get(RBACDefinitions, name);
    return got.status?.conditions?.find((c) => c.type === 'Ready' && c.reason === 'WebhookMissing') ? got : undefined;
  }, fast);
  assert.match(withheld.status?.conditions?.find((c) => c.type === 'Degraded')?.message ?? '', new RegExp(`ValidatingWebhookConfiguration ${webhookConfig} does not exist`));
  assert.deepEqual(withheld.status?.bindings?.[0]?.skipped?.map((s) => s.reason), ['Withheld']);
  assert.equal(await canI(dave, 'create', 'deployments', ns), false, 'granted without the webhook');
  await eventually('a WebhookMissing Warning event', async () => {
    const events = (await env.client.list(Events, { namespace: EVENTS_NAMESPACE })).items as (OpenObject & { reason?: string; type?: string; regarding?: { name?: string } })[];
    return events.some((e) => e.regarding?.name === name && e.reason === 'WebhookMissing' && e.type === 'Warning');
  }, fast);

  const registered = Date.now();
  await webhook!.register();
  await eventually('granted once the webhook is in place', () => canI(dave, 'create', 'deployments', ns), fast);
  log(`granted ${Date.now() - registered} ms after the webhook configuration was created`);
  await ready(name);
});

test('grants to users, groups and service accounts (with pull secrets), by name, by selector and cluster-wide; edits reverted, foreign bindings untouched, namespaces followed at once, deletion removes exactly what it made', async () => {
  const team = `team-${run}`;
  const ops = `ops-${run}`;
  // A ClusterRole only this test grants, so that its ClusterRoleBinding is what can-i sees.
  const nodeReader = `node-reader-${run}`;
  await env.client.create(ClusterRoles, { metadata: { name: nodeReader }, rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }] });
  cleanup.push(() => env.client.delete(ClusterRoles, nodeReader).catch(() => undefined));
  const named = await env.namespace('rbac-named');
  const selected = await env.namespace('rbac-sel', { labels: { team } });
  const alice = `alice-${run}`;
  const robot = `system:serviceaccount:${named}:robot`;
  // A binding the manager did not make, with a name like its own.
  const foreign = await env.client.create(RoleBindings, {
    metadata: { name: `grants-${run}-devs-edit-old`, namespace: named },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'someone' }],
  });
  const name = `grants-${run}`;
  await definition(name, [
    {
      name: 'devs',
      subjects: [{ kind: 'User', name: alice }, { kind: 'ServiceAccount', name: 'robot', namespace: named, imagePullSecrets: ['registry'], automountServiceAccountToken: false }],
      roleBindings: [{ clusterRole: 'edit', namespace: named }, { clusterRole: 'view', namespaceSelector: { matchLabels: { team } } }],
    },
    { name: 'ops', subjects: [{ kind: 'Group', name: ops }], clusterRoleBindings: [{ clusterRole: nodeReader }] },
  ]);
  const status = await ready(name);
  assert.deepEqual(status.status?.bindings?.[0]?.namespaces, [named, selected].sort());
  assert.equal(await canI(alice, 'create', 'deployments', named), true);
  assert.equal(await canI(alice, 'get', 'pods', selected), true);
  assert.equal(await canI(alice, 'create', 'deployments', selected), false, 'view only where selected');
  assert.equal(await canI(robot, 'create', 'deployments', named), true);
  assert.equal(await canI('anyone', 'get', 'nodes', named, ops), true, 'the group, cluster-wide');
  assert.equal(await canI(alice, 'get', 'nodes', named), false);
  const sa = await env.client.get<OpenObject>(ServiceAccounts, { namespace: named, name: 'robot' });
  assert.deepEqual([sa['imagePullSecrets'], sa['automountServiceAccountToken']], [[{ name: 'registry' }], false]);

  // kubectl quorum access --explain: the manager's model, each grant confirmed by the API server.
  let table = '';
  const code = await accessCommand(['--explain', alice, '--kubeconfig', env.kubeconfig], { stdout: { write: (t: string) => (table += t) }, stderr: { write: (t: string) => void log(t) }, env: {} });
  assert.equal(code, 0);
  for (const ns of [named, selected]) assert.match(table, new RegExp(`${alice}\\s+ClusterRole (edit|view)\\s+${ns}\\s+${name}/devs\\s+-\\s+yes: `));

  // A manual edit of a generated binding is set back; the look-alike is untouched.
  const rbName = `${name}-devs-edit`;
  await env.client.mergePatch(RoleBindings, { namespace: named, name: rbName }, { subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'mallory' }] });
  await eventually('the edit reverted', async () => {
    const rb = (await env.client.get(RoleBindings, { namespace: named, name: rbName })) as OpenObject & { subjects: { name: string }[] };
    return rb.subjects.map((s) => s.name).includes(alice) && !rb.subjects.some((s) => s.name === 'mallory');
  }, fast);
  assert.equal((await env.client.get(RoleBindings, { namespace: named, name: foreign.metadata.name ?? '' })).metadata.resourceVersion, foreign.metadata.resourceVersion);

  // A namespace created into the selector, and one relabelled out of it: within 2 s each.
  let started = Date.now();
  const later = await env.namespace('rbac-later', { labels: { team } });
  await eventually('a binding in the new namespace', () => canI(alice, 'get', 'pods', later), fast);
  const createdMs = Date.now() - started;
  started = Date.now();
  await env.client.mergePatch(Namespaces, { namespace: '', name: selected }, { metadata: { labels: { team: null } } });
  await eventually('the binding gone from the relabelled namespace', async () => !(await canI(alice, 'get', 'pods', selected)), fast);
  const relabelledMs = Date.now() - started;
  started = Date.now();
  await env.client.mergePatch(Namespaces, { namespace: '', name: selected }, { metadata: { labels: { team } } });
  await eventually('the binding back in the namespace relabelled into the selector', () => canI(alice, 'get', 'pods', selected), fast);
  const relabelledInMs = Date.now() - started;
  log(`namespace created → bound in ${createdMs} ms; relabelled out → unbound in ${relabelledMs} ms; relabelled in → bound in ${relabelledInMs} ms`);
  assert.ok(createdMs < 2_000 && relabelledMs < 2_000 && relabelledInMs < 2_000, `${createdMs} ms, ${relabelledMs} ms, ${relabelledInMs} ms`);

  // Events are written after the writes they tell of, best effort: wait for them.
  await eventually('Granted, Updated and Revoked events on the definition', async () => {
    const events = (await env.client.list(Events, { namespace: EVENTS_NAMESPACE })).items as (OpenObject & { reason?: string; regarding?: { name?: string } })[];
    const reasons = new Set(events.filter((e) => e.regarding?.name === name).map((e) => e.reason));
    return ['Granted', 'Updated', 'Revoked'].every((r) => reasons.has(r));
  }, fast);

  // Deleting the definition removes what it made (the garbage collector, by owner reference), and only that.
  await env.client.delete(RBACDefinitions, name);
  await eventually(
    'its bindings gone',
    async () => !(await canI(alice, 'create', 'deployments', named)) && !(await canI('anyone', 'get', 'nodes', named, ops)) && !(await env.client.find(ServiceAccounts, { namespace: named, name: 'robot' })),
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  assert.ok(await env.client.find(RoleBindings, { namespace: named, name: foreign.metadata.name ?? '' }));
});

test('time-bound grants: expiresAt and notBefore on time, and an expiry and a start passed while the manager was down caught up at start', async () => {
  const ns = await env.namespace('rbac-time');
  const oncall = `oncall-${run}`;
  const soon = `soon-${run}`;
  const at = (ms: number): string => new Date(Math.ceil((Date.now() + ms) / 1000) * 1000).toISOString().replace('.000', '');
  const name = `time-${run}`;
  await definition(name, [
    { name: 'oncall', subjects: [{ kind: 'User', name: oncall }], roleBindings: [{ clusterRole: 'edit', namespace: ns }], expiresAt: at(4_000) },
    { name: 'soon', subjects: [{ kind: 'User', name: soon }], roleBindings: [{ clusterRole: 'edit', namespace: ns }], notBefore: at(3_000) },
  ]);
  await eventually('on-call access granted', () => canI(oncall, 'create', 'deployments', ns), fast);
  assert.equal(await canI(soon, 'create', 'deployments', ns), false, 'not before its time');
  await eventually('delayed access granted', () => canI(soon, 'create', 'deployments', ns), fast);
  await eventually('on-call access expired', async () => !(await canI(oncall, 'create', 'deployments', ns)), fast);
  // The status is written after the writes: wait for it.
  await eventually('the status: oncall Expired, soon Active', async () => {
    const got = await env.client.get(RBACDefinitions, name);
    return JSON.stringify(got.status?.bindings?.map((b) => b.state)) === JSON.stringify(['Expired', 'Active']);
  }, fast);

  // The manager down while one grant ends and another starts: each acted on as soon as the manager is back.
  const breakGlass = `break-glass-${run}`;
  const nextShift = `next-shift-${run}`;
  const name2 = `downtime-${run}`;
  const expiresAt = at(3_000);
  const notBefore = at(4_000);
  await definition(name2, [
    { name: 'glass', subjects: [{ kind: 'User', name: breakGlass }], roleBindings: [{ clusterRole: 'edit', namespace: ns }], expiresAt },
    { name: 'shift', subjects: [{ kind: 'User', name: nextShift }], roleBindings: [{ clusterRole: 'edit', namespace: ns }], notBefore },
  ]);
  await eventually('break-glass access granted', () => canI(breakGlass, 'create', 'deployments', ns), fast);
  await stopManager();
  await sleep(Math.max(0, Date.parse(notBefore) - Date.now()) + 1_000);
  assert.equal(await canI(breakGlass, 'create', 'deployments', ns), true, 'nobody revoked it while the manager was down');
  assert.equal(await canI(nextShift, 'create', 'deployments', ns), false, 'nobody granted it while the manager was down');
  const restarted = Date.now();
  await startManager();
  await eventually('break-glass revoked after the restart', async () => !(await canI(breakGlass, 'create', 'deployments', ns)), fast);
  log(`expired grant revoked ${Date.now() - restarted} ms after the manager started`);
  await eventually('the next shift granted after the restart', () => canI(nextShift, 'create', 'deployments', ns), fast);
  log(`delayed grant started ${Date.now() - restarted} ms after the manager started`);
});

test('no escalation: a user who may write definitions but holds only view cannot grant cluster-admin, nor edit where they do not administer; bind on the role lets them', async () => {
  const ns = await env.namespace('rbac-esc');
  const bob = `bob-${run}`;
  const writer = `rbac-writer-${run}`;
  await env.client.create(ClusterRoles, { metadata: { name: writer }, rules: [{ apiGroups: ['rbac.quorum.dev'], resources: ['rbacdefinitions'], verbs: ['get', 'list', 'create', 'update', 'patch'] }] });
  for (const role of [writer, 'view']) {
    await env.client.create(ClusterRoleBindings, { metadata: { name: `${writer}-${role}` }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: bob }] });
    cleanup.push(() => env.client.delete(ClusterRoleBindings, `${writer}-${role}`).catch(() => undefined));
  }
  cleanup.push(() => env.client.delete(ClusterRoles, writer).catch(() => undefined));
  const admin = await connect({ kubeconfig: env.kubeconfig });
  const asBob = impersonating(admin, bob);
  const friend = `friend-${run}`;
  const attempt = (name: string, rbacBindings: RBACDefinition['rbacBindings']): Promise<unknown> => asBob.create(RBACDefinitions, { apiVersion: API_VERSION, kind: KIND, metadata: { name }, rbacBindings });

  await assert.rejects(attempt(`esc-admin-${run}`, [{ name: 'x', subjects: [{ kind: 'User', name: friend }], clusterRoleBindings: [{ clusterRole: 'cluster-admin' }] }]), /may not grant what they could not bind themselves: .*bind ClusterRole cluster-admin cluster-wide/);
  await assert.rejects(attempt(`esc-edit-${run}`, [{ name: 'x', subjects: [{ kind: 'User', name: friend }], roleBindings: [{ clusterRole: 'edit', namespace: ns }] }]), new RegExp(`bind ClusterRole edit in namespace ${ns}`));
  assert.equal(await env.client.find(RBACDefinitions, `esc-admin-${run}`), undefined);
  assert.equal(await env.client.find(RBACDefinitions, `esc-edit-${run}`), undefined);
  assert.equal(await canI(friend, 'create', 'deployments', ns), false);

  // Kubernetes' own rule: with bind on edit in that namespace, bob may grant it there.
  await env.client.create(Roles, { metadata: { name: 'bind-edit', namespace: ns }, rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], resourceNames: ['edit'], verbs: ['bind'] }] });
  await env.client.create(RoleBindings, { metadata: { name: 'bind-edit', namespace: ns }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'bind-edit' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: bob }] });
  await attempt(`esc-edit-${run}`, [{ name: 'x', subjects: [{ kind: 'User', name: friend }], roleBindings: [{ clusterRole: 'edit', namespace: ns }] }]);
  cleanup.push(() => env.client.delete(RBACDefinitions, `esc-edit-${run}`).catch(() => undefined));
  await eventually('the allowed grant in place', () => canI(friend, 'create', 'deployments', ns), fast);
  asBob.close();
});

test('FairwindsOps rbac-manager: its definitions imported and the bindings it made adopted in place, with its names and labels, never a moment without access', async () => {
  await applyCRD({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'rbacdefinitions.rbacmanager.reactiveops.io' },
    spec: {
      group: 'rbacmanager.reactiveops.io',
      names: { kind: 'RBACDefinition', listKind: 'RBACDefinitionList', plural: 'rbacdefinitions', singular: 'rbacdefinition' },
      scope: 'Cluster',
      versions: [{ name: 'v1beta1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  });
  const ns = await env.namespace('rbac-fw');
  const carol = `carol-${run}`;
  const name = `fw-${run}`;
  const old = await env.client.create(FairwindsDefinitions, { apiVersion: 'rbacmanager.reactiveops.io/v1beta1', kind: 'RBACDefinition', metadata: { name }, rbacBindings: [{ name: 'devs', subjects: [{ kind: 'User', name: carol }], roleBindings: [{ clusterRole: 'edit', namespace: ns }] }] });
  cleanup.push(() => env.client.delete(FairwindsDefinitions, name).catch(() => undefined));
  // What FairwindsOps' controller made for it (pkg/reconciler/parser.go): its name, label and owner reference.
  const made = await env.client.create(RoleBindings, {
    metadata: { name: `${name}-devs-edit`, namespace: ns, labels: { 'rbac-manager': 'reactiveops' }, ownerReferences: [{ apiVersion: 'rbacmanager.reactiveops.io/v1beta1', kind: 'RBACDefinition', name, uid: old.metadata.uid ?? '' }] },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: carol }],
  });
  assert.equal(await canI(carol, 'create', 'deployments', ns), true);

  // Access checked all through the import: it must never lapse.
  let lapses = 0;
  let watching = true;
  const watcher = (async () => {
    while (watching) if (!(await canI(carol, 'create', 'deployments', ns))) lapses++;
  })();
  const results = await importFairwindsDefinitions(env.client, { readyTimeoutMs: 30_000, log });
  watching = false;
  await watcher;
  assert.deepEqual(results.filter((r) => r.name === name), [{ name, outcome: 'imported' }]);
  assert.equal(lapses, 0, 'access lapsed during the import');
  const adopted = await env.client.get(RoleBindings, { namespace: ns, name: `${name}-devs-edit` });
  assert.equal(adopted.metadata.uid, made.metadata.uid, 'the same object, patched in place');
  assert.equal(adopted.metadata.labels?.['rbac-manager'], 'reactiveops');
  assert.deepEqual(adopted.metadata.ownerReferences?.map((o) => `${o.apiVersion} ${o.kind} ${o.name}`), [`${API_VERSION} ${KIND} ${name}`]);
  // Deleted with propagationPolicy Orphan: gone once the garbage collector has removed its orphan finalizer.
  await eventually('the old definition gone', async () => (await env.client.find(FairwindsDefinitions, name)) === undefined, fast);
  cleanup.push(() => env.client.delete(RBACDefinitions, name).catch(() => undefined));
  // Its deletion orphaned the binding: still there, still granting, a while later.
  await sleep(2_000);
  assert.equal(await canI(carol, 'create', 'deployments', ns), true);
});

test('the webhook configuration deleted, failing open, or trusting another CA: what is granted stays, nothing new is granted and the definition says why; put right, it is granted', async () => {
  const ns = await env.namespace('rbac-weak');
  const erin = `erin-${run}`;
  const kept = `kept-${run}`;
  await definition(kept, [{ name: 'devs', subjects: [{ kind: 'User', name: erin }], roleBindings: [{ clusterRole: 'edit', namespace: ns }] }]);
  await ready(kept);
  assert.equal(await canI(erin, 'create', 'deployments', ns), true);
  const hook = (config: OpenObject): Record<string, unknown> & { clientConfig: Record<string, unknown> } => (config['webhooks'] as (Record<string, unknown> & { clientConfig: Record<string, unknown> })[])[0]!;
  const change = async (edit: (config: OpenObject) => void): Promise<void> => {
    const config = await env.client.get<OpenObject>(ValidatingWebhookConfigurations, webhookConfig);
    edit(config);
    await env.client.replace(ValidatingWebhookConfigurations, config);
  };
  const foreign = await generateCertificates({ ipAddresses: ['127.0.0.1'] });
  let ownCaBundle = '';
  const weakenings: [string, () => Promise<void>, RegExp, () => Promise<void>][] = [
    ['deleted', () => env.client.delete(ValidatingWebhookConfigurations, webhookConfig), new RegExp(`ValidatingWebhookConfiguration ${webhookConfig} does not exist`), () => webhook!.register()],
    ['failing open', () => change((c) => void (hook(c)['failurePolicy'] = 'Ignore')), /its failurePolicy is Ignore; it must fail closed/, () => change((c) => void (hook(c)['failurePolicy'] = 'Fail'))],
    [
      'trusting another CA besides its own',
      () =>
        change((c) => {
          ownCaBundle = String(hook(c).clientConfig['caBundle']);
          hook(c).clientConfig['caBundle'] = Buffer.from(Buffer.from(ownCaBundle, 'base64').toString('utf8') + foreign.caCert).toString('base64');
        }),
      /its caBundle trusts 1 CA\(s\) besides the manager's/,
      () => change((c) => void (hook(c).clientConfig['caBundle'] = ownCaBundle)),
    ],
  ];
  try {
    for (const [what, weaken, why, restore] of weakenings) {
      await weaken();
      // The manager has seen it once the definition in place reports it: only then is the next one written.
      await eventually(`${what}: the definition in place reports WebhookMissing`, async () => (await env.client.get(RBACDefinitions, kept)).status?.conditions?.find((c) => c.type === 'Degraded')?.reason === 'WebhookMissing', fast);
      // Written while nothing checks it (or, for the foreign CA, while another server could have answered).
      const user = `frank-${what.split(' ')[0]}-${run}`;
      const name = `weak-${what.split(' ')[0]}-${run}`;
      await definition(name, [{ name: 'devs', subjects: [{ kind: 'User', name: user }], roleBindings: [{ clusterRole: 'edit', namespace: ns }] }]);
      const withheld = await eventually(`${what}: the new definition reports WebhookMissing`, async () => {
        const got = await env.client.get(RBACDefinitions, name);
        return got.status?.conditions?.find((c) => c.type === 'Degraded' && c.reason === 'WebhookMissing') ? got : undefined;
      }, fast);
      assert.match(withheld.status?.conditions?.find((c) => c.type === 'Degraded')?.message ?? '', why, what);
      assert.deepEqual(withheld.status?.bindings?.[0]?.skipped?.map((s) => s.reason), ['Withheld'], what);
      assert.equal(await canI(user, 'create', 'deployments', ns), false, `${what}: granted anyway`);
      assert.equal(await canI(erin, 'create', 'deployments', ns), true, `${what}: an existing grant was taken away`);
      const restored = Date.now();
      await restore();
      await eventually(`${what}: granted once put right`, () => canI(user, 'create', 'deployments', ns), fast);
      log(`${what}: granted ${Date.now() - restored} ms after the configuration was put right`);
      await ready(name);
      await ready(kept);
      await env.client.delete(RBACDefinitions, name);
    }
  } finally {
    // The later cleanup (webhook.stop) expects it; put back as registered if a step above failed midway.
    await env.client.delete(ValidatingWebhookConfigurations, webhookConfig).catch(() => undefined);
    await webhook!.register();
  }
  await ready(kept);
});
