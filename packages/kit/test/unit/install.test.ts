// The kit's installer against a fake API server: the order objects are written in, a CRD awaited until
// Established before anything after it, a published caBundle applied back, bounded waits that say what they
// awaited, and a removal that keeps what it is told to keep and takes webhook configurations first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiError, ValidatingWebhookConfigurations, WaitTimeoutError, type Client, type KubeObject, type ResourceType } from '@quorum/runtime';
import { applyManifests, manifestType, removeManifests, rolledOut, waitCaBundlesPublished, waitRolledOut } from '../../src/index.ts';

const crd: KubeObject = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'things.example.com' } };
const sa: KubeObject = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'op', namespace: 'ops' } };
const deployment: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'op', namespace: 'ops' } };
const webhookConfig = (caBundles: (string | undefined)[]): KubeObject & { webhooks: { name: string; clientConfig: { caBundle?: string } }[] } => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  metadata: { name: 'op-validating' },
  webhooks: caBundles.map((ca, i) => ({ name: `w${i}.example.com`, clientConfig: ca ? { caBundle: ca } : {} })),
});

interface Fake {
  client: Client;
  calls: string[];
  applied: { obj: KubeObject; options: Record<string, unknown> }[];
}

/** A fake API server: `gets` answers a get by kind (a function of how many times that kind was read). */
function fake(gets: Record<string, (looks: number) => unknown> = {}, finds: Record<string, unknown> = {}, missing: string[] = []): Fake {
  const calls: string[] = [];
  const applied: Fake['applied'] = [];
  const looks = new Map<string, number>();
  const client = {
    apply: (type: ResourceType, obj: KubeObject, options: Record<string, unknown>) => {
      calls.push(`apply ${type.kind} ${obj.metadata.name}`);
      applied.push({ obj, options });
      return Promise.resolve(obj);
    },
    get: (type: ResourceType, key: unknown) => {
      const n = (looks.get(type.kind) ?? 0) + 1;
      looks.set(type.kind, n);
      calls.push(`get ${type.kind}`);
      const answer = gets[type.kind];
      return answer ? Promise.resolve(answer(n)) : Promise.reject(apiError('GET', `/${type.plural}/${JSON.stringify(key)}`, 404, { reason: 'NotFound', message: `${type.kind} not found` }));
    },
    find: (type: ResourceType) => Promise.resolve(structuredClone(finds[type.kind])),
    delete: (type: ResourceType, key: { namespace: string; name: string }) => {
      calls.push(`delete ${type.kind} ${key.name}`);
      return missing.includes(type.kind) ? Promise.reject(apiError('DELETE', '/x', 404, { reason: 'NotFound' })) : Promise.resolve();
    },
  } as unknown as Client;
  return { client, calls, applied };
}

const established = (after: number) => (n: number) => ({ ...crd, status: { conditions: [{ type: 'Established', status: n >= after ? 'True' : 'False' }] } });

test('objects are applied in order, forced, with the given field manager and validation; a CRD is Established before the next object', async () => {
  const f = fake({ CustomResourceDefinition: established(3) });
  const lines: string[] = [];
  await applyManifests(f.client, [crd, sa, deployment], { fieldManager: 'test-install', fieldValidation: 'Strict', log: (l) => lines.push(l) });
  assert.deepEqual(f.calls, [
    'apply CustomResourceDefinition things.example.com',
    'get CustomResourceDefinition',
    'get CustomResourceDefinition',
    'get CustomResourceDefinition',
    'apply ServiceAccount op',
    'apply Deployment op',
  ]);
  assert.ok(f.applied.every((a) => a.options['fieldManager'] === 'test-install' && a.options['force'] === true && a.options['fieldValidation'] === 'Strict'));
  assert.deepEqual(lines, ['applied CustomResourceDefinition things.example.com', 'applied ServiceAccount ops/op', 'applied Deployment ops/op']);
});

test('a CRD never Established ends the install within its bound, naming the CRD', async () => {
  const f = fake({ CustomResourceDefinition: established(Infinity) });
  const started = Date.now();
  await assert.rejects(applyManifests(f.client, [crd, sa], { fieldManager: 'm', establishTimeoutMs: 400 }), (err: Error) => {
    assert.ok(err instanceof WaitTimeoutError);
    assert.match(err.message, /^timed out after 0 s waiting for CustomResourceDefinition things\.example\.com to be established$/);
    return true;
  });
  assert.ok(Date.now() - started < 2000, 'bounded');
  assert.ok(!f.calls.includes('apply ServiceAccount op'), 'nothing after the CRD is applied');
});

test('a webhook configuration is applied with the caBundle its operator published, webhook by webhook', async () => {
  const f = fake({}, { ValidatingWebhookConfiguration: { ...webhookConfig(['Q0E=', undefined]), webhooks: [{ name: 'w1.example.com', clientConfig: {} }, { name: 'w0.example.com', clientConfig: { caBundle: 'Q0E=' } }] } });
  const manifest = webhookConfig([undefined, undefined]);
  await applyManifests(f.client, [manifest], { fieldManager: 'm' });
  const sent = f.applied[0]!.obj as ReturnType<typeof webhookConfig>;
  assert.deepEqual(sent.webhooks.map((w) => w.clientConfig.caBundle), ['Q0E=', undefined], 'matched by name, not position');
  assert.equal(manifest.webhooks[0]!.clientConfig.caBundle, undefined, 'the manifest itself is not changed');
  await applyManifests(fake().client, [webhookConfig([undefined])], { fieldManager: 'm' }); // none in the cluster yet: applied as it is
});

test('a kind no operator ships is refused by name; a known kind keeps the manifest’s apiVersion', () => {
  assert.throws(() => manifestType({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }), /install: no resource for Pod p/);
  assert.deepEqual(manifestType({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'b' } }), { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', plural: 'poddisruptionbudgets', namespaced: true });
});

test('rolled out as kubectl rollout status judges it, and the wait for it is bounded and says why', async () => {
  const d = (status: Record<string, number>, generation = 2) => ({ metadata: { generation }, spec: { replicas: 2 }, status });
  assert.equal(rolledOut(d({ observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 2, readyReplicas: 2 })), true);
  assert.equal(rolledOut(d({ observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 2, readyReplicas: 2 })), false, 'the new generation not observed yet');
  assert.equal(rolledOut(d({ observedGeneration: 2, replicas: 3, updatedReplicas: 2, availableReplicas: 2, readyReplicas: 2 })), false, 'an old pod left');
  assert.equal(rolledOut(d({ observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 1, readyReplicas: 1 })), false, 'one not available');

  const rolling = fake({ Deployment: (n) => d({ observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: n >= 2 ? 2 : 1, readyReplicas: n >= 2 ? 2 : 1 }) });
  await waitRolledOut(rolling.client, { namespace: 'ops', name: 'op' }, { intervalMs: 10 });
  assert.equal(rolling.calls.length, 2);
  await assert.rejects(waitRolledOut(fake().client, { namespace: 'ops', name: 'op' }, { timeoutMs: 300, intervalMs: 50 }), /^WaitTimeoutError: timed out after 0 s waiting for the Deployment ops\/op to roll out: GET .*Deployment not found$/);
});

test('the published CA is awaited until every webhook carries one', async () => {
  const f = fake({ ValidatingWebhookConfiguration: (n) => webhookConfig(n >= 3 ? ['Q0E=', 'Q0E='] : ['Q0E=', undefined]) });
  await waitCaBundlesPublished(f.client, ValidatingWebhookConfigurations, 'op-validating', { intervalMs: 10 });
  assert.equal(f.calls.length, 3);
  await assert.rejects(waitCaBundlesPublished(fake({ ValidatingWebhookConfiguration: () => webhookConfig([undefined]) }).client, ValidatingWebhookConfigurations, 'op-validating', { timeoutMs: 200, intervalMs: 50 }), /waiting for the webhook CA to be published in ValidatingWebhookConfiguration op-validating$/);
});

test('removal takes webhook configurations first, then the rest in reverse, keeps the kinds named, and an object already gone is no error', async () => {
  const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ops' } };
  const f = fake({}, {}, ['ServiceAccount']);
  const lines: string[] = [];
  const removed = await removeManifests(f.client, [ns, crd, sa, webhookConfig([]), deployment], { keep: ['Namespace', 'CustomResourceDefinition'], log: (l) => lines.push(l) });
  assert.deepEqual(f.calls, ['delete ValidatingWebhookConfiguration op-validating', 'delete Deployment op', 'delete ServiceAccount op']);
  assert.deepEqual(removed.map((o) => o.kind), ['ValidatingWebhookConfiguration', 'Deployment']);
  assert.deepEqual(lines, ['removed ValidatingWebhookConfiguration op-validating', 'removed Deployment ops/op']);

  const refusing = { delete: () => Promise.reject(apiError('DELETE', '/x', 403, { reason: 'Forbidden', message: 'no' })) } as unknown as Client;
  await assert.rejects(removeManifests(refusing, [sa]), /403 Forbidden: no/);
});
