// The operator's RBAC against the calls its code makes, as the host-prerequisite registry checks host files
// against their use (localkube/test/unit/host-prerequisites.test.ts): every API call in the sources the
// operator process loads (from src/operator/main.ts, following its imports) is scanned for its resource and
// verb, together with the library code it reaches that calls the API itself (leader election, events, the
// webhook certificate); each call must be granted by a generated rule, and each rule's verb must be used.
// Then the scopes: a namespace-scoped install grants the same verbs, in each tenant namespace only; what is
// refused (kube-system, no namespace, both scopes); and what install() refuses before it changes anything.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import * as runtime from '@quorum/runtime';
import { install } from '../../src/deploy/install.ts';
import { accessObjects, clusterRules, METRICS_AUTH_CLUSTER_ROLE, METRICS_READER_CLUSTER_ROLE, metricsAccessObjects, namespaceRules, NAME, operatorManifests, WATCH_ROLE, WEBHOOK_CLUSTER_ROLE } from '../../src/deploy/manifests.ts';
import { rbacMarkdown, SECURITY_FILE, withGeneratedRbac } from '../../src/deploy/rbac-doc.ts';
import * as etcdResources from '../../src/resources.ts';

const packageDir = resolve(import.meta.dirname, '../..');
const packagesDir = resolve(packageDir, '..');

// ---- what the code calls ----

/** A resource type constant's API group and plural, by the name the sources use. */
const TYPES = new Map<string, { group: string; plural: string }>();
for (const [name, value] of Object.entries({ ...runtime, ...etcdResources })) {
  const v = value as { apiVersion?: unknown; plural?: unknown; kind?: unknown };
  if (typeof v === 'object' && v !== null && typeof v.apiVersion === 'string' && typeof v.plural === 'string' && typeof v.kind === 'string') {
    TYPES.set(name, { group: v.apiVersion.includes('/') ? v.apiVersion.slice(0, v.apiVersion.indexOf('/')) : '', plural: v.plural });
  }
}

/**
 * The verbs of each function the sources call with a resource type (first or second argument): the client's
 * methods, the runtime's helpers, the manager's and the builder's informers, and the local wrappers named after
 * what they call. A call with a resource type through any other function fails the scan: add it here.
 */
const VERBS: Record<string, readonly string[]> = {
  get: ['get'],
  find: ['get'],
  list: ['list'],
  create: ['create'],
  replace: ['update'],
  replaceStatus: ['update'],
  delete: ['delete'],
  mergePatch: ['patch'],
  jsonPatch: ['patch'],
  writeStatus: ['patch'],
  kitWriteStatus: ['patch'],
  // Server-side apply: a patch, and a create when the object does not exist yet (the API server checks both).
  apply: ['create', 'patch'],
  applyIfChanged: ['create', 'patch'],
  applyStatus: ['patch'],
  // Informers list and watch; the builder's sources are informers.
  informer: ['list', 'watch'],
  for: ['list', 'watch'],
  owns: ['list', 'watch'],
  watches: ['list', 'watch'],
  // ca-bundle.ts: reads a webhook configuration and patches its caBundle.
  patchOne: ['get', 'patch'],
};
/** Functions whose calls write the status subresource whatever their options say. */
const STATUS_WRITERS = new Set(['writeStatus', 'kitWriteStatus', 'applyStatus', 'replaceStatus']);

/**
 * Library code that calls the API itself on the operator's behalf, and the call in the operator's sources that
 * reaches it: a trigger that is gone fails the test, so this table cannot outlive its use.
 */
const LIBRARY_CALLS: [trigger: string, files: string[]][] = [
  // The kit's schedule reconciler, bound to this operator's kinds (see SCHEDULE_KIND_TYPES).
  ['backupScheduleReconciler(', ['kit/src/backup-schedule-reconcile.ts']],
  ['leaderElection:', ['runtime/src/manager/leader-election.ts']],
  ['eventRecorder(', ['runtime/src/helpers/events.ts']],
  ['secureMetrics:', ['runtime/src/manager/metrics-auth.ts']],
  ['webhookServing(', ['kit/src/webhook-serving.ts', 'runtime/src/webhook/serving-secret.ts', 'runtime/src/webhook/ca-bundle.ts']],
];

/**
 * The kit's schedule reconciler calls the API through its kind's types (`kind.backups`, `kind.schedules`): the
 * types this operator's binding gives it (src/schedule/reconcile.ts) stand in for them in the scan.
 */
const SCHEDULE_KIND_TYPES: Record<string, string> = { 'kind.backups': 'EtcdBackups', 'kind.schedules': 'EtcdBackupSchedules' };
const bindKindTypes = (text: string): string => Object.entries(SCHEDULE_KIND_TYPES).reduce((t, [generic, type]) => t.replaceAll(generic, type), text);

/** The operator process's own sources: src/operator/main.ts and every module of this package it imports. */
async function operatorSources(): Promise<string[]> {
  const seen = new Set<string>();
  const queue = [join(packageDir, 'src/operator/main.ts')];
  while (queue.length) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = await readFile(file, 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+\.ts)'/g)) queue.push(resolve(dirname(file), m[1]!));
  }
  return [...seen].sort();
}

/** Source lines with comments dropped (a comment naming a call makes none). */
const code = (text: string): string =>
  text
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line))
    .map((line) => line.replace(/\s\/\/ .*$/, ''))
    .join('\n');

type Use = string; // `group/resource verb`, e.g. `/pods create`, `etcd.quorum.dev/etcdclusters/status patch`

/** The calls `source` makes (as uses), and what it calls with a resource type through an unknown function. */
function usesIn(source: string): { uses: Use[]; unknown: string[] } {
  const text = code(source);
  const uses: Use[] = [];
  const unknown: string[] = [];
  const aliases = new Map<string, string>();
  for (const m of text.matchAll(/const (\w+) = resource<[^>]*>\((\w+)\.apiVersion/g)) aliases.set(m[1]!, m[2]!);
  const typeOf = (name: string): { group: string; plural: string } | undefined => TYPES.get(aliases.get(name) ?? name);
  // NAME(TYPE…) or NAME(receiver, TYPE…), with optional type arguments.
  for (const m of text.matchAll(/\b([A-Za-z_$][\w$]*)\s*(?:<[^()]*?>)?\(\s*(?:[\w.#]+\s*,\s*)?([A-Z]\w*)\b(?!\s*[.(<])/g)) {
    const [, fn, typeName] = m as unknown as [string, string, string];
    const type = typeOf(typeName);
    if (!type) continue;
    const verbs = VERBS[fn];
    if (!verbs) {
      unknown.push(`${fn}(${typeName})`);
      continue;
    }
    const statement = text.slice(m.index, text.indexOf(';', m.index));
    const status = STATUS_WRITERS.has(fn) || /subresource: 'status'/.test(statement);
    for (const verb of verbs) uses.push(`${type.group}/${type.plural}${status ? '/status' : ''} ${verb}`);
  }
  // Raw requests: request('POST', `/api/v1/namespaces/${ns}/pods/${name}/eviction`).
  for (const m of text.matchAll(/\brequest(?:<[^>]*>)?\(\s*'(GET|POST|PUT|PATCH|DELETE)',\s*`([^`]+)`/g)) {
    const [, method, path] = m as unknown as [string, string, string];
    const parts = /^\/(?:api\/v1|apis\/([^/]+)\/[^/]+)\/(?:namespaces\/[^/]+\/)?([a-z]+)(\/[^/]+)?(\/[a-z]+)?$/.exec(path);
    if (!parts) {
      unknown.push(`request ${method} ${path}`);
      continue;
    }
    const [, group = '', plural, name, sub = ''] = parts;
    const verb = { GET: name ? 'get' : 'list', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' }[method]!;
    uses.push(`${group}/${plural}${sub} ${verb}`);
  }
  return { uses, unknown };
}

/** Every use the operator process makes, with the files that make it. */
async function operatorUses(): Promise<{ uses: Map<Use, string[]>; unknown: string[]; triggersMissing: string[] }> {
  const files = await operatorSources();
  const texts = new Map(await Promise.all(files.map(async (f) => [f, await readFile(f, 'utf8')] as const)));
  const operatorCode = [...texts.values()].map(code).join('\n');
  const triggersMissing = LIBRARY_CALLS.filter(([trigger]) => !operatorCode.includes(trigger)).map(([trigger]) => trigger);
  for (const [, libraryFiles] of LIBRARY_CALLS) for (const f of libraryFiles) texts.set(join(packagesDir, f), bindKindTypes(await readFile(join(packagesDir, f), 'utf8')));
  const uses = new Map<Use, string[]>();
  const unknown: string[] = [];
  for (const [file, text] of texts) {
    const found = usesIn(text);
    for (const use of found.uses) uses.set(use, [...new Set([...(uses.get(use) ?? []), relative(packagesDir, file)])]);
    unknown.push(...found.unknown.map((u) => `${relative(packagesDir, file)}: ${u}`));
  }
  return { uses, unknown, triggersMissing };
}

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] };

const grants = (rules: readonly Record<string, unknown>[]): Use[] =>
  (rules as Rule[]).flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}/${res} ${v}`))));

test('the scan finds calls by the client, helpers, informers and raw requests, and refuses an unknown function', () => {
  const fixture = [
    'await deps.client.create(Jobs, job, { fieldManager });',
    "await client.mergePatch(EtcdBackups, key, { status }, { subresource: 'status' });",
    'manager.informer(Pods, scope);',
    'await writeStatus(deps.client, EtcdRestores, key, a, b, {});',
    "await c.client.request('POST', `/api/v1/namespaces/${ns}/pods/${member}/eviction`, body);",
    "await client.request<Meta>('GET', `/api/v1/namespaces/${ns}/secrets/${name}`, undefined, {});",
    '// await client.delete(Secrets, key): a comment makes no call',
    'await mystery(client, Secrets, key);',
    'const EventResource = resource<KubeEvent>(Events.apiVersion, Events.kind, Events.plural, true);',
    'await this.#client.create(EventResource, event);',
  ].join('\n');
  const { uses, unknown } = usesIn(fixture);
  assert.deepEqual(uses.sort(), [
    '/pods list',
    '/pods watch',
    '/pods/eviction create',
    '/secrets get',
    'batch/jobs create',
    'etcd.quorum.dev/etcdbackups/status patch',
    'etcd.quorum.dev/etcdrestores/status patch',
    'events.k8s.io/events create',
  ]);
  assert.deepEqual(unknown, ['mystery(Secrets)']);
});

test('every API call the operator process makes is granted by its RBAC, and every verb granted is used', async () => {
  const { uses, unknown, triggersMissing } = await operatorUses();
  assert.deepEqual(triggersMissing, [], 'LIBRARY_CALLS names a call the operator no longer makes');
  assert.deepEqual(unknown, [], 'a resource type passed to a function the scan does not know: add it to VERBS with its verbs');
  const granted = new Set([...grants(clusterRules()), ...grants(namespaceRules())]);
  const ungranted = [...uses].filter(([use]) => !granted.has(use)).map(([use, files]) => `${use} (${files.join(', ')})`);
  assert.deepEqual(ungranted, [], 'calls without a rule: add them to clusterRules() or namespaceRules()');
  const unused = [...granted].filter((g) => !uses.has(g));
  assert.deepEqual(unused, [], 'granted but never called: drop the verb');
});

test('a namespace-scoped install grants the same verbs in each tenant namespace only; cluster-wide, in a ClusterRole; the webhooks\' only with webhooks', () => {
  const webhookRules = (rules: Record<string, unknown>[]): Record<string, unknown>[] => rules.filter((r) => (r['apiGroups'] as string[]).some((g) => g === 'admissionregistration.k8s.io' || g === 'authorization.k8s.io'));
  const scoped = accessObjects('ops', ['apps', 'web'], true);
  const roles = scoped.filter((o) => o.kind === 'Role');
  assert.deepEqual(roles.map((r) => `${r.metadata.namespace}/${r.metadata.name}`), [`apps/${WATCH_ROLE}`, `web/${WATCH_ROLE}`]);
  const bindings = scoped.filter((o) => o.kind === 'RoleBinding');
  assert.deepEqual(bindings.map((b) => `${b.metadata.namespace}/${b.metadata.name}`), [`apps/${WATCH_ROLE}`, `web/${WATCH_ROLE}`]);
  for (const b of bindings) assert.deepEqual(b['subjects'], [{ kind: 'ServiceAccount', name: NAME, namespace: 'ops' }]);
  const clusterRole = scoped.find((o) => o.kind === 'ClusterRole');
  assert.equal(clusterRole?.metadata.name, WEBHOOK_CLUSTER_ROLE);
  // Together, the Role, the webhooks' ClusterRole and the metrics server's access reviews grant exactly what the cluster-wide rules do.
  const metricsAuth = metricsAccessObjects('ops');
  const reviews = metricsAuth.find((o) => o.metadata.name === METRICS_AUTH_CLUSTER_ROLE && o.kind === 'ClusterRole')!['rules'] as Record<string, unknown>[];
  assert.deepEqual(reviews, clusterRules().filter((r) => (r['apiGroups'] as string[]).some((g) => g === 'authentication.k8s.io' || g === 'authorization.k8s.io')));
  assert.deepEqual(metricsAuth.find((o) => o.kind === 'ClusterRoleBinding')?.['subjects'], [{ kind: 'ServiceAccount', name: NAME, namespace: 'ops' }]);
  assert.deepEqual(metricsAuth.find((o) => o.metadata.name === METRICS_READER_CLUSTER_ROLE)?.['rules'], [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
  const together = [...new Set([...grants(roles[0]!['rules'] as Record<string, unknown>[]), ...grants(clusterRole['rules'] as Record<string, unknown>[]), ...grants(reviews)])].sort();
  assert.deepEqual(together, [...new Set(grants(clusterRules()))].sort());
  assert.deepEqual(clusterRole['rules'], webhookRules(clusterRules()));
  const wide = accessObjects('ops', undefined, true);
  assert.deepEqual(wide.map((o) => `${o.kind}/${o.metadata.name}`), [`ClusterRole/${NAME}`, `ClusterRoleBinding/${NAME}`, `ClusterRole/${WEBHOOK_CLUSTER_ROLE}`, `ClusterRoleBinding/${WEBHOOK_CLUSTER_ROLE}`]);
  assert.deepEqual(wide[0]!['rules'], roles[0]!['rules'], 'cluster-wide, the same rules as in each tenant namespace');
  // Without webhooks a namespace-scoped install has nothing cluster-wide, and a cluster-wide one no webhook rule.
  assert.equal(accessObjects('ops', ['apps'], false).filter((o) => o.kind?.startsWith('Cluster')).length, 0);
  assert.deepEqual(accessObjects('ops', undefined, false).map((o) => `${o.kind}/${o.metadata.name}`), [`ClusterRole/${NAME}`, `ClusterRoleBinding/${NAME}`]);
});

test('namespace-scoped by default (namespace default); kube-system and an empty list are refused; cluster-wide only when asked', () => {
  const kinds = (objects: { kind?: string; metadata: { name?: string; namespace?: string } }[]): string[] => objects.filter((o) => o.kind?.includes('Role')).map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`);
  const metrics = [`ClusterRole /${METRICS_AUTH_CLUSTER_ROLE}`, `ClusterRoleBinding /${METRICS_AUTH_CLUSTER_ROLE}`, `ClusterRole /${METRICS_READER_CLUSTER_ROLE}`];
  assert.deepEqual(kinds(operatorManifests({ webhooks: false })), [`Role default/${WATCH_ROLE}`, `RoleBinding default/${WATCH_ROLE}`, ...metrics, `Role quorum-system/${NAME}`, `RoleBinding quorum-system/${NAME}`]);
  assert.deepEqual(kinds(operatorManifests({ webhooks: false, clusterWide: true })), [`ClusterRole /${NAME}`, `ClusterRoleBinding /${NAME}`, ...metrics, `Role quorum-system/${NAME}`, `RoleBinding quorum-system/${NAME}`]);
  assert.throws(() => operatorManifests({ namespaces: ['apps', 'kube-system'] }), /kube-system.*refused/);
  assert.throws(() => operatorManifests({ namespaces: [] }), /at least one namespace/);
  assert.throws(() => operatorManifests({ namespaces: ['Apps'] }), /not a namespace name/);
  assert.throws(() => operatorManifests({ namespaces: ['apps'], clusterWide: true }), /either/);
  const env = (options: Parameters<typeof operatorManifests>[0]): string | undefined => {
    const deployment = operatorManifests(options).find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } } };
    return deployment.spec.template.spec.containers[0]!.env.find((e) => e.name === 'WATCH_NAMESPACES')?.value;
  };
  assert.equal(env({}), 'default');
  assert.equal(env({ namespaces: ['apps', 'web', 'apps'] }), 'apps,web');
  assert.equal(env({ clusterWide: true }), '');
});

test(`${SECURITY_FILE} prints the generated RBAC of both scopes as the generator writes it`, async () => {
  const committed = await readFile(join(packagesDir, '..', SECURITY_FILE), 'utf8');
  assert.equal(committed, withGeneratedRbac(committed), `${SECURITY_FILE} is stale: run node packages/etcd-operator/scripts/generate.ts`);
  const doc = rbacMarkdown();
  for (const role of [`Role \`${WATCH_ROLE}\` in \`default\``, `ClusterRole \`${NAME}\``, `ClusterRole \`${WEBHOOK_CLUSTER_ROLE}\``]) assert.ok(doc.includes(role), role);
});

test('install refuses a tenant namespace that does not exist, and clusters it would stop managing, naming what to pass', async () => {
  const clusters = [{ metadata: { namespace: 'default', name: 'a' } }, { metadata: { namespace: 'prod', name: 'b' } }];
  const fake = (namespaces: string[]): runtime.Client =>
    ({
      find: (_type: unknown, name: string) => Promise.resolve(namespaces.includes(name) ? { metadata: { name } } : undefined),
      list: () => Promise.resolve({ items: clusters }),
    }) as unknown as runtime.Client;
  await assert.rejects(install(fake(['default']), { namespaces: ['default', 'team-a'] }), /the tenant namespaces team-a do not exist: create them first/);
  await assert.rejects(install(fake(['default', 'prod'])), /EtcdClusters outside the tenant namespaces \(default\) would no longer be managed: prod\/b\. Install with --namespaces default,prod \(value namespaces\), or --cluster-wide/);
});
