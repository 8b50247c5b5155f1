// docs/security.md prints the RBAC manager's own RBAC line by line (issue 23's figures), generated from
// rbacManagerManifests() by scripts/generate.ts: the committed copy must be what the code generates now, with one
// line per rule of every role the manifests bind, as shipped and with --bindable-role.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { METRICS_READER_CLUSTER_ROLE, rbacManagerManifests } from '../../src/deploy/manifests.ts';
import { RBAC_BEGIN, RBAC_END, rbacManagerRbacMarkdown, SECURITY_FILE, withGeneratedRbacManagerRbac } from '../../src/deploy/rbac-doc.ts';

const repoRoot = join(import.meta.dirname, '..', '..', '..', '..');

test(`${SECURITY_FILE}'s RBAC manager tables are what the manifests generate now`, async () => {
  const committed = await readFile(join(repoRoot, SECURITY_FILE), 'utf8');
  assert.ok(committed.includes(RBAC_BEGIN) && committed.includes(RBAC_END), 'the markers are there');
  assert.equal(committed, withGeneratedRbacManagerRbac(committed), `${SECURITY_FILE} is stale: run node packages/rbac-manager/scripts/generate.ts`);
});

test('every rule of every role the manifests bind has its line; bind is narrowed by --bindable-role; no escalate', () => {
  const [shipped = '', narrowed = ''] = rbacManagerRbacMarkdown().split('**With `--bindable-role');
  for (const [table, options] of [[shipped, {}], [narrowed, { bindableRoles: ['edit', 'view'] }]] as const) {
    const rules = rbacManagerManifests(options)
      .filter((o) => (o.kind === 'Role' || o.kind === 'ClusterRole') && o.metadata.name !== METRICS_READER_CLUSTER_ROLE)
      .flatMap((o) => (o as { rules?: unknown[] }).rules ?? []);
    assert.equal(table.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| object ')).length, rules.length, 'one line per rule');
  }
  assert.match(shipped, /\| `clusterroles, roles` \| bind \| {2}\|/, 'as shipped, bind on any role');
  assert.match(narrowed, /\| `clusterroles, roles` \| bind \| `edit`, `view` \|/);
  assert.doesNotMatch(shipped, /escalate \|/);
});
