// Each Redis's NetworkPolicy: port by port, against the labels of the pods the code makes (instances, Sentinels,
// backup Jobs, the operator's Deployment); spec.network.clientsFrom in place of the namespace; kept only where the
// Redis controls it (made when absent, as on an upgrade; applied when changed; never someone else's; deleted with
// policy: false); the clientsFrom selector rule in CEL and in code; the RBAC for it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evaluate } from '@marcbachmann/cel-js';
import { AlreadyExistsError, type KubeObject, type NetworkPolicy } from '@quorum/runtime';
import { applyDefaults, validateSpec } from '../../src/api/defaults.ts';
import { RULES } from '../../src/api/redis.ts';
import { backupJob } from '../../src/backup/job.ts';
import { operatorManifests, RULES as RBAC } from '../../src/deploy/manifests.ts';
import { instancePod, sentinelPod, type Rendering } from '../../src/render/objects.ts';
import { networkPolicy } from '../../src/render/network-policy.ts';
import { reconcileNetworkPolicy } from '../../src/reconcile/network-policy.ts';
import type { ReconcilerDeps } from '../../src/reconcile/deps.ts';

const rendering = (spec: unknown = {}): Rendering => ({ redis: { name: 'cache', namespace: 'shop', uid: 'u-1' }, spec: applyDefaults(spec), image: 'quorum.dev/redis:7.0.15', auth: { secretName: 'cache-auth', key: 'password' } });
const OPTIONS = { operatorNamespace: 'quorum-system' };

type Peer = { namespaceSelector?: { matchLabels?: Record<string, string> }; podSelector?: { matchLabels?: Record<string, string> } };
type Rule = { from: Peer[]; ports: { port: number; protocol: string }[] };
const labelsOf = (o: unknown): Record<string, string> => (o as { metadata: { labels: Record<string, string> } }).metadata.labels;
const selects = (selector: { matchLabels?: Record<string, string> } | undefined, labels: Record<string, string>): boolean => Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v);

/** Whether a pod with `labels` in `namespace` may connect to `port` of the Redis in `shop` (matchLabels only, as the code writes them). */
function admitted(policy: NetworkPolicy, port: number, namespace: string, labels: Record<string, string>): boolean {
  return ((policy.spec?.ingress ?? []) as unknown as Rule[]).some((rule) =>
    rule.ports.some((p) => p.port === port && p.protocol === 'TCP') &&
    rule.from.some((peer) => (peer.namespaceSelector ? selects(peer.namespaceSelector, { 'kubernetes.io/metadata.name': namespace }) : namespace === 'shop') && selects(peer.podSelector, labels)),
  );
}

test('instances on 6379 and Sentinels on 26379, each from its own peers, against the labels of the pods the code makes', () => {
  const r = rendering();
  const policy = networkPolicy(r, OPTIONS);
  const instance = labelsOf(instancePod(r, 'cache-1', 'h'));
  const sentinel = labelsOf(sentinelPod(r, 'cache-sentinel-0', 'h'));
  assert.ok(selects(policy.spec!.podSelector, instance) && selects(policy.spec!.podSelector, sentinel), 'the policy selects instances and Sentinels');
  assert.deepEqual(policy.spec?.policyTypes, ['Ingress']);
  const job = labelsOf((backupJob({ metadata: { name: 'nightly', namespace: 'shop', uid: 'b-1' }, spec: { redisName: 'cache', destination: { pvc: { claimName: 'c' } } } }, { attempt: 1, instance: 'cache-1', host: 'h', redis: 'cache', auth: { secretName: 's', key: 'password' }, agentImage: 'a' }) as unknown as { spec: { template: unknown } }).spec.template);
  const deployment = operatorManifests().find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { metadata: { labels: Record<string, string> } } } };
  const operator = deployment.spec.template.metadata.labels;
  const otherJob = { ...job, 'redis.quorum.dev/redis': 'other' };
  const table: [string, string, Record<string, string>, boolean, boolean][] = [
    // who, namespace, labels, 6379, 26379
    ['an instance', 'shop', instance, true, true],
    ['a Sentinel', 'shop', sentinel, true, true],
    ['the operator', 'quorum-system', operator, true, true],
    ['this Redis\'s backup Job', 'shop', job, true, true],
    ['any pod of the namespace (clientsFrom unset)', 'shop', { app: 'web' }, true, true],
    ['a pod of another namespace', 'elsewhere', { app: 'web' }, false, false],
    ['pods labelled as the operator elsewhere', 'elsewhere', operator, false, false],
    ['another Redis\'s backup Job elsewhere', 'elsewhere', otherJob, false, false],
  ];
  for (const [who, ns, labels, redis, sentinels] of table) {
    assert.equal(admitted(policy, 6379, ns, labels), redis, `${who} on 6379`);
    assert.equal(admitted(policy, 26379, ns, labels), sentinels, `${who} on 26379`);
  }
  assert.equal(admitted(policy, 8080, 'shop', instance), false, 'no other port');
  assert.equal(policy.metadata?.ownerReferences?.[0]?.uid, 'u-1');
  assert.equal(policy.metadata?.ownerReferences?.[0]?.controller, true);
});

test('clientsFrom replaces the namespace for clients: [] admits only the Redis, the operator and (on 6379) its backup Jobs', () => {
  const r = rendering({ network: { clientsFrom: [{ namespaceSelector: { matchLabels: { team: 'shop' } }, podSelector: { matchLabels: { role: 'api' } } }] } });
  const policy = networkPolicy(r, OPTIONS);
  const rules = policy.spec?.ingress as unknown as Rule[];
  assert.deepEqual(rules.map((x) => x.from.at(-1)), [{ namespaceSelector: { matchLabels: { team: 'shop' } }, podSelector: { matchLabels: { role: 'api' } } }, { namespaceSelector: { matchLabels: { team: 'shop' } }, podSelector: { matchLabels: { role: 'api' } } }]);
  assert.equal(admitted(policy, 6379, 'shop', { app: 'web' }), false, 'the namespace is no longer admitted as such');
  const none = networkPolicy(rendering({ network: { clientsFrom: [] } }), OPTIONS).spec?.ingress as unknown as Rule[];
  assert.deepEqual(none.map((x) => x.from.length), [3, 2]);
});

interface FakeWrites {
  created: KubeObject[];
  applied: KubeObject[];
  deleted: string[];
}

function fakeDeps(cached: KubeObject | undefined, existing?: KubeObject): { deps: ReconcilerDeps; writes: FakeWrites } {
  const writes: FakeWrites = { created: [], applied: [], deleted: [] };
  const client = {
    create: (_t: unknown, obj: KubeObject) => (existing ? Promise.reject(new AlreadyExistsError('POST', '/networkpolicies', 409, { reason: 'AlreadyExists', message: 'exists' })) : (writes.created.push(obj), Promise.resolve(obj))),
    get: () => Promise.resolve(existing),
    apply: (_t: unknown, obj: KubeObject) => (writes.applied.push(obj), Promise.resolve(obj)),
    delete: (_t: unknown, key: { name: string }) => (writes.deleted.push(key.name), Promise.resolve()),
  };
  const deps = { client, networkPolicies: { store: { get: () => cached } } } as unknown as ReconcilerDeps;
  return { deps, writes };
}

const REF = { name: 'cache', namespace: 'shop', uid: 'u-1' };
const signal = new AbortController().signal;
const ours = (over: Record<string, unknown> = {}): KubeObject => ({ ...(networkPolicy(rendering(), OPTIONS) as KubeObject), ...over });
const foreign = (): KubeObject => ({ ...ours(), metadata: { name: 'cache', namespace: 'shop', ownerReferences: [{ apiVersion: 'v1', kind: 'Redis', name: 'cache', uid: 'someone-else', controller: true }] } });

test('kept only where this Redis controls it: made when absent (a Redis from before the upgrade too), applied when changed, nothing when equal', async () => {
  const absent = fakeDeps(undefined);
  assert.match((await reconcileNetworkPolicy(absent.deps, REF, applyDefaults({}), signal) as { done: string }).done, /created the NetworkPolicy cache/);
  assert.deepEqual(absent.writes.created.map((o) => o.metadata.name), ['cache']);

  const same = fakeDeps(ours());
  assert.equal(await reconcileNetworkPolicy(same.deps, REF, applyDefaults({}), signal), undefined);
  assert.deepEqual([same.writes.created, same.writes.applied], [[], []]);

  const changed = fakeDeps(ours());
  const spec = applyDefaults({ network: { clientsFrom: [] } });
  assert.match((await reconcileNetworkPolicy(changed.deps, REF, spec, signal) as { done: string }).done, /updated/);
  assert.equal(changed.writes.applied.length, 1);
});

test('a policy of someone else\'s at its name is never changed or deleted: reported; policy: false deletes only its own', async () => {
  // In the cache (labelled like ours, but another controller), and found only by the create (no labels of ours).
  for (const { deps, writes } of [fakeDeps(foreign()), fakeDeps(undefined, foreign())]) {
    const outcome = await reconcileNetworkPolicy(deps, REF, applyDefaults({}), signal);
    assert.match((outcome as { conflict: string }).conflict, /a NetworkPolicy named cache that this Redis does not control is in the way/);
    assert.deepEqual([writes.applied, writes.deleted], [[], []]);
  }
  // Found by the create, and ours after all (the cache had not seen it yet): applied.
  const late = fakeDeps(undefined, ours());
  assert.equal(await reconcileNetworkPolicy(late.deps, REF, applyDefaults({}), signal), undefined);

  const off = applyDefaults({ network: { policy: false } });
  const own = fakeDeps(ours());
  assert.match((await reconcileNetworkPolicy(own.deps, REF, off, signal) as { done: string }).done, /deleted the NetworkPolicy cache/);
  assert.deepEqual(own.writes.deleted, ['cache']);
  const theirs = fakeDeps(foreign());
  assert.equal(await reconcileNetworkPolicy(theirs.deps, REF, off, signal), undefined);
  assert.deepEqual(theirs.writes.deleted, []);
});

test('clientsFrom selectors: In and NotIn need values, Exists and DoesNotExist take none, in CEL and in the operator alike', () => {
  const cases: [unknown, boolean][] = [
    [{ podSelector: { matchExpressions: [{ key: 'role', operator: 'In', values: ['api'] }] } }, true],
    [{ podSelector: { matchExpressions: [{ key: 'role', operator: 'In' }] } }, false],
    [{ namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'Exists', values: ['x'] }] } }, false],
    [{ namespaceSelector: { matchLabels: { team: 'shop' } } }, true],
  ];
  for (const [peer, ok] of cases) {
    assert.equal(evaluate(RULES.selectorValues.rule, { self: peer }), ok, JSON.stringify(peer));
    assert.equal(validateSpec(applyDefaults({ network: { clientsFrom: [peer] } })).includes(RULES.selectorValues.message), !ok, JSON.stringify(peer));
  }
  assert.match(RULES.selectorValues.message, /^spec\.network\.clientsFrom\[\]/);
  assert.ok(RBAC.some((r) => r.apiGroups.includes('networking.k8s.io') && ['list', 'watch', 'create', 'patch', 'delete'].every((v) => r.verbs.includes(v))));
});
