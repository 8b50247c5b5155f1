// docs/security.md prints the Redis operator's RBAC of both scopes line by line (issue 23's figures), generated from
// operatorManifests() by scripts/generate.ts: the committed copy must be what the code generates now, with one line
// per rule of every role the manifests bind (a rule added to the manifests shows, or stops the generator for want
// of its reason).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { METRICS_READER_CLUSTER_ROLE, operatorManifests } from '../../src/deploy/manifests.ts';
import { RBAC_BEGIN, RBAC_END, redisRbacMarkdown, SECURITY_FILE, withGeneratedRedisRbac } from '../../src/deploy/rbac-doc.ts';

const repoRoot = join(import.meta.dirname, '..', '..', '..', '..');

test(`${SECURITY_FILE}'s Redis RBAC tables are what the manifests generate now`, async () => {
  const committed = await readFile(join(repoRoot, SECURITY_FILE), 'utf8');
  assert.ok(committed.includes(RBAC_BEGIN) && committed.includes(RBAC_END), 'the markers are there');
  assert.equal(committed, withGeneratedRedisRbac(committed), `${SECURITY_FILE} is stale: run node packages/redis-operator/scripts/generate.ts`);
});

test('every rule of every role the manifests bind has its line, in each scope; namespaced, the tenant rules are a Role', () => {
  const [namespaced = '', clusterWide = ''] = redisRbacMarkdown().split('**Cluster-wide**');
  for (const [table, options] of [[namespaced, {}], [clusterWide, { clusterWide: true }]] as const) {
    const rules = operatorManifests(options)
      .filter((o) => (o.kind === 'Role' || o.kind === 'ClusterRole') && o.metadata.name !== METRICS_READER_CLUSTER_ROLE)
      .flatMap((o) => (o as { rules?: unknown[] }).rules ?? []);
    assert.equal(table.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| object ')).length, rules.length, 'one line per rule');
  }
  assert.match(namespaced, /\| Role `quorum-redis-operator` in `default` \|/);
  assert.doesNotMatch(namespaced, /\| ClusterRole `quorum-redis-operator` \|/);
  assert.match(clusterWide, /\| ClusterRole `quorum-redis-operator` \|/);
  assert.match(namespaced, /\| core \| `nodes` \| list, watch \|/, 'Nodes read only, in every scope');
});
