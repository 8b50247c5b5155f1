// The RBACDefinition API: the generated CRD, docs and Helm chart are current, the CRD is cluster-scoped with the
// FairwindsOps shape (rbacBindings at the top level), and the code mirror of the CEL rules says what they say.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { RULES, type RBACDefinition } from '../../src/api/rbacdefinition.ts';
import { CRD_FILE, GENERATE_COMMAND, rbacDefinitionCRD, rbacDefinitionCRDYAML } from '../../src/api/crd.ts';
import { DOCS_FILE, withGeneratedReference } from '../../src/reference/api.ts';
import { validateDefinition } from '../../src/api/validate.ts';
import { CHART_DIR, helmChart } from '../../src/deploy/helm.ts';

const packageDir = join(import.meta.dirname, '..', '..');
const repoRoot = join(packageDir, '..', '..');

test('the committed CRD YAML and the API section of docs/rbac.md are what the generator produces now', async () => {
  const committed = await readFile(join(packageDir, CRD_FILE), 'utf8').catch(() => '(missing)');
  assert.ok(committed === rbacDefinitionCRDYAML(), `${CRD_FILE} is stale: run ${GENERATE_COMMAND}`);
  assert.deepEqual(parse(committed), rbacDefinitionCRD());
  const doc = await readFile(join(repoRoot, DOCS_FILE), 'utf8');
  assert.ok(doc === withGeneratedReference(doc), `${DOCS_FILE} is stale: run ${GENERATE_COMMAND}`);
  for (const [file, content] of Object.entries(helmChart())) {
    const committedChart = await readFile(join(repoRoot, CHART_DIR, file), 'utf8').catch(() => '(missing)');
    assert.ok(committedChart === content, `${CHART_DIR}/${file} is stale: run ${GENERATE_COMMAND}`);
  }
});

test('the CRD: cluster-scoped, a status subresource, the bindings at the top level as FairwindsOps has them', () => {
  const crd = rbacDefinitionCRD();
  assert.equal(crd.spec.scope, 'Cluster');
  const version = crd.spec.versions[0]!;
  assert.deepEqual(version.subresources, { status: {} });
  const props = version.schema.openAPIV3Schema.properties!;
  assert.deepEqual(Object.keys(props).sort(), ['apiVersion', 'kind', 'metadata', 'rbacBindings', 'status']);
  const binding = props['rbacBindings']!.items as { properties: Record<string, unknown> };
  assert.deepEqual(Object.keys(binding.properties).sort(), ['clusterRoleBindings', 'expiresAfter', 'expiresAt', 'name', 'notBefore', 'roleBindings', 'subjects']);
});

test('the code mirror of the CEL rules refuses what they refuse, under the same messages', () => {
  const def = (rbacBindings: RBACDefinition['rbacBindings']): RBACDefinition => ({ metadata: { name: 'd' }, rbacBindings });
  const alice = { kind: 'User' as const, name: 'alice' };
  assert.deepEqual(validateDefinition(def([{ name: 'ok', subjects: [alice], roleBindings: [{ clusterRole: 'view', namespace: 'a' }], expiresAfter: '8h' }])), []);
  const errors = validateDefinition(
    def([
      { name: 'x', subjects: [{ kind: 'ServiceAccount', name: 'robot' }, { ...alice, imagePullSecrets: ['s'] }], roleBindings: [{ clusterRole: 'view', role: 'r', namespace: 'a' }, { clusterRole: 'view' }] },
      { name: 'x', subjects: [alice], expiresAt: '2026-01-01T00:00:00Z', expiresAfter: '1h', notBefore: '2026-02-01T00:00:00Z' },
      { name: 'y', subjects: [alice], expiresAfter: '1w' },
    ]),
  );
  for (const message of [RULES.serviceAccountNamespace.message, RULES.serviceAccountOnly.message, RULES.roleExactlyOne.message, RULES.namespaceExactlyOne.message, RULES.expiryAtMostOne.message, RULES.expiryAfterStart.message, 'binding names must be unique', 'is not a duration']) {
    assert.ok(errors.some((e) => e.includes(message)), `missing: ${message}\n${errors.join('\n')}`);
  }
});
