// Uninstalling the operator leaves clusters running and reinstalling picks them up again; an invalid object that
// got in while validation was off (webhooks removed, CRD schema permissive) is reported by the operator, which
// changes nothing. The operator runs with only its generated RBAC throughout (it is deployed in-cluster).
// What this file needs, for the test harness (docs/testing.md):
// @exclusive operator
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client, CustomResourceDefinitions, MutatingWebhookConfigurations, PersistentVolumeClaims, Pods, ValidatingWebhookConfigurations, type KubeObject, type OpenObject, type ResourceType } from '@quorum/runtime';
import { etcdClusterCRD } from '../../src/api/crd.ts';
import type { TestEnv } from '@quorum/localkube/testing';
import { install, uninstall } from '../../src/deploy/install.ts';
import { EtcdClusters } from '../../src/resources.ts';
import { applyCluster, eventually, operatorImage, setUpOperator, waitAvailable } from './support.ts';

// Where install() puts the operator, and its pods' labels (deploy/manifests.ts).
const OPERATOR_NAMESPACE = 'quorum-system';
const OPERATOR_PODS = 'app.kubernetes.io/name=quorum,app.kubernetes.io/component=operator';

let env: TestEnv;
let ns: string;
before(async () => {
  env = await setUpOperator();
  ns = await env.namespace('uninstall');
});
after(() => env.stop());

const owned = async (client: Client, kind: ResourceType<KubeObject>, name: string): Promise<number> =>
  (await client.list(kind, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${name}` })).items.filter((o) => !o.metadata.deletionTimestamp).length;

test('uninstalling the operator leaves clusters running; reinstalling picks them up again', async () => {
  await applyCluster(env.client, ns, 'survivor', { replicas: 1 });
  await waitAvailable(env.client, ns, 'survivor', 1);
  const before = (await env.client.list(Pods, { namespace: ns, labelSelector: 'app.kubernetes.io/instance=survivor' })).items.map((p) => p.metadata.uid);
  await uninstall(env.client);
  // The positive signal: every operator pod is gone, so the operator has exited and can act no more, and
  // the garbage collector has processed the uninstall (Deployment, then ReplicaSet, then its pods).
  await eventually('the operator pods gone', async () => (await env.client.list(Pods, { namespace: OPERATOR_NAMESPACE, labelSelector: OPERATOR_PODS })).items.length === 0, { timeoutMs: 120_000 });
  const still = await env.client.list(Pods, { namespace: ns, labelSelector: 'app.kubernetes.io/instance=survivor' });
  assert.deepEqual(still.items.map((p) => p.metadata.uid), before, 'the same member pod keeps running');
  assert.ok(still.items.every((p) => !p.metadata.deletionTimestamp), 'and it is not being deleted');
  assert.ok(await env.client.find(EtcdClusters, { namespace: ns, name: 'survivor' }), 'the EtcdCluster stays');
  await install(env.client, { image: operatorImage, crashLoopGraceSeconds: 15, clusterWide: true });
  await env.client.mergePatch(EtcdClusters, { namespace: ns, name: 'survivor' }, { spec: { replicas: 3 } });
  await waitAvailable(env.client, ns, 'survivor', 3);
});

test('given an invalid object anyway (webhooks off, validation lost), the operator reports it and changes nothing', async () => {
  // An object that got in while validation was off: the webhooks removed, the CRD schema made permissive.
  for (const [type, name] of [[ValidatingWebhookConfigurations, 'quorum-etcd-validating'], [MutatingWebhookConfigurations, 'quorum-etcd-defaulting']] as const) {
    await env.client.delete(type, name).catch(() => undefined);
  }
  const crd = etcdClusterCRD() as unknown as OpenObject & { spec: { versions: { schema: { openAPIV3Schema: Record<string, unknown> } }[] } };
  const permissive = structuredClone(crd);
  permissive.spec.versions[0]!.schema.openAPIV3Schema = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  await env.client.apply(CustomResourceDefinitions, permissive, { fieldManager: 'e2e-test', force: true });
  try {
    await eventually('the invalid object accepted', async () => {
      await applyCluster(env.client, ns, 'invalid', { replicas: 0, version: 'latest' });
      return true;
    }, { timeoutMs: 30_000 });
    // The positive signal: the operator has reconciled this generation. An invalid spec is reported and
    // the reconcile returns before any step, so from here on nothing can have been created.
    const status = await eventually('InvalidSpec reported for the current generation', async () => {
      const c = await env.client.get(EtcdClusters, { namespace: ns, name: 'invalid' });
      const degraded = c.status?.conditions?.find((x) => x.type === 'Degraded');
      const seen = c.status?.observedGeneration === c.metadata.generation && degraded?.observedGeneration === c.metadata.generation;
      return seen && degraded?.status === 'True' && degraded.reason === 'InvalidSpec' ? c.status : undefined;
    }, { timeoutMs: 60_000 });
    assert.equal(status?.phase, 'Failed');
    assert.match(status?.conditions?.find((x) => x.type === 'Degraded')?.message ?? '', /spec\.replicas/);
    assert.equal(await owned(env.client, Pods, 'invalid'), 0, 'no pod was created');
    assert.equal(await owned(env.client, PersistentVolumeClaims, 'invalid'), 0, 'no claim was created');
    await env.client.delete(EtcdClusters, { namespace: ns, name: 'invalid' });
  } finally {
    await env.client.apply(CustomResourceDefinitions, crd, { fieldManager: 'e2e-test', force: true });
    await install(env.client, { image: operatorImage, crashLoopGraceSeconds: 15, clusterWide: true });
  }
});
