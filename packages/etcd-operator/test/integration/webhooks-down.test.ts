// While the operator is down (crashed, scaled to 0, mid-upgrade), nobody answers its admission webhooks. They
// are failurePolicy Ignore, so the edits a person needs to recover (`paused`, `replicas`) still go through,
// and the CRD's schema and CEL rules, which the API server enforces itself, still refuse invalid ones. What
// only a webhook checks (a cron expression) gets in, and the operator reports it once it is back.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive operator
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { V1DeploymentSpec, V1DeploymentStatus, V1EndpointSlice } from '@kubernetes/client-node';
import { MutatingWebhookConfigurations, Pods, ValidatingWebhookConfigurations, resource, type KubeObject } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import { versionChangeAllowed } from '../../src/api/defaults.ts';
import { DEFAULT_VERSION, RULES, SUPPORTED_MINOR_VERSIONS } from '../../src/api/etcdcluster.ts';
import { waitForWebhooks } from '../../src/deploy/install.ts';
import { NAME as OPERATOR, WEBHOOK_SERVICE } from '../../src/deploy/manifests.ts';
import { MUTATING_WEBHOOK, VALIDATING_WEBHOOK } from '../../src/deploy/manifests.ts';
import { EtcdBackupSchedules, EtcdClusters } from '../../src/resources.ts';
import { applyCluster, eventually, PLAINTEXT, setUpOperator, waitAvailable } from './support.ts';

type Deployment = KubeObject & { spec?: Pick<V1DeploymentSpec, 'replicas'>; status?: V1DeploymentStatus };
type EndpointSlice = KubeObject & Pick<V1EndpointSlice, 'endpoints'>;
const Deployments = resource<Deployment>('apps/v1', 'Deployment', 'deployments', true);
const EndpointSlices = resource<EndpointSlice>('discovery.k8s.io/v1', 'EndpointSlice', 'endpointslices', true);

const SYSTEM = 'quorum-system';
const operatorKey = { namespace: SYSTEM, name: OPERATOR };
const operatorPods = 'app.kubernetes.io/name=quorum,app.kubernetes.io/component=operator';

let env: TestEnv;
let ns: string;
before(async () => {
  env = await setUpOperator();
  ns = await env.namespace('webhooks-down');
});
after(() => env.stop());

async function scaleOperator(replicas: number): Promise<void> {
  await env.client.mergePatch(Deployments, operatorKey, { spec: { replicas } });
}

/** Down for certain: the Deployment reports no replica, no operator pod is left, and no endpoint can serve. */
async function waitOperatorDown(): Promise<void> {
  await eventually('the operator at 0 replicas with no webhook endpoint serving', async () => {
    const d = await env.client.get(Deployments, operatorKey);
    const s = d.status ?? {};
    const scaled = (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) && (s.replicas ?? 0) === 0 && (s.readyReplicas ?? 0) === 0;
    const pods = await env.client.list(Pods, { namespace: SYSTEM, labelSelector: operatorPods });
    const slices = await env.client.list(EndpointSlices, { namespace: SYSTEM, labelSelector: `kubernetes.io/service-name=${WEBHOOK_SERVICE}` });
    // A terminating pod's endpoint may still be `serving`, and kube-proxy uses those when none is ready.
    const serving = slices.items.flatMap((e) => e.endpoints ?? []).filter((e) => e.conditions?.ready !== false || e.conditions?.serving === true);
    return scaled && pods.items.length === 0 && serving.length === 0;
  }, { timeoutMs: 120_000, intervalMs: 500 });
}

/** Up again as `quorum install` judges it: every replica updated and available, and the webhooks answering. */
async function waitOperatorUp(replicas: number): Promise<void> {
  await eventually(`the operator back at ${replicas} available replicas`, async () => {
    const d = await env.client.get(Deployments, operatorKey);
    const s = d.status ?? {};
    return (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) && s.replicas === replicas && s.updatedReplicas === replicas && s.availableReplicas === replicas;
  }, { timeoutMs: 180_000, intervalMs: 500 });
  await waitForWebhooks(env.client, SYSTEM);
}

async function rejectedWith(patch: Record<string, unknown>, expected: (message: string) => boolean, what: string): Promise<void> {
  await assert.rejects(env.client.mergePatch(EtcdClusters, { namespace: ns, name: 'steady' }, { spec: patch }), (err: Error) => {
    assert.ok(expected(err.message), `${what}: refused, but with ${err.message}`);
    return true;
  });
}

test('with the operator scaled to 0, replicas and paused edits are accepted and invalid ones (a privileged or root podTemplate among them) are still refused', async () => {
  const badSchedule = {
    apiVersion: 'etcd.quorum.dev/v1alpha1',
    kind: 'EtcdBackupSchedule',
    metadata: { name: 'bad-cron', namespace: ns },
    spec: { clusterName: 'steady', schedule: '61 * * * *', destination: { s3: { bucket: 'quorum', credentialsSecret: 's3-credentials' } } },
  };
  await applyCluster(env.client, ns, 'steady', { ...PLAINTEXT, replicas: 1, version: DEFAULT_VERSION });
  await waitAvailable(env.client, ns, 'steady', 1);
  // A version two minors back: the CEL transition rule must refuse it (checked here, so the case stays valid).
  const skipped = `${SUPPORTED_MINOR_VERSIONS[0]}.0`;
  assert.equal(versionChangeAllowed(DEFAULT_VERSION, skipped), false, `${DEFAULT_VERSION} -> ${skipped} is a refused version change`);

  const original = (await env.client.get(Deployments, operatorKey)).spec?.replicas ?? 2;
  await scaleOperator(0);
  try {
    await waitOperatorDown();
    // The webhooks stay registered: the edits below pass because the API server fails open, not because
    // nothing is in the way.
    assert.ok(await env.client.find(ValidatingWebhookConfigurations, VALIDATING_WEBHOOK), 'the validating webhook is registered');
    assert.ok(await env.client.find(MutatingWebhookConfigurations, MUTATING_WEBHOOK), 'the mutating webhook is registered');

    const scaled = await env.client.mergePatch(EtcdClusters, { namespace: ns, name: 'steady' }, { spec: { replicas: 3 } });
    assert.equal(scaled.spec.replicas, 3, 'a replicas edit is accepted');
    const paused = await env.client.mergePatch(EtcdClusters, { namespace: ns, name: 'steady' }, { spec: { paused: true } });
    assert.equal(paused.spec.paused, true, 'a paused edit is accepted');

    await rejectedWith({ replicas: 11 }, (m) => /spec\.replicas/.test(m), 'replicas 11 (schema maximum)');
    await rejectedWith({ version: skipped }, (m) => m.includes(RULES.versionChange.message), `version ${skipped} (CEL transition rule)`);
    // Pod security is the CRD's too (issue 23, finding 6): with no webhook answering, a privileged or root
    // podTemplate is still refused, as an edit and as a new cluster, by the CEL rules' own messages.
    await rejectedWith({ podTemplate: { spec: { containerSecurityContext: { privileged: true } } } }, (m) => /containerSecurityContext must not set privileged: true/.test(m), 'a privileged podTemplate (CEL)');
    await assert.rejects(
      env.client.create(EtcdClusters, { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name: 'root', namespace: ns }, spec: { replicas: 1, podTemplate: { spec: { securityContext: { runAsUser: 0 } } } } }, { dryRun: true }),
      (err: Error) => {
        assert.match(err.message, /spec\.podTemplate\.spec\.securityContext must not run members as root/, `a root podTemplate: refused, but with ${err.message}`);
        return true;
      },
    );
    // The backup kinds' webhooks are skipped too: a cron expression the CRD cannot check gets in (the operator
    // reports it once back), while what the schema checks is refused either way.
    await env.client.create(EtcdBackupSchedules, badSchedule);
    await assert.rejects(env.client.create(EtcdBackupSchedules, { ...badSchedule, metadata: { name: 'bad-age', namespace: ns }, spec: { ...badSchedule.spec, schedule: '@daily', retention: { maxAge: '7d' } } }, { dryRun: true }), (err: Error) => {
      assert.match(err.message, /spec\.retention\.maxAge/, `maxAge 7d (schema pattern): refused, but with ${err.message}`);
      return true;
    });
    const stored = await env.client.get(EtcdClusters, { namespace: ns, name: 'steady' });
    assert.equal(stored.spec.replicas, 3, 'the refused edits changed nothing');
    assert.equal(stored.spec.version, DEFAULT_VERSION, 'the refused edits changed nothing');
  } finally {
    await scaleOperator(original);
  }
  await waitOperatorUp(original);

  // The operator acts on what was accepted while it was away: it reports the cluster paused at this generation.
  const seen = await eventually('Paused reported for the edits made while the operator was down', async () => {
    const c = await env.client.get(EtcdClusters, { namespace: ns, name: 'steady' });
    return c.status?.phase === 'Paused' && c.status.observedGeneration === c.metadata.generation ? c : undefined;
  }, { timeoutMs: 60_000 });
  assert.equal(seen.spec.replicas, 3);

  // The schedule that got in while the webhooks were down: the operator reports it with the parser's words,
  // the webhook now refuses another bad expression, and edits that leave it unchanged still pass (ratcheting).
  const key = { namespace: ns, name: badSchedule.metadata.name };
  const ready = await eventually('InvalidSchedule reported for the schedule admitted while the operator was down', async () => {
    const c = (await env.client.get(EtcdBackupSchedules, key)).status?.conditions?.find((x) => x.type === 'Ready');
    return c?.status === 'False' && c.reason === 'InvalidSchedule' ? c : undefined;
  }, { timeoutMs: 60_000 });
  assert.match(ready.message, /spec\.schedule "61 \* \* \* \*" is not a valid cron expression: Constraint error/);
  await assert.rejects(env.client.mergePatch(EtcdBackupSchedules, key, { spec: { schedule: '62 * * * *' } }), (err: Error) => {
    assert.match(err.message, /spec\.schedule "62 \* \* \* \*" is not a valid cron expression/, `a new bad schedule: refused, but with ${err.message}`);
    return true;
  });
  const suspended = await env.client.mergePatch(EtcdBackupSchedules, key, { spec: { suspend: true } });
  assert.equal(suspended.spec.suspend, true, 'an edit that leaves the bad schedule as it was is accepted');
  await env.client.delete(EtcdBackupSchedules, key);
  await env.client.delete(EtcdClusters, { namespace: ns, name: 'steady' });
});
