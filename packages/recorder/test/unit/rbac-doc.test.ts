// docs/security.md prints the recorder's RBAC of both scopes line by line (issue 23's figures), generated from
// recorderManifests() by scripts/generate.ts: the committed copy must be what the code generates now, and the
// tables must hold every rule of every role the manifests bind, so a rule added to the manifests shows in the
// doc (or fails the generator, wanting its reason).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { METRICS_READER_CLUSTER_ROLE, recorderManifests } from '../../src/deploy/manifests.ts';
import { RBAC_BEGIN, RBAC_END, recorderRbacMarkdown, SECURITY_FILE, withGeneratedRecorderRbac } from '../../src/deploy/rbac-doc.ts';

const repoRoot = join(import.meta.dirname, '..', '..', '..', '..');

test(`${SECURITY_FILE}'s recorder RBAC tables are what the manifests generate now`, async () => {
  const committed = await readFile(join(repoRoot, SECURITY_FILE), 'utf8');
  assert.ok(committed.includes(RBAC_BEGIN) && committed.includes(RBAC_END), 'the markers are there');
  assert.equal(committed, withGeneratedRecorderRbac(committed), `${SECURITY_FILE} is stale: run node packages/recorder/scripts/generate.ts`);
});

test('every rule of every role the manifests bind has its line, in each scope; the namespaced one grants no recorded kind cluster-wide and no Secret read', () => {
  const [namespaced = '', clusterWide = ''] = recorderRbacMarkdown().split('**Cluster-wide**');
  for (const [table, options] of [[namespaced, { usersWebhook: true }], [clusterWide, { usersWebhook: true, clusterWide: true }]] as const) {
    const rules = recorderManifests(options)
      .filter((o) => (o.kind === 'Role' || o.kind === 'ClusterRole') && o.metadata.name !== METRICS_READER_CLUSTER_ROLE)
      .flatMap((o) => (o['rules'] as unknown[] | undefined) ?? []);
    const lines = table.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| object '));
    assert.equal(lines.length, rules.length, 'one line per rule');
  }
  const clusterRoleLines = namespaced.split('\n').filter((l) => l.startsWith('| ')).join('\n').split('| Role ')[0]!;
  assert.doesNotMatch(clusterRoleLines, /`(configmaps|deployments|namespaces)/, "the ClusterRole grants no recorded kind, nor Namespaces, namespaced");
  assert.doesNotMatch(namespaced, /`secrets` \| [^|]*\b(list|watch)\b/, 'no Secret is listed or watched by default');
  assert.match(clusterWide, /\| core \| `namespaces` \| list, watch \|/, 'cluster-wide, the selector needs Namespaces');
});
