// The recorder's generated RBAC is exactly the calls its process makes, in the spirit of localkube's host
// prerequisites (host-prerequisites.test.ts): the sources are scanned for every API call the recorder's process
// makes (its own code, and the runtime and kit modules it starts), and the rules recorderManifests() generates
// for its ServiceAccount must grant each of them and nothing else: no verb without a call, no call without a
// verb. The CLI and the installer (src/cli, src/deploy) are left out: they run with the user's credentials.
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { Events, Leases, Namespaces, Secrets, SubjectAccessReviews, ValidatingWebhookConfigurations, type ResourceType } from '@quorum/runtime';
import { TokenReviews } from '../../src/history/access.ts';
import { HISTORY_PROXY_ROLE, METRICS_READER_CLUSTER_ROLE, NAME, recorderManifests, type RecordedKind } from '../../src/deploy/manifests.ts';
import { ChangeRecorders } from '../../src/resources.ts';
import { REDACTION_KEYS_SECRET } from '../../src/store/redaction-keys.ts';

const root = join(import.meta.dirname, '..', '..', '..', '..');
const RECORDED = '<recorded kinds>';

/** The client methods that are API calls, and the RBAC verb each needs. */
const METHOD_VERBS: Readonly<Record<string, string>> = {
  get: 'get',
  find: 'get',
  list: 'list',
  watch: 'watch',
  create: 'create',
  replace: 'update',
  update: 'update',
  mergePatch: 'patch',
  jsonPatch: 'patch',
  apply: 'patch',
  delete: 'delete',
};
/** Client methods that make no API call of a resource: the discovery documents are non-resource URLs every user may read. */
const NOT_CALLS = new Set(['close', 'observe']);

const CLIENT_CALL = /#?\bclient\s*\.\s*([A-Za-z]+)\(\s*([\w$.]*)/g;
const INFORMER = /new Informer(?:<[^>]*>)?\(\s*[\w$.#]+\s*,\s*([\w$.]+)|\.(?:informer|for|watches)\(\s*([\w$.]+)/g;
const STATUS_WRITE = /\bwriteStatus\(\s*[\w$.#]+\s*,\s*([\w$.]+)/g;

type Types = Readonly<Record<string, ResourceType | typeof RECORDED>>;

const groupOf = (t: ResourceType): string => (t.apiVersion.includes('/') ? t.apiVersion.slice(0, t.apiVersion.indexOf('/')) : '');
const keyOf = (t: ResourceType | typeof RECORDED, sub = ''): string => (t === RECORDED ? RECORDED : `${groupOf(t)}/${t.plural}${sub}`);

/** The `group/resource verb` calls in `source`, with the resource identifiers resolved through `types`; unknown ones are reported. */
function callsIn(source: string, types: Types): { calls: Set<string>; unknown: string[] } {
  const calls = new Set<string>();
  const unknown: string[] = [];
  const add = (ident: string, verb: string, sub = ''): void => {
    const type = types[ident];
    if (type === undefined) unknown.push(`${verb} on ${ident || '(no resource)'}`);
    else calls.add(`${keyOf(type, sub)} ${verb}`);
  };
  const code = source
    .split('\n')
    .filter((l) => !/^\s*(\/\/|\*|\/\*)/.test(l))
    .join('\n');
  for (const m of code.matchAll(CLIENT_CALL)) {
    if (NOT_CALLS.has(m[1]!)) continue;
    const verb = METHOD_VERBS[m[1]!];
    if (verb === undefined) unknown.push(`client.${m[1]!}()`);
    else add(m[2]!, verb);
  }
  for (const m of code.matchAll(INFORMER)) for (const verb of ['list', 'watch']) add(m[1] ?? m[2]!, verb);
  for (const m of code.matchAll(STATUS_WRITE)) add(m[1]!, 'patch', '/status');
  return { calls, unknown };
}

/** The recorder process's own sources: everything but the CLI and the installer. */
async function recorderSources(): Promise<string[]> {
  const files: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== 'cli' && entry.name !== 'deploy') await walk(full);
      else if (entry.isFile() && entry.name.endsWith('.ts')) files.push(full);
    }
  };
  await walk(join(root, 'packages/recorder/src'));
  return files.sort();
}

const RECORDER_TYPES: Types = { ChangeRecorders, Namespaces, TokenReviews, SubjectAccessReviews, Secrets, 'kind.type': RECORDED };

/**
 * The runtime and kit modules whose calls the recorder makes when its sources use them (the informers'
 * watcher, leader election, events, the kit's webhook serving), with what their resource identifiers are.
 */
const LIBRARY_CALLS: readonly { usedWhen: RegExp; file: string; types: Types }[] = [
  // The informers' list and watch are already counted where the recorder makes its informers; the watcher only lists and watches.
  { usedWhen: /new Informer|\.informer\(/, file: 'packages/runtime/src/watch/watcher.ts', types: { type: RECORDED } },
  { usedWhen: /\bleaderElection:/, file: 'packages/runtime/src/manager/leader-election.ts', types: { Leases } },
  { usedWhen: /\.eventRecorder\(/, file: 'packages/runtime/src/helpers/events.ts', types: { EventResource: Events } },
  { usedWhen: /\busersWebhookRunnable\(/, file: 'packages/runtime/src/webhook/serving-secret.ts', types: { Secrets } },
  // The kit publishes the CA into the recorder's one validating configuration.
  { usedWhen: /\busersWebhookRunnable\(/, file: 'packages/runtime/src/webhook/ca-bundle.ts', types: { type: ValidatingWebhookConfigurations } },
];

async function callsOfTheRecorder(): Promise<Set<string>> {
  const calls = new Set<string>();
  const problems: string[] = [];
  let all = '';
  for (const file of await recorderSources()) {
    const source = await readFile(file, 'utf8');
    all += source;
    const found = callsIn(source, RECORDER_TYPES);
    for (const c of found.calls) calls.add(c);
    for (const u of found.unknown) problems.push(`${relative(root, file)}: ${u}`);
  }
  for (const library of LIBRARY_CALLS.filter((l) => l.usedWhen.test(all))) {
    const found = callsIn(await readFile(join(root, library.file), 'utf8'), library.types);
    // The watcher's list and watch are of whatever the informer watches: counted above, per informer.
    if (library.file.endsWith('watcher.ts')) assert.deepEqual([...found.calls].sort(), [`${RECORDED} list`, `${RECORDED} watch`], 'the watcher lists and watches, nothing else');
    else for (const c of found.calls) calls.add(c);
    for (const u of found.unknown) problems.push(`${library.file}: ${u}`);
  }
  assert.deepEqual(problems, [], 'calls the scan cannot place: add their resource to the tables above');
  return calls;
}

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };

/** The `group/resource verb` grants of every Role and ClusterRole bound to the recorder's ServiceAccount. */
function grantsOf(objects: readonly Record<string, unknown>[], recordedPlurals: ReadonlySet<string>): Set<string> {
  const grants = new Set<string>();
  for (const o of objects) {
    const name = (o['metadata'] as { name: string }).name;
    // The metrics reader role is the scrapers', bound to nothing of the recorder's.
    if ((o['kind'] !== 'Role' && o['kind'] !== 'ClusterRole') || name === HISTORY_PROXY_ROLE || name === METRICS_READER_CLUSTER_ROLE) continue;
    for (const rule of o['rules'] as Rule[]) {
      for (const g of rule.apiGroups) for (const r of rule.resources) for (const v of rule.verbs) grants.add(`${recordedPlurals.has(`${g}/${r}`) ? RECORDED : `${g}/${r}`} ${v}`);
    }
  }
  return grants;
}

const KINDS: RecordedKind[] = [{ group: '', kind: 'ConfigMap' }, { group: 'apps', kind: 'Deployment' }, { group: 'rbac.authorization.k8s.io', kind: 'ClusterRole', namespaced: false }];
const PLURALS = new Set(['/configmaps', 'apps/deployments', 'rbac.authorization.k8s.io/clusterroles']);

test('the scan finds the calls of a fixture, and names those it cannot place', () => {
  const fixture = [
    "const review = await this.#client.create(TokenReviews, { spec: {} });",
    'const inf = new Informer<OpenObject>(client, kind.type, { namespace });',
    "await writeStatus(deps.client, ChangeRecorders, key, previous, status, {});",
    '// client.delete(Secrets, key) in a comment is no call',
    'await client.delete(Pods, key);',
    'await client.request("GET", "/apis");',
  ].join('\n');
  const found = callsIn(fixture, RECORDER_TYPES);
  assert.deepEqual([...found.calls].sort(), [`${RECORDED} list`, `${RECORDED} watch`, 'authentication.k8s.io/tokenreviews create', 'history.quorum.dev/changerecorders/status patch']);
  assert.deepEqual(found.unknown, ['delete on Pods', 'client.request()']);
});

test('the namespaced RBAC grants exactly the calls the recorder makes (Namespaces aside, for selectors only)', async () => {
  const calls = await callsOfTheRecorder();
  const objects = recorderManifests({ usersWebhook: true, kinds: KINDS, recordedNamespaces: ['team-a', 'team-b'] }) as Record<string, unknown>[];
  // The Namespace watch runs only for spec.namespaces.selector, which needs the cluster-wide install.
  const expected = [...calls].filter((c) => !c.startsWith('/namespaces ')).sort();
  assert.deepEqual([...grantsOf(objects, PLURALS)].sort(), expected);
});

test('the cluster-wide RBAC grants exactly the calls the recorder makes', async () => {
  const calls = await callsOfTheRecorder();
  const objects = recorderManifests({ usersWebhook: true, kinds: KINDS, clusterWide: true }) as Record<string, unknown>[];
  assert.deepEqual([...grantsOf(objects, PLURALS)].sort(), [...calls].sort());
});

test('the recorded kinds are granted only where recorded: a Role per namespace, cluster-scoped kinds and cluster-wide installs in the ClusterRole', () => {
  const namespaced = recorderManifests({ kinds: KINDS, recordedNamespaces: ['team-b', 'team-a', 'team-a'] }) as (Record<string, unknown> & { metadata: { name: string; namespace?: string } })[];
  const roles = namespaced.filter((o) => o['kind'] === 'Role' && o.metadata.name === 'quorum-recorder-recorded');
  assert.deepEqual(roles.map((r) => r.metadata.namespace), ['team-a', 'team-b']);
  assert.deepEqual(roles[0]!['rules'], [
    { apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch'] },
    { apiGroups: ['apps'], resources: ['deployments'], verbs: ['list', 'watch'] },
  ]);
  const clusterRole = namespaced.find((o) => o['kind'] === 'ClusterRole' && o.metadata.name === NAME)!;
  const clusterResources = (clusterRole['rules'] as Rule[]).flatMap((r) => r.resources);
  assert.deepEqual(clusterResources, ['changerecorders', 'changerecorders/status', 'tokenreviews', 'subjectaccessreviews', 'clusterroles'], 'no namespaced kind and no Namespaces cluster-wide');
  const reader = namespaced.find((o) => o.metadata.name === METRICS_READER_CLUSTER_ROLE);
  assert.deepEqual(reader?.['rules'], [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }], "the scrapers' role: get on /metrics, nothing else");
  const secretReads = namespaced.filter((o) => o !== reader).flatMap((o) => ((o['rules'] as (Rule & { resourceNames?: string[] })[] | undefined) ?? []).filter((r) => r.resources.includes('secrets') && r.verbs.some((v) => v !== 'create')));
  assert.deepEqual(secretReads, [{ apiGroups: [''], resources: ['secrets'], resourceNames: [REDACTION_KEYS_SECRET], verbs: ['get', 'patch'] }], 'no Secret read by default but its own keys');
  assert.throws(() => recorderManifests({ clusterWideRequiredBy: ['spec.namespaces.all'] }), /--cluster-wide/);
});
