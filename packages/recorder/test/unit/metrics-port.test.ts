// The recorder's /metrics is HTTPS behind TokenReview + SubjectAccessReview by default (issue 23, finding 9), on
// a port of its own: every container port distinct (the API server refuses a Deployment that repeats one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recorderManifests } from '../../src/deploy/manifests.ts';
import { configFromEnv, METRICS_PORT } from '../../src/operator/config.ts';

test('secure metrics on by default on a port none of the others use; METRICS_PORT=0 turns it off', () => {
  assert.equal(configFromEnv({}).metricsPort, METRICS_PORT);
  assert.equal(configFromEnv({ METRICS_PORT: '0' }).metricsPort, 0);
  const deployment = recorderManifests({ usersWebhook: true }).find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: { containers: { ports: { name: string; containerPort: number }[] }[] } } } };
  const ports = deployment.spec.template.spec.containers[0]!.ports;
  assert.equal(ports.find((p) => p.name === 'metrics')?.containerPort, METRICS_PORT);
  assert.equal(new Set(ports.map((p) => p.containerPort)).size, ports.length, `distinct ports: ${JSON.stringify(ports)}`);
});
