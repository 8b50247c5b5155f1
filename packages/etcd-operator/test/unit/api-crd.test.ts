import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CRD_FILE, etcdBackupScheduleCRD, etcdBackupScheduleCRDYAML, etcdClusterCRD, etcdClusterCRDYAML, etcdRestoreCRD, etcdRestoreCRDYAML, GENERATE_COMMAND, RESTORE_CRD_FILE, SCHEDULE_CRD_FILE, SCHEMA_DATA_FILE, schemaDataSource } from '../../src/api/crd.ts';
import { apiReferenceMarkdown, DOCS_FILE } from '../../src/reference/api.ts';
import { RULES } from '../../src/api/etcdcluster.ts';
import { storageVersion, toOpenAPI, validateAgainstSchema, type SchemaNode } from '@quorum/runtime/crd';

const packageDir = join(import.meta.dirname, '..', '..');
const repoRoot = join(packageDir, '..', '..');
const crd = etcdClusterCRD();
const version = crd.spec.versions[0];
assert.ok(version);
const root = version.schema.openAPIV3Schema;

test('the committed CRD YAML is what the generator produces now', async () => {
  const committed = await readFile(join(packageDir, CRD_FILE), 'utf8').catch(() => '(missing)');
  assert.ok(committed === etcdClusterCRDYAML(), `${CRD_FILE} is stale: run ${GENERATE_COMMAND}`);
  const data = await readFile(join(packageDir, SCHEMA_DATA_FILE), 'utf8').catch(() => '(missing)');
  assert.ok(data === schemaDataSource(), `${SCHEMA_DATA_FILE} is stale: run ${GENERATE_COMMAND}`);
  assert.deepEqual(parse(committed), crd, 'the YAML parses back to the CRD object');
});

test('the committed docs/api.md is what the generator produces now', async () => {
  const committed = await readFile(join(repoRoot, DOCS_FILE), 'utf8').catch(() => '(missing)');
  assert.ok(committed === apiReferenceMarkdown(), `${DOCS_FILE} is stale: run ${GENERATE_COMMAND}`);
});

test('generation is deterministic', () => {
  assert.equal(etcdClusterCRDYAML(), etcdClusterCRDYAML());
  assert.equal(apiReferenceMarkdown(), apiReferenceMarkdown());
});

test('names, scope, subresources and printer columns', () => {
  assert.equal(crd.metadata.name, 'etcdclusters.etcd.quorum.dev');
  assert.deepEqual(crd.spec.names, { kind: 'EtcdCluster', listKind: 'EtcdClusterList', plural: 'etcdclusters', singular: 'etcdcluster', shortNames: ['etcd'], categories: ['quorum'] });
  assert.equal(crd.spec.scope, 'Namespaced');
  assert.equal(crd.spec.group, 'etcd.quorum.dev');
  assert.deepEqual(crd.spec.versions.map((v) => [v.name, v.served, v.storage]), [['v1alpha1', true, true]]);
  assert.deepEqual(version.subresources, { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } });
  const columns = version.additionalPrinterColumns.filter((c) => !c.priority).map((c) => [c.name, c.jsonPath]);
  assert.deepEqual(columns, [
    ['Replicas', '.spec.replicas'],
    ['Ready', '.status.readyReplicas'],
    ['Version', '.status.currentVersion'],
    ['Phase', '.status.phase'],
    ['Age', '.metadata.creationTimestamp'],
  ]);
  // Every printer column and scale path points at a field the schema has.
  for (const path of [...version.additionalPrinterColumns.map((c) => c.jsonPath), '.spec.replicas', '.status.replicas']) {
    if (path === '.metadata.creationTimestamp') continue;
    let node: SchemaNode | undefined = root;
    for (const part of path.slice(1).split('.')) node = node?.properties?.[part];
    assert.ok(node?.type, `${path} is in the schema`);
  }
});

// ---- a structural-schema checker, after k8s.io/apiextensions-apiserver's validation of v1 CRDs ----

const ALLOWED = new Set([
  'description', 'type', 'format', 'title', 'default', 'nullable', 'enum', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum',
  'maxLength', 'minLength', 'pattern', 'maxItems', 'minItems', 'uniqueItems', 'multipleOf', 'maxProperties', 'minProperties', 'required',
  'items', 'allOf', 'oneOf', 'anyOf', 'not', 'properties', 'additionalProperties', 'externalDocs', 'example',
  'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string', 'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type', 'x-kubernetes-map-type', 'x-kubernetes-validations',
]);
const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
const JUNCTORS = ['allOf', 'anyOf', 'oneOf', 'not'] as const;

interface Context {
  inMetadata: boolean;
  /** Below an array that is not a map list: transition rules (oldSelf) cannot correlate old and new there. */
  uncorrelatable: boolean;
}

/** Every way `node` breaks the structural-schema rules, as `path: problem`. */
function structuralProblems(node: SchemaNode, path: string, ctx: Context, problems: string[]): void {
  const raw = node as Record<string, unknown>;
  const say = (problem: string): void => {
    problems.push(`${path || '<root>'}: ${problem}`);
  };
  for (const key of Object.keys(raw)) if (!ALLOWED.has(key)) say(`keyword ${key} is not allowed in a v1 CRD schema`);
  for (const key of ['$ref', '$schema', 'id', 'definitions', 'dependencies', 'additionalItems', 'patternProperties']) {
    if (key in raw) say(`${key} is forbidden`);
  }
  for (const symbol of Object.getOwnPropertySymbols(raw)) say(`leftover symbol key ${String(symbol)}`);
  if (raw.uniqueItems === true) say('uniqueItems: true is forbidden (use x-kubernetes-list-type: set)');
  if (raw.additionalProperties === false) say('additionalProperties: false is forbidden');
  const preserve = node['x-kubernetes-preserve-unknown-fields'];
  if (preserve !== undefined && preserve !== true) say('x-kubernetes-preserve-unknown-fields must be true or absent');
  const intOrString = raw['x-kubernetes-int-or-string'] === true;
  if (!node.type && !intOrString && preserve !== true) say('type must be set');
  if (node.type && !TYPES.has(node.type)) say(`unknown type ${node.type}`);
  if (node.properties && node.additionalProperties) say('properties and additionalProperties are mutually exclusive');
  if ((node.properties || node.additionalProperties) && node.type !== 'object') say('properties need type: object');
  if (node.type === 'array' && !node.items) say('an array must declare items');
  if (node.items && node.type !== 'array') say('items need type: array');
  if (raw['x-kubernetes-embedded-resource'] === true && node.type !== 'object') say('x-kubernetes-embedded-resource needs type: object');
  for (const junctor of JUNCTORS) {
    const branches = raw[junctor];
    for (const branch of (Array.isArray(branches) ? branches : branches ? [branches] : []) as Record<string, unknown>[]) {
      for (const key of ['description', 'type', 'default', 'additionalProperties', 'nullable']) if (key in branch) say(`${junctor} must not set ${key}`);
      for (const name of Object.keys(branch.properties ?? {})) if (!node.properties?.[name]) say(`${junctor} names ${name}, which is not declared outside it`);
    }
  }
  for (const required of node.required ?? []) if (!node.properties?.[required]) say(`required field ${required} is not declared`);
  for (const value of node.enum ?? []) {
    if (node.type && validateAgainstSchema({ type: node.type }, value, []).length > 0) say(`enum value ${JSON.stringify(value)} is not a ${node.type}`);
  }

  // Defaults are validated and pruned against their own schema, and never allowed in metadata.
  if (node.default !== undefined) {
    if (ctx.inMetadata) say('defaults are not allowed in metadata');
    const errors = validateAgainstSchema(node, node.default, []);
    for (const error of errors) say(`default ${JSON.stringify(node.default)} is invalid: ${error.message}`);
  }

  const listType = node['x-kubernetes-list-type'];
  if (listType !== undefined && node.type !== 'array') say('x-kubernetes-list-type needs type: array');
  if (node['x-kubernetes-list-map-keys'] !== undefined && listType !== 'map') say('x-kubernetes-list-map-keys needs x-kubernetes-list-type: map');
  if (listType === 'map') {
    const keys = node['x-kubernetes-list-map-keys'] ?? [];
    if (keys.length === 0) say('a map list needs x-kubernetes-list-map-keys');
    if (node.items?.type !== 'object') say('a map list needs object items');
    for (const key of keys) {
      const prop = node.items?.properties?.[key];
      if (!prop) say(`map key ${key} is not a property of the items`);
      else if (!['string', 'integer', 'number', 'boolean'].includes(prop.type ?? '')) say(`map key ${key} must be a scalar`);
      else if (!node.items?.required?.includes(key) && prop.default === undefined) say(`map key ${key} must be required or defaulted`);
    }
  }
  if (listType === 'set' && node.items && !['string', 'integer', 'number', 'boolean'].includes(node.items.type ?? '')) say('a set needs scalar items');

  for (const validation of node['x-kubernetes-validations'] ?? []) {
    if (!validation.rule.trim()) say('a CEL rule is empty');
    if (!validation.message.trim() || /[\r\n]/.test(validation.message)) say(`CEL rule ${validation.rule} needs a one-line message`);
    if (ctx.inMetadata) say('CEL rules are not allowed inside metadata');
    if (/\boldSelf\b/.test(validation.rule) && ctx.uncorrelatable) say(`transition rule ${validation.rule} sits below a list it cannot correlate through`);
  }

  for (const [name, child] of Object.entries(node.properties ?? {})) {
    structuralProblems(child, path ? `${path}.${name}` : name, ctx, problems);
  }
  if (node.additionalProperties) structuralProblems(node.additionalProperties, `${path}[*]`, ctx, problems);
  if (node.items) structuralProblems(node.items, `${path}[]`, { ...ctx, uncorrelatable: ctx.uncorrelatable || listType !== 'map' }, problems);
}

function checkStructural(schema: SchemaNode): string[] {
  const problems: string[] = [];
  if (schema.type !== 'object') problems.push('<root>: type must be object');
  if (schema['x-kubernetes-preserve-unknown-fields']) problems.push('<root>: preserves unknown fields, so unknown fields would not be rejected');
  const { metadata, ...rest } = schema.properties ?? {};
  if (metadata) {
    if (metadata.type !== 'object') problems.push('metadata: type must be object');
    for (const [key, value] of Object.entries(metadata)) {
      if (key === 'properties') continue;
      // The API server rejects anything but `type` here, a description included.
      if (key !== 'type') problems.push(`metadata: ${key} is not allowed on metadata`);
      void value;
    }
    for (const [name, prop] of Object.entries(metadata.properties ?? {})) {
      if (name !== 'name' && name !== 'generateName') problems.push(`metadata.${name}: only name and generateName may be restricted`);
      else structuralProblems(prop, `metadata.${name}`, { inMetadata: true, uncorrelatable: false }, problems);
    }
  }
  structuralProblems({ ...schema, properties: rest }, '', { inMetadata: false, uncorrelatable: false }, problems);
  return problems;
}

test('the CRD schema is structural', () => {
  assert.deepEqual(checkStructural(root), []);
});

test('the structural checker catches what it should', () => {
  const bad: SchemaNode = {
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
    properties: {
      metadata: { type: 'object', properties: { labels: { type: 'object' } } },
      a: { properties: { b: { type: 'string' } }, additionalProperties: { type: 'string' } },
      c: { type: 'array' },
      d: { type: 'array', items: { type: 'object', properties: { k: { type: 'string' } } }, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['k'] },
      e: { type: 'integer', default: 'three' },
      f: { type: 'array', items: { type: 'object', properties: { g: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'immutable' }] } } } },
      h: { type: 'string', ...({ patternProperties: {} } as object) },
    },
  };
  const problems = checkStructural(bad).join('\n');
  for (const expected of [
    'preserves unknown fields',
    'metadata.labels: only name and generateName',
    'a: type must be set',
    'a: properties and additionalProperties are mutually exclusive',
    'c: an array must declare items',
    'd: map key k must be required or defaulted',
    'e: default "three" is invalid',
    'f[].g: transition rule',
    'h: patternProperties is forbidden',
  ]) {
    assert.ok(problems.includes(expected), `expected "${expected}" in:\n${problems}`);
  }
});

/** Each node of the schema with its dotted path. */
function nodes(node: SchemaNode, path = ''): [string, SchemaNode][] {
  const out: [string, SchemaNode][] = [[path, node]];
  for (const [name, child] of Object.entries(node.properties ?? {})) out.push(...nodes(child, path ? `${path}.${name}` : name));
  if (node.items) out.push(...nodes(node.items, `${path}[]`));
  if (node.additionalProperties) out.push(...nodes(node.additionalProperties, `${path}[*]`));
  return out;
}

test('every field has a one-line description (kubectl explain)', () => {
  const missing = nodes(root)
    // metadata may carry no description (the API server forbids it); its own fields are the API server's.
    .filter(([path]) => path !== '' && path !== 'metadata' && !path.endsWith('[*]'))
    .filter(([, node]) => !node.description?.trim() || /[\r\n]/.test(node.description))
    .map(([path]) => path);
  assert.deepEqual(missing, []);
});

test('unknown fields are only kept inside the Kubernetes-typed pass-through objects', () => {
  const preserving = nodes(root)
    .filter(([, node]) => node['x-kubernetes-preserve-unknown-fields'])
    .map(([path]) => path);
  assert.deepEqual(preserving, [
    'spec.podTemplate.spec.affinity',
    'spec.podTemplate.spec.containerSecurityContext',
    'spec.podTemplate.spec.resources',
    'spec.podTemplate.spec.securityContext',
    'spec.podTemplate.spec.tolerations[]',
    'spec.podTemplate.spec.topologySpreadConstraints[]',
  ]);
});

test('the schema carries the constraints and defaults the API promises', () => {
  const spec = root.properties?.spec;
  const replicas = spec?.properties?.replicas;
  assert.deepEqual([replicas?.type, replicas?.minimum, replicas?.maximum, replicas?.default], ['integer', 1, 9, 3]);
  assert.equal(spec?.properties?.version?.default, '3.6.16');
  assert.equal(spec?.properties?.version?.pattern, '^3\\.(4|5|6)\\.\\d+$');
  assert.equal(spec?.properties?.antiAffinity?.default, 'Preferred');
  assert.deepEqual(spec?.properties?.antiAffinity?.enum, ['Required', 'Preferred', 'None']);
  assert.equal(spec?.properties?.paused?.default, false);
  assert.equal(spec?.properties?.storage?.properties?.reclaimPolicy?.default, 'Retain');
  const conditions = root.properties?.status?.properties?.conditions;
  assert.equal(conditions?.['x-kubernetes-list-type'], 'map');
  assert.deepEqual(conditions?.['x-kubernetes-list-map-keys'], ['type']);
  assert.deepEqual(conditions?.items?.required, ['lastTransitionTime', 'message', 'reason', 'status', 'type']);
  assert.deepEqual(root.properties?.status?.properties?.phase?.enum, ['Pending', 'Creating', 'Running', 'Scaling', 'Healing', 'Updating', 'Degraded', 'Paused', 'Failed']);
  assert.ok(root.properties?.status?.properties?.nextMemberIndex);
});

test('every CEL rule in the CRD is one of RULES (mirrored by validateSpec) and names its field', () => {
  const known = new Map(Object.values(RULES).map((r) => [r.rule, r.message]));
  const found = nodes(root).flatMap(([path, node]) => (node['x-kubernetes-validations'] ?? []).map((v) => ({ path, ...v })));
  // The destination rules go wherever a destination or its endpoints do (spec.bootstrap, spec.backup and
  // status.recovery); the others once.
  const shared = new Set([RULES.destinationExactlyOne.rule, RULES.endpointInCluster.rule]);
  assert.equal(found.filter((f) => !shared.has(f.rule)).length, Object.keys(RULES).length - shared.size, 'each rule is used exactly once');
  assert.equal(found.filter((f) => f.rule === RULES.endpointInCluster.rule).length, 9, 'every endpoint of the three destinations');
  for (const { path, rule, message } of found) {
    assert.equal(known.get(rule), message, `rule at ${path} is in RULES`);
    const named = shared.has(rule) ? path.split('.').at(-1)! : path;
    assert.ok(message.includes(named), `the message of the rule at ${path} names ${named}: ${message}`);
  }
  assert.match(RULES.storageImmutable.message, /storage is immutable/);
});

test('toOpenAPI rejects keywords a CRD cannot carry, and strips TypeBox symbols', () => {
  assert.throws(() => toOpenAPI({ type: 'object', properties: { a: { type: 'string', const: 'x' } as SchemaNode } }), /a: keyword const/);
  assert.throws(() => toOpenAPI({ type: 'object', patternProperties: {} }), /patternProperties/);
  const tagged = { type: 'string', [Symbol.for('TypeBox.Kind')]: 'String' } as SchemaNode;
  assert.deepEqual(Object.getOwnPropertySymbols(toOpenAPI(tagged)), []);
});

// ---- EtcdBackupSchedule and EtcdRestore ----

const otherKinds = [
  { file: SCHEDULE_CRD_FILE, crd: etcdBackupScheduleCRD(), yaml: etcdBackupScheduleCRDYAML, columns: ['Cluster', 'Schedule', 'Suspend', 'Last Success', 'Age'] },
  { file: RESTORE_CRD_FILE, crd: etcdRestoreCRD(), yaml: etcdRestoreCRDYAML, columns: ['Cluster', 'Backup', 'Phase', 'Age'] },
];

for (const kind of otherKinds) {
  const v = kind.crd.spec.versions[0]!;
  const kindRoot = v.schema.openAPIV3Schema;
  test(`${kind.crd.spec.names.kind}: the committed CRD YAML is fresh, structural, described, with its printer columns`, async () => {
    const committed = await readFile(join(packageDir, kind.file), 'utf8').catch(() => '(missing)');
    assert.ok(committed === kind.yaml(), `${kind.file} is stale: run ${GENERATE_COMMAND}`);
    assert.deepEqual(checkStructural(kindRoot), []);
    const undescribed = nodes(kindRoot)
      .filter(([path]) => path !== '' && path !== 'metadata' && !path.startsWith('metadata.') && !path.endsWith('[*]'))
      .filter(([, node]) => !node.description?.trim() || /[\r\n]/.test(node.description))
      .map(([path]) => path);
    assert.deepEqual(undescribed, []);
    assert.deepEqual(v.subresources, { status: {} });
    assert.deepEqual(v.additionalPrinterColumns.filter((c) => !c.priority).map((c) => c.name), kind.columns);
    for (const path of v.additionalPrinterColumns.map((c) => c.jsonPath)) {
      if (path === '.metadata.creationTimestamp') continue;
      let node: SchemaNode | undefined = kindRoot;
      for (const part of path.slice(1).split('.')) node = node?.properties?.[part];
      assert.ok(node?.type, `${path} is in the schema`);
    }
  });
}

test('EtcdRestore.spec.clusterSpec reuses the EtcdCluster schemas, without their transition rules', () => {
  const clusterSpec = storageVersion(etcdRestoreCRD()).schema.openAPIV3Schema.properties?.spec?.properties?.clusterSpec;
  const clusterRoot = root.properties?.spec;
  for (const field of ['replicas', 'version', 'storage']) {
    const { 'x-kubernetes-validations': _dropped, ...expected } = clusterRoot?.properties?.[field] ?? {};
    const { 'x-kubernetes-validations': rules, ...actual } = clusterSpec?.properties?.[field] ?? {};
    // version's description is about changing it on a running cluster; a restore sets it once.
    if (field === 'version') {
      assert.match(actual.description ?? '', /^etcd version of the new cluster's members/);
      delete actual.description;
      delete expected.description;
    }
    assert.deepEqual(actual, expected, field);
    assert.ok(!(rules ?? []).some((r) => r.rule.includes('oldSelf')), `${field} carries no transition rule`);
  }
});
