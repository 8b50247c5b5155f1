// The operator's RBAC against the calls its code makes (as the etcd operator's test/unit/rbac.test.ts does): every
// API call in the sources the operator process loads (from src/operator/main.ts, following its imports), with the
// library code it reaches that calls the API on a Redis's behalf (TLS Secrets, credentials checks, events), is
// scanned for its resource and verb; each must be granted by RULES, the rules of each tenant namespace (or, for the
// cluster-scoped access reviews, by METRICS_AUTH_RULES; the cordoned Nodes by NODE_RULES), and each
// verb of RULES must be used. Then the scopes: a Role and RoleBinding per tenant namespace by default, a
// ClusterRole only when asked for, kube-system refused, and the operator process told which namespaces to watch.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import * as runtime from '@quorum/runtime';
import type { KubeObject } from '@quorum/runtime';
import { parseRedisArgs } from '../../src/cli/commands.ts';
import { METRICS_AUTH_RULES, NAME, NODE_RULES, operatorManifests, RULES } from '../../src/deploy/manifests.ts';
import { configFromEnv } from '../../src/operator/config.ts';
import * as redisResources from '../../src/resources.ts';

const packageDir = resolve(import.meta.dirname, '../..');
const packagesDir = resolve(packageDir, '..');

/** A resource type constant's API group and plural, by the name the sources use. */
const TYPES = new Map<string, { group: string; plural: string }>();
for (const [name, value] of Object.entries({ ...runtime, ...redisResources })) {
  const v = value as { apiVersion?: unknown; plural?: unknown; kind?: unknown };
  if (typeof v === 'object' && v !== null && typeof v.apiVersion === 'string' && typeof v.plural === 'string' && typeof v.kind === 'string') {
    TYPES.set(name, { group: v.apiVersion.includes('/') ? v.apiVersion.slice(0, v.apiVersion.indexOf('/')) : '', plural: v.plural });
  }
}

/** The verbs of each function the sources call with a resource type; any other function with one fails the scan. */
const VERBS: Record<string, readonly string[]> = {
  get: ['get'],
  find: ['get'],
  list: ['list'],
  create: ['create'],
  replace: ['update'],
  delete: ['delete'],
  mergePatch: ['patch'],
  writeStatus: ['patch'],
  // Server-side apply: a patch, and a create when the object does not exist yet.
  apply: ['create', 'patch'],
  applyIfChanged: ['create', 'patch'],
  informer: ['list', 'watch'],
  for: ['list', 'watch'],
  owns: ['list', 'watch'],
  watches: ['list', 'watch'],
};
const STATUS_WRITERS = new Set(['writeStatus']);
/** keepOwned: created, read when the create finds one at the name, applied (a patch), deleted when not wanted. */
const OWNED_OBJECT_VERBS = ['get', 'create', 'patch', 'delete'];

/** Library code that calls the API in a tenant namespace, and the call in the operator's sources that reaches it. */
const LIBRARY_CALLS: [trigger: string, files: string[]][] = [
  // The kit's schedule reconciler, bound to this operator's kinds (see SCHEDULE_KIND_TYPES).
  ['backupScheduleReconciler(', ['kit/src/backup-schedule-reconcile.ts']],
  ['eventRecorder(', ['runtime/src/helpers/events.ts']],
  ['readManagedSecrets(', ['kit/src/tls/secrets.ts']],
  ['checkCredentials(', ['kit/src/backup-credentials.ts']],
];

/**
 * The kit's schedule reconciler calls the API through its kind's types (`kind.backups`, `kind.schedules`): the
 * types this operator's binding gives it (src/schedule/reconcile.ts) stand in for them in the scan.
 */
const SCHEDULE_KIND_TYPES: Record<string, string> = { 'kind.backups': 'RedisBackups', 'kind.schedules': 'RedisBackupSchedules' };
const bindKindTypes = (text: string): string => Object.entries(SCHEDULE_KIND_TYPES).reduce((t, [generic, type]) => t.replaceAll(generic, type), text);

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

/** The calls `source` makes, as `group/resource verb`, and calls with a resource type through an unknown function. */
function usesIn(source: string): { uses: string[]; unknown: string[] } {
  const text = code(source);
  const uses: string[] = [];
  const unknown: string[] = [];
  // A typed alias of a resource type: const EventResource = resource<KubeEvent>(Events.apiVersion, …).
  const aliases = new Map<string, string>();
  for (const m of text.matchAll(/const (\w+) = resource<[^>]*>\((\w+)\.apiVersion/g)) aliases.set(m[1]!, m[2]!);
  for (const m of text.matchAll(/\b([A-Za-z_$][\w$]*)\s*(?:<[^()]*?>)?\(\s*(?:[\w.#]+\s*,\s*)?([A-Z]\w*)\b(?!\s*[.(<])/g)) {
    const [, fn, typeName] = m as unknown as [string, string, string];
    const type = TYPES.get(aliases.get(typeName) ?? typeName);
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
  // keepOwned (src/reconcile/owned-objects.ts) takes its type in an object: `keepOwned(deps, { type: NetworkPolicies, …`.
  for (const m of text.matchAll(/\b(keepOwned)\s*\(\s*[\w.]+\s*,\s*\{\s*type:\s*([A-Z]\w*)/g)) {
    const type = TYPES.get(m[2]!);
    if (type) for (const verb of OWNED_OBJECT_VERBS) uses.push(`${type.group}/${type.plural} ${verb}`);
  }
  for (const m of text.matchAll(/\brequest(?:<[^>]*>)?\(\s*'(GET|POST|PUT|PATCH|DELETE)',\s*`([^`]+)`/g)) {
    const [, method, path] = m as unknown as [string, string, string];
    const parts = /^\/(?:api\/v1|apis\/([^/]+)\/[^/]+)\/(?:namespaces\/[^/]+\/)?([a-z]+)(\/[^/]+)?(\/[a-z]+)?$/.exec(path);
    if (!parts) {
      unknown.push(`request ${method} ${path}`);
      continue;
    }
    const [, group = '', plural, name, sub = ''] = parts;
    uses.push(`${group}/${plural}${sub} ${{ GET: name ? 'get' : 'list', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' }[method]!}`);
  }
  return { uses, unknown };
}

async function operatorUses(): Promise<{ uses: Map<string, string[]>; unknown: string[]; triggersMissing: string[] }> {
  const texts = new Map(await Promise.all((await operatorSources()).map(async (f) => [f, await readFile(f, 'utf8')] as const)));
  const operatorCode = [...texts.values()].map(code).join('\n');
  const triggersMissing = LIBRARY_CALLS.filter(([trigger]) => !operatorCode.includes(trigger)).map(([trigger]) => trigger);
  for (const [, files] of LIBRARY_CALLS) for (const f of files) texts.set(join(packagesDir, f), bindKindTypes(await readFile(join(packagesDir, f), 'utf8')));
  const uses = new Map<string, string[]>();
  const unknown: string[] = [];
  for (const [file, text] of texts) {
    const found = usesIn(text);
    for (const use of found.uses) uses.set(use, [...new Set([...(uses.get(use) ?? []), relative(packagesDir, file)])]);
    unknown.push(...found.unknown.map((u) => `${relative(packagesDir, file)}: ${u}`));
  }
  return { uses, unknown, triggersMissing };
}

const granted = (rules: readonly { apiGroups: string[]; resources: string[]; verbs: string[] }[]): Set<string> =>
  new Set(rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}/${res} ${v}`)))));

test('every call the operator makes in a tenant namespace is granted by RULES, and every verb of RULES is used', async () => {
  const { uses, unknown, triggersMissing } = await operatorUses();
  assert.deepEqual(triggersMissing, [], 'a library call listed here is no longer made: drop it from LIBRARY_CALLS');
  assert.deepEqual(unknown, [], 'calls with a resource type through a function the scan does not know: add it to VERBS');
  const rules = granted(RULES);
  // The access reviews of a backup's credentials Secret are cluster-scoped: the metrics-auth ClusterRole's, every
  // install's; so are the cordoned Nodes (the nodes ClusterRole's).
  const clusterScoped = granted([...METRICS_AUTH_RULES, ...NODE_RULES]);
  const ungranted = [...uses].filter(([use]) => !rules.has(use) && !clusterScoped.has(use)).map(([use, files]) => `${use} (${files.join(', ')})`);
  assert.deepEqual(ungranted, [], 'calls without a rule');
  assert.deepEqual([...rules, ...granted(NODE_RULES)].filter((rule) => !uses.has(rule)), [], 'verbs granted that no call uses');
});

type Rbac = KubeObject & { rules?: unknown; roleRef?: { kind: string; name: string }; subjects?: { name: string; namespace: string }[] };
const tenantRbac = (objects: KubeObject[]): Rbac[] => objects.filter((o) => o.metadata.name === NAME && /Role/.test(o.kind ?? ''));
const env = (objects: KubeObject[], name: string): string | undefined =>
  (objects.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } } }).spec.template.spec.containers[0]!.env.find((e) => e.name === name)?.value;

test('by default the install is namespace-scoped: a Role and RoleBinding with RULES in `default` only, the operator watching it', () => {
  const objects = operatorManifests();
  assert.deepEqual(tenantRbac(objects).map((o) => `${o.kind}/${o.metadata.namespace}`), ['Role/default', 'RoleBinding/default']);
  assert.ok(!objects.some((o) => o.kind === 'ClusterRole' && o.metadata.name === NAME), 'no ClusterRole of the tenant rules');
  assert.equal(env(objects, 'WATCH_NAMESPACES'), 'default');
  assert.deepEqual(configFromEnv({ WATCH_NAMESPACES: 'default' }).watchNamespaces, ['default']);
});

test('each tenant namespace gets the same Role and a RoleBinding to the operator; the webhook selects them only', () => {
  const objects = operatorManifests({ namespaces: ['shop', 'cart', 'shop'] });
  const rbac = tenantRbac(objects);
  assert.deepEqual(rbac.map((o) => `${o.kind}/${o.metadata.namespace}`), ['Role/shop', 'RoleBinding/shop', 'Role/cart', 'RoleBinding/cart']);
  for (const role of rbac.filter((o) => o.kind === 'Role')) assert.deepEqual(role.rules, RULES);
  for (const binding of rbac.filter((o) => o.kind === 'RoleBinding')) {
    assert.deepEqual([binding.roleRef?.kind, binding.roleRef?.name], ['Role', NAME]);
    assert.deepEqual(binding.subjects?.map((s) => `${s.namespace}/${s.name}`), [`quorum-system/${NAME}`]);
  }
  assert.equal(env(objects, 'WATCH_NAMESPACES'), 'shop,cart');
  assert.deepEqual(configFromEnv({ WATCH_NAMESPACES: 'shop,cart' }).watchNamespaces, ['shop', 'cart']);
  const config = objects.find((o) => o.kind === 'ValidatingWebhookConfiguration') as unknown as { webhooks: { namespaceSelector?: unknown }[] };
  for (const w of config.webhooks) assert.deepEqual(w.namespaceSelector, { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['shop', 'cart'] }] });
  // watchNamespace, the former option, is one tenant namespace.
  assert.deepEqual(tenantRbac(operatorManifests({ watchNamespace: 'shop' })).map((o) => `${o.kind}/${o.metadata.namespace}`), ['Role/shop', 'RoleBinding/shop']);
});

test('cluster-wide only when asked for: a ClusterRole with RULES, every namespace watched, the webhook selecting all', () => {
  const objects = operatorManifests({ clusterWide: true });
  assert.deepEqual(tenantRbac(objects).map((o) => `${o.kind}/${o.metadata.namespace ?? ''}`), ['ClusterRole/', 'ClusterRoleBinding/']);
  assert.deepEqual(tenantRbac(objects)[0]!.rules, RULES);
  assert.equal(env(objects, 'WATCH_NAMESPACES'), '');
  assert.deepEqual(configFromEnv({ WATCH_NAMESPACES: '' }).watchNamespaces, []);
  const config = objects.find((o) => o.kind === 'ValidatingWebhookConfiguration') as unknown as { webhooks: { namespaceSelector?: unknown }[] };
  assert.ok(config.webhooks.every((w) => w.namespaceSelector === undefined));
});

test('kube-system, an empty list, a bad name and two scopes at once are refused with what to do instead', () => {
  assert.throws(() => operatorManifests({ namespaces: ['apps', 'kube-system'] }), /kube-system is refused: .*give the namespaces its Redises go in/);
  assert.throws(() => operatorManifests({ watchNamespace: 'kube-system' }), /kube-system is refused/);
  assert.throws(() => operatorManifests({ namespaces: [] }), /at least one namespace .*--cluster-wide/);
  assert.throws(() => operatorManifests({ namespaces: ['Apps'] }), /"Apps" is not a namespace name/);
  assert.throws(() => operatorManifests({ namespaces: ['apps'], clusterWide: true }), /not both/);
  assert.throws(() => operatorManifests({ watchNamespace: 'apps', clusterWide: true }), /not two of them/);
});

test('the CLI: --namespaces a,b, --cluster-wide and --ca-rotation-overlap-seconds N', () => {
  assert.deepEqual(parseRedisArgs(['install', '--namespaces', 'shop, cart']).manifest, { namespaces: ['shop', 'cart'] });
  assert.deepEqual(parseRedisArgs(['manifests', '--cluster-wide']).manifest, { clusterWide: true });
  assert.deepEqual(parseRedisArgs(['install', '--ca-rotation-overlap-seconds', '3600']).manifest, { caRotationOverlapSeconds: 3600 });
  assert.throws(() => parseRedisArgs(['install', '--ca-rotation-overlap-seconds', '1.5']), { name: 'UsageError', message: '--ca-rotation-overlap-seconds 1.5: not a whole number' });
  assert.deepEqual(parseRedisArgs(['install']).manifest, {}, 'the default: namespace-scoped, `default`');
});
