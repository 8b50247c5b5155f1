// The ChangeRecorder API: the generated CRD and docs are current and structural, each CEL rule (evaluated by a
// CEL implementation, @marcbachmann/cel-js) agrees with its mirror in defaults.ts, and the defaults and the
// spec helpers do what the schema's descriptions say.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { evaluate } from '@marcbachmann/cel-js';
import { parse } from 'yaml';
import { DEFAULT_RESOURCES, OPTIONAL_DEFAULT_RESOURCES, RULES, type ChangeRecorderSpec } from '../../src/api/changerecorder.ts';
import { changeRecorderCRD, changeRecorderCRDYAML, CRD_FILE, GENERATE_COMMAND, PRINTER_COLUMNS, SCHEMA_DATA_FILE, schemaDataSource } from '../../src/api/crd.ts';
import { ChangeRecorderSpecSchemaData } from '../../src/api/schema-data.ts';
import { ChangeRecorderSpecSchema } from '../../src/api/schema.ts';
import { applyDefaults, excluder, maxAgeMs, selectorString, validateSpec } from '../../src/api/defaults.ts';
import { BEGIN, DOCS_FILE, END, apiReferenceMarkdown, withGeneratedReference } from '../../src/reference/api.ts';
import { requestedKinds } from '../../src/recorder/plan.ts';
import { describeTarget, storageTarget, storeLocationOf, targetName } from '../../src/store/target.ts';
import { applySchemaDefaults, type SchemaNode } from '@quorum/runtime/crd';

const packageDir = join(import.meta.dirname, '..', '..');
const repoRoot = join(packageDir, '..', '..');
const crd = changeRecorderCRD();
const root = crd.spec.versions[0]!.schema.openAPIV3Schema;

test('the committed CRD YAML and the API section of the docs are what the generator produces now', async () => {
  const committed = await readFile(join(packageDir, CRD_FILE), 'utf8').catch(() => '(missing)');
  assert.ok(committed === changeRecorderCRDYAML(), `${CRD_FILE} is stale: run ${GENERATE_COMMAND}`);
  assert.deepEqual(parse(committed), crd);
  const data = await readFile(join(packageDir, SCHEMA_DATA_FILE), 'utf8').catch(() => '(missing)');
  assert.ok(data === schemaDataSource(), `${SCHEMA_DATA_FILE} is stale: run ${GENERATE_COMMAND}`);
  assert.deepEqual(ChangeRecorderSpecSchemaData, JSON.parse(JSON.stringify(ChangeRecorderSpecSchema)), 'the data is the schema, as JSON');
  const doc = await readFile(join(repoRoot, DOCS_FILE), 'utf8');
  assert.ok(doc === withGeneratedReference(doc), `${DOCS_FILE} is stale: run ${GENERATE_COMMAND}`);
  assert.ok(doc.indexOf(BEGIN) < doc.indexOf(END));
  assert.equal(apiReferenceMarkdown(), apiReferenceMarkdown(), 'deterministic');
});

test('names, scope, subresources and printer columns', () => {
  assert.equal(crd.metadata.name, 'changerecorders.history.quorum.dev');
  assert.equal(crd.spec.scope, 'Cluster');
  assert.deepEqual(crd.spec.names.shortNames, ['recorder']);
  assert.deepEqual(crd.spec.versions[0]!.subresources, { status: {} });
  for (const column of PRINTER_COLUMNS) {
    const path = column.jsonPath.replace(/\[\?.*\]/, '').slice(1).split('.');
    if (path[0] === 'metadata') continue;
    let node: SchemaNode | undefined = root;
    for (const part of path) node = node?.items ? node.items.properties?.[part] : node?.properties?.[part];
    assert.ok(node, `${column.jsonPath} is in the schema`);
  }
});

test('the schema is structural where the API server checks it most', () => {
  const problems: string[] = [];
  const visit = (node: SchemaNode, path: string, underList: boolean): void => {
    if (!node.type) problems.push(`${path}: no type`);
    for (const { rule } of node['x-kubernetes-validations'] ?? []) {
      // Transition rules cannot correlate old and new values below a list that is not a map.
      if (rule.includes('oldSelf') && underList) problems.push(`${path}: transition rule under a list`);
    }
    if (node['x-kubernetes-list-type'] === 'map') {
      const item = node.items!;
      for (const key of node['x-kubernetes-list-map-keys'] ?? []) {
        const prop = item.properties?.[key];
        if (!prop || (!item.required?.includes(key) && prop.default === undefined)) problems.push(`${path}: map key ${key} is neither required nor defaulted`);
      }
    }
    for (const [name, child] of Object.entries(node.properties ?? {})) visit(child, `${path}.${name}`, underList);
    if (node.items) visit(node.items, `${path}[]`, underList || node['x-kubernetes-list-type'] !== 'map');
  };
  visit(root, '', false);
  assert.deepEqual(problems, []);
  assert.deepEqual(Object.keys(root.properties?.spec?.properties?.storage?.properties ?? {}).sort(), ['azure', 'gcs', 'path', 's3'], 'a directory or one of the object stores @quorum/storage drives');
});

// ---- CEL: each rule evaluated on the node it sits on, against the mirror in validateSpec ----

const NAMESPACES: Record<string, unknown>[] = [
  { names: ['a'] },
  { selector: { matchLabels: { team: 'x' } } },
  { all: true },
  { all: false },
  {},
  { names: ['a'], all: true },
  { names: ['a'], selector: {} },
];

function cel(rule: string, self: unknown, oldSelf?: unknown): boolean {
  return evaluate(rule, oldSelf === undefined ? { self } : { self, oldSelf }) === true;
}

test('spec.namespaces rules: exactly one of names, selector, all; all only true', () => {
  for (const namespaces of NAMESPACES) {
    const celErrors = [RULES.namespacesExactlyOne, RULES.allIsTrue].filter((r) => !cel(r.rule, namespaces)).map((r) => r.message);
    const codeErrors = validateSpec(applyDefaults({ namespaces })).filter((m) => m.startsWith('spec.namespaces'));
    assert.deepEqual(codeErrors, celErrors, JSON.stringify(namespaces));
  }
  assert.ok(cel(RULES.namespacesExactlyOne.rule, { names: ['a'] }));
  assert.ok(!cel(RULES.namespacesExactlyOne.rule, {}));
  assert.ok(!cel(RULES.allIsTrue.rule, { all: false }));
});

test('matchExpressions rule: values with In and NotIn only', () => {
  const cases = [
    { key: 'k', operator: 'In', values: ['a'] },
    { key: 'k', operator: 'In', values: [] },
    { key: 'k', operator: 'In' },
    { key: 'k', operator: 'NotIn', values: ['a'] },
    { key: 'k', operator: 'Exists' },
    { key: 'k', operator: 'Exists', values: [] },
    { key: 'k', operator: 'DoesNotExist', values: ['a'] },
  ];
  for (const expression of cases) {
    const celOk = cel(RULES.expressionValues.rule, expression);
    const spec = applyDefaults({ namespaces: { selector: { matchExpressions: [expression] } } } as ChangeRecorderSpec);
    const codeOk = !validateSpec(spec).includes(RULES.expressionValues.message);
    assert.equal(codeOk, celOk, JSON.stringify(expression));
  }
});

test('exclude rule: at least one field', () => {
  for (const entry of [{}, { kind: 'Secret' }, { group: '' }, { name: 'sh.helm.*' }]) {
    const celOk = cel(RULES.excludeNotEmpty.rule, entry);
    const codeOk = !validateSpec(applyDefaults({ namespaces: { all: true }, exclude: [entry] })).includes(RULES.excludeNotEmpty.message);
    assert.equal(codeOk, celOk, JSON.stringify(entry));
  }
  assert.ok(!cel(RULES.excludeNotEmpty.rule, {}));
});

test('storage is immutable', () => {
  assert.ok(cel(RULES.storageImmutable.rule, { path: 'a' }, { path: 'a' }));
  assert.ok(!cel(RULES.storageImmutable.rule, { path: 'b' }, { path: 'a' }));
  assert.ok(!cel(RULES.storageImmutable.rule, { path: 'a' }, {}));
  const s3 = { bucket: 'records', credentialsSecret: 's' };
  assert.ok(!cel(RULES.storageImmutable.rule, { s3 }, {}), 'moving to an object store is a change too');
});

test('storage rule: at most one of path, s3, gcs, azure', () => {
  const s3 = { bucket: 'records', credentialsSecret: 's' };
  const gcs = { bucket: 'records', credentialsSecret: 's' };
  const azure = { container: 'records', credentialsSecret: 's' };
  for (const storage of [{}, { path: 'a' }, { s3 }, { gcs }, { azure }, { path: 'a', s3 }, { s3, gcs }, { gcs, azure }, { path: 'a', s3, gcs, azure }]) {
    const celErrors = cel(RULES.storageAtMostOne.rule, storage) ? [] : [RULES.storageAtMostOne.message];
    const codeErrors = validateSpec(applyDefaults({ namespaces: { all: true }, storage })).filter((m) => m === RULES.storageAtMostOne.message);
    assert.deepEqual(codeErrors, celErrors, JSON.stringify(storage));
  }
  assert.ok(!cel(RULES.storageAtMostOne.rule, { path: 'a', s3 }));
});

test('defaults: the kinds left to the recorder, ten versions, secrets redacted, status changes ignored, storage at the name', () => {
  const spec = applyDefaults({ namespaces: { names: ['default'] } });
  // Which of Quorum's kinds are in the default depends on discovery: the API server leaves resources unset.
  assert.equal(spec.resources, undefined);
  assert.equal(root.properties!.spec!.properties!['resources']!.default, undefined, 'no default in the CRD');
  assert.deepEqual(requestedKinds(spec), { required: DEFAULT_RESOURCES, optional: OPTIONAL_DEFAULT_RESOURCES });
  assert.deepEqual(spec.retention, { maxVersionsPerObject: 10 });
  assert.equal(spec.secrets, 'redact');
  assert.equal(spec.ignoreStatusOnly, true);
  assert.deepEqual(storageTarget('team-a', spec), { path: 'team-a' });
  assert.deepEqual(storageTarget('team-a', applyDefaults({ namespaces: { all: true }, storage: { path: 'x/y' } })), { path: 'x/y' });
  assert.deepEqual(applyDefaults({ namespaces: { all: true }, resources: [{ kind: 'ConfigMap' }] }).resources, [{ group: '', kind: 'ConfigMap' }], 'group defaults to the core group');
  assert.deepEqual(applyDefaults({ namespaces: { all: true }, retention: { maxAge: '7d' } }).retention, { maxAge: '7d', maxVersionsPerObject: 10 }, 'nested defaults apply inside a given parent');
  const schemaDefaults = applySchemaDefaults(root.properties!.spec!, { namespaces: { all: true } });
  assert.deepEqual(applyDefaults({ namespaces: { all: true } }), schemaDefaults, 'the CRD and the code default alike');
});

test('storage paths, prefixes and maxAge are checked in code too: a path cannot leave the storage root', () => {
  for (const path of ['../x', 'a/../b', '/abs', 'a//b', '.', '.hidden']) {
    assert.ok(validateSpec(applyDefaults({ namespaces: { all: true }, storage: { path } })).some((m) => m.startsWith('spec.storage.path')), path);
    const s3 = { bucket: 'records', prefix: path, credentialsSecret: 's' };
    assert.ok(validateSpec(applyDefaults({ namespaces: { all: true }, storage: { s3 } })).some((m) => m.startsWith('spec.storage.s3.prefix')), path);
  }
  assert.deepEqual(validateSpec(applyDefaults({ namespaces: { all: true }, storage: { gcs: { bucket: 'records', prefix: 'clusters/prod', credentialsSecret: 's' } } })), []);
  assert.deepEqual(validateSpec(applyDefaults({ namespaces: { all: true }, storage: { path: 'team-a/records_1.v2' } })), []);
  assert.ok(validateSpec(applyDefaults({ namespaces: { all: true }, retention: { maxAge: '0d' } })).some((m) => m.startsWith('spec.retention.maxAge')));
  assert.equal(maxAgeMs('90m'), 90 * 60_000);
  assert.equal(maxAgeMs('12h'), 12 * 3_600_000);
  assert.equal(maxAgeMs('30d'), 30 * 86_400_000);
  assert.equal(maxAgeMs(undefined), undefined);
});

test('an object store target: its prefix defaults to the name, it is named by its URI, and its Secret is mounted below the credentials root', () => {
  const s3 = { bucket: 'records', endpoint: 'http://minio:9000', forcePathStyle: true, credentialsSecret: 'recorder-s3' };
  const target = storageTarget('team-a', applyDefaults({ namespaces: { all: true }, storage: { s3 } }));
  assert.deepEqual(target, { objectStore: { s3: { ...s3, prefix: 'team-a' } } });
  assert.equal(targetName(target), 's3://records/team-a');
  assert.equal(describeTarget(target, '/var/lib/quorum-recorder'), 's3://records/team-a at http://minio:9000');
  assert.deepEqual(storeLocationOf(target, { storageRoot: '/data', credentialsRoot: '/etc/creds' }), { objectStore: target.objectStore, credentialsDir: '/etc/creds/recorder-s3' });
  const azure = storageTarget('x', applyDefaults({ namespaces: { all: true }, storage: { azure: { container: 'history', prefix: 'a/b', credentialsSecret: 'az' } } }));
  assert.equal(targetName(azure), 'azure://history/a/b');
  assert.deepEqual(storeLocationOf({ path: 'team-a' }, { storageRoot: '/data', credentialsRoot: '/etc/creds' }), { directory: '/data/team-a' });
});

test('a label selector becomes the API server selector string', () => {
  assert.equal(
    selectorString({
      matchLabels: { team: 'a', tier: 'web' },
      matchExpressions: [
        { key: 'env', operator: 'In', values: ['prod', 'staging'] },
        { key: 'legacy', operator: 'NotIn', values: ['yes'] },
        { key: 'owner', operator: 'Exists' },
        { key: 'skip', operator: 'DoesNotExist' },
      ],
    }),
    'team=a,tier=web,env in (prod,staging),legacy notin (yes),owner,!skip',
  );
  assert.equal(selectorString({}), '');
});

test('exclude rules match every field they set; * in a name matches any run of characters', () => {
  const excluded = excluder([{ kind: 'Secret', name: 'sh.helm.release.v1.*' }, { namespace: 'kube-system' }, { group: 'apps', kind: 'Deployment', name: 'canary' }]);
  const id = (group: string, kind: string, namespace: string, name: string): { group: string; kind: string; namespace: string; name: string } => ({ group, kind, namespace, name });
  assert.ok(excluded(id('', 'Secret', 'default', 'sh.helm.release.v1.web.v3')));
  assert.ok(!excluded(id('', 'Secret', 'default', 'db-password')));
  assert.ok(!excluded(id('', 'ConfigMap', 'default', 'sh.helm.release.v1.web.v3')), 'the kind must match too');
  assert.ok(excluded(id('', 'ConfigMap', 'kube-system', 'anything')));
  assert.ok(excluded(id('apps', 'Deployment', 'default', 'canary')));
  assert.ok(!excluded(id('apps', 'Deployment', 'default', 'canary2')), 'names match whole');
  assert.ok(!excluder(undefined)(id('', 'Secret', 'a', 'b')));
  assert.ok(excluder([{ name: 'a.b' }])(id('', 'X', 'n', 'a.b')));
  assert.ok(!excluder([{ name: 'a.b' }])(id('', 'X', 'n', 'aXb')), 'a dot is a dot, not a regular-expression wildcard');
});
