// The manager's /metrics is HTTPS behind TokenReview + SubjectAccessReview by default (issue 23, finding 9):
// its port, the reviews it may create, and the reader role a scraper is bound to.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { METRICS_READER_CLUSTER_ROLE, NAME, rbacManagerManifests } from '../../src/deploy/manifests.ts';
import { clusterRules } from '../../src/deploy/rbac.ts';
import { configFromEnv, METRICS_PORT } from '../../src/operator/config.ts';

test('secure metrics on by default on 8443; METRICS_PORT=0 turns it off', () => {
  assert.equal(configFromEnv({}).metricsPort, METRICS_PORT);
  assert.equal(configFromEnv({ METRICS_PORT: '0' }).metricsPort, 0);
});

test('the manager may create both reviews; the reader role grants get on /metrics and is bound to nothing', () => {
  const rules = clusterRules();
  assert.ok(rules.some((r) => r.apiGroups.includes('authentication.k8s.io') && r.resources.includes('tokenreviews') && r.verbs.join() === 'create'));
  assert.ok(rules.some((r) => r.apiGroups.includes('authorization.k8s.io') && r.resources.includes('subjectaccessreviews') && r.verbs.join() === 'create'));
  const objects = rbacManagerManifests();
  const reader = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === METRICS_READER_CLUSTER_ROLE) as { rules?: unknown } | undefined;
  assert.deepEqual(reader?.rules, [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
  assert.ok(!objects.some((o) => (o as { roleRef?: { name?: string } }).roleRef?.name === METRICS_READER_CLUSTER_ROLE));
  const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === NAME) as unknown as { spec: { template: { spec: { containers: { ports: { name: string; containerPort: number }[] }[] } } } };
  assert.deepEqual(deployment.spec.template.spec.containers[0]!.ports.find((p) => p.name === 'metrics'), { name: 'metrics', containerPort: METRICS_PORT });
});
