// A node drain as a planned change: the PodDisruptionBudgets a drain's evictions meet (the primary never evicted
// while it is the primary, one replica at a time, a Sentinel majority kept; disjoint selectors, since the eviction
// API refuses a pod two budgets select), and the planner moving the primary off a cordoned node to a serving
// replica on another node (Sentinel FAILOVER, or FAILOVER TO without Sentinels), ahead of other changes; with no
// replica to take over, a DrainBlocked wait that says why instead of nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyDefaults } from '../../src/api/defaults.ts';
import { FAILOVER_ASK_MS, SPREAD_AFTER_MS } from '../../src/plan/changes.ts';
import { plan } from '../../src/plan/plan.ts';
import type { Action, InstanceReading, Observed, PodFacts, SentinelReading } from '../../src/plan/types.ts';
import type { KubeObject } from '@quorum/runtime';
import { reconcileDisruptionBudgets } from '../../src/reconcile/disruption-budgets.ts';
import type { ReconcilerDeps } from '../../src/reconcile/deps.ts';
import { BUDGETS, disruptionBudget, type BudgetOf } from '../../src/render/disruption-budgets.ts';
import { instancePod, sentinelPod, type Rendering } from '../../src/render/objects.ts';
import { HASH, host, observed } from './observed-fixture.ts';

const master = (offset = 100): InstanceReading => ({ ok: true, role: 'master', offset, version: '7.0.15' });
const replicaOf = (primary: string, offset = 100): InstanceReading => ({ ok: true, role: 'slave', primaryHost: host(primary), linkUp: true, offset, version: '7.0.15' });
const sentinelSays = (primary: string, replicas: string[], sentinels: string[]): SentinelReading => ({ ok: true, primaryHost: host(primary), knownReplicas: replicas, knownSentinels: sentinels });
const reasonOf = (a: Action): string | undefined => (a.type === 'wait' ? a.reason : undefined);

/** cache-0 (primary) … cache-<n-1>, pod i on node-i; Sentinels on node-0…2; `cordoned` nodes marked on their pods. */
function onNodes(spec: Record<string, unknown>, instances: number, cordoned: string[], primary = 'cache-0'): Observed {
  const names = Array.from({ length: instances }, (_, i) => `cache-${i}`);
  const s = applyDefaults(spec);
  const sentinels = Array.from({ length: s.sentinel.replicas }, (_, i) => `cache-sentinel-${i}`);
  const at = (name: string, node: string, over: Partial<PodFacts> = {}): [string, PodFacts] => {
    const component = name.includes('sentinel') ? 'sentinel' : 'redis';
    return [name, { name, component, phase: 'Running', ready: true, deleting: false, hash: HASH[component], node, ...(cordoned.includes(node) ? { nodeCordoned: true } : {}), ...over }];
  };
  const base = observed(spec);
  return {
    ...base,
    config: { redisConf: base.desired.redisConf, sentinelConf: base.desired.sentinelConf(primary), primary },
    claims: new Set(names.map((n) => `data-${n}`)),
    pods: new Map([...names.map((n, i) => at(n, `node-${i}`, { roleLabel: n === primary ? 'primary' : 'replica' })), ...sentinels.map((n, i) => at(n, `node-${i}`))]),
    instances: new Map(names.map((n) => [n, n === primary ? master() : replicaOf(primary)])),
    sentinels: new Map(sentinels.map((n) => [n, sentinelSays(primary, names.filter((x) => x !== primary), sentinels.filter((x) => x !== n))])),
  };
}

test('the primary on a cordoned node: a planned failover, waited for, asked again; none while its node is schedulable', () => {
  assert.equal(plan(onNodes({}, 3, [])).type, 'none', 'nothing cordoned: nothing to do');
  assert.equal(plan(onNodes({}, 3, ['node-1'])).type, 'none', 'a replica\'s node cordoned: the drain evicts it under the replicas\' budget');
  const o = onNodes({}, 3, ['node-0']);
  assert.deepEqual(plan(o), { type: 'failover', from: 'cache-0', reason: 'node drain: the primary cache-0\'s node node-0 is cordoned' });
  assert.equal(reasonOf(plan({ ...o, plannedFailover: { from: 'cache-0', ageMs: 1000 } })), 'PlannedFailover');
  assert.equal(plan({ ...o, plannedFailover: { from: 'cache-0', ageMs: FAILOVER_ASK_MS } }).type, 'failover', 'asked again');
  // The Sentinels chose cache-2: recorded; the drain's eviction of cache-0 then meets the replicas' budget.
  const moved = { ...o, instances: new Map(o.instances).set('cache-2', master(120)).set('cache-0', replicaOf('cache-2')).set('cache-1', replicaOf('cache-2')), sentinels: new Map([...o.sentinels].map(([n, r]) => [n, { ...r, primaryHost: host('cache-2') }])) };
  assert.deepEqual(plan(moved), { type: 'write-config', primary: 'cache-2', reason: 'PrimaryChanged' });
});

test('a drain goes before a rollout, and a replica on the cordoned node or one not serving never counts as a taker', () => {
  const rolling = { ...onNodes({}, 3, ['node-0']), desiredHash: { redis: 'new', sentinel: HASH.sentinel } };
  assert.equal(plan(rolling).type, 'failover', 'the primary moves before any replica is rolled');
  // cache-1 shares the cordoned node and cache-2 is syncing: no taker, and nothing else to do: the blocked drain is said.
  const o = onNodes({}, 3, ['node-0', 'node-1']);
  const syncing = { ...o, instances: new Map(o.instances).set('cache-2', { ok: true, role: 'slave', primaryHost: host('cache-0'), linkUp: false, offset: 0, version: '7.0.15' }) };
  const idle = plan(syncing);
  assert.equal(reasonOf(idle), 'DrainBlocked');
  assert.match((idle as { message: string }).message, /cache-0's node node-0 is cordoned, and no replica on another node serves to take over/);
  // Once cache-2 is synced it takes over.
  assert.deepEqual(plan(o), { type: 'failover', from: 'cache-0', reason: 'node drain: the primary cache-0\'s node node-0 is cordoned' });
  // A blocked drain holds no other work: a rollout still replaces a replica that serves nobody.
  const silent = { ...o, desiredHash: { redis: 'new', sentinel: HASH.sentinel }, instances: new Map(o.instances).set('cache-2', { ok: false, error: 'connection refused' }) };
  assert.equal(plan(silent).type, 'delete-pod');
});

test('without Sentinels the drain names the replica with the most data on a schedulable node (FAILOVER TO)', () => {
  const o = onNodes({ replicas: 2, sentinel: { replicas: 0 } }, 3, ['node-0', 'node-1']);
  const data = { ...o, instances: new Map(o.instances).set('cache-1', replicaOf('cache-0', 150)).set('cache-2', replicaOf('cache-0', 120)) };
  assert.deepEqual(plan(data), { type: 'failover', from: 'cache-0', to: 'cache-2', reason: 'node drain: the primary cache-0\'s node node-0 is cordoned' });
});

test('a lone instance keeps no primary budget, so a cordoned node changes nothing (the drain restarts it)', () => {
  const o = onNodes({ replicas: 0, sentinel: { replicas: 0 } }, 1, ['node-0']);
  assert.equal(plan(o).type, 'none');
});

const rendering = (spec: unknown): Rendering => ({ redis: { name: 'cache', namespace: 'ns', uid: 'u-1' }, spec: applyDefaults(spec), image: 'quorum.dev/redis:7.0.15', auth: { secretName: 'cache-auth', key: 'password' } });
const selects = (selector: { matchLabels?: Record<string, string> } | undefined, labels: Record<string, string>): boolean => Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v);

test('the budgets: the primary never evicted, replicas one at a time, a Sentinel majority kept; each pod under at most one', () => {
  const r = rendering({ replicas: 2 });
  const budgets = BUDGETS.map((of) => disruptionBudget(r.redis, r.spec, of)!);
  assert.deepEqual(budgets.map((b) => [b.metadata.name, b.spec?.minAvailable, b.spec?.unhealthyPodEvictionPolicy]), [
    ['cache-primary', 1, undefined],
    ['cache-replicas', 1, 'AlwaysAllow'],
    ['cache-sentinel', 2, 'AlwaysAllow'],
  ]);
  for (const b of budgets) assert.deepEqual(b.metadata.ownerReferences?.map((o) => [o.kind, o.uid, o.controller]), [['Redis', 'u-1', true]]);
  // Against the labels the pods carry: an instance pod gets its role label from the operator (planLabels).
  const labels = (o: unknown): Record<string, string> => (o as { metadata: { labels: Record<string, string> } }).metadata.labels;
  const primary = { ...labels(instancePod(r, 'cache-0', 'h')), 'redis.quorum.dev/role': 'primary' };
  const replica = { ...labels(instancePod(r, 'cache-1', 'h')), 'redis.quorum.dev/role': 'replica' };
  const unlabelled = labels(instancePod(r, 'cache-2', 'h'));
  const sentinel = labels(sentinelPod(r, 'cache-sentinel-0', 'h'));
  const under = (podLabels: Record<string, string>): string[] => budgets.filter((b) => selects(b.spec?.selector, podLabels)).map((b) => b.metadata.name ?? '-');
  assert.deepEqual(under(primary), ['cache-primary']);
  assert.deepEqual(under(replica), ['cache-replicas']);
  assert.deepEqual(under(unlabelled), [], 'a new pod, before its role is known, is under none');
  assert.deepEqual(under(sentinel), ['cache-sentinel']);
  assert.deepEqual(under({ ...replica, 'app.kubernetes.io/instance': 'other' }), [], 'another Redis\'s pods are not');
});

test('budgets only where a loss can be survived: none for a lone instance, one replica, or fewer than 3 Sentinels', () => {
  const kept = (spec: unknown): string[] => BUDGETS.filter((of) => disruptionBudget(rendering(spec).redis, rendering(spec).spec, of) !== undefined);
  assert.deepEqual(kept({ replicas: 0, sentinel: { replicas: 0 } }), []);
  assert.deepEqual(kept({ replicas: 1, sentinel: { replicas: 0 } }), ['primary']);
  assert.deepEqual(kept({ replicas: 1, sentinel: { replicas: 1 } }), ['primary']);
  assert.deepEqual(kept({ replicas: 4, sentinel: { replicas: 5 } }), ['primary', 'replicas', 'sentinel']);
  assert.equal(disruptionBudget(rendering({ replicas: 4 }).redis, rendering({ replicas: 4 }).spec, 'replicas')?.spec?.minAvailable, 3);
  assert.equal(disruptionBudget(rendering({ sentinel: { replicas: 5 } }).redis, rendering({ sentinel: { replicas: 5 } }).spec, 'sentinel')?.spec?.minAvailable, 3);
});

test('the budgets are kept like the NetworkPolicy: made, deleted on a scale-down to a lone instance, someone else\'s never touched', async () => {
  const ref = { name: 'cache', namespace: 'ns', uid: 'u-1' };
  const signal = new AbortController().signal;
  const ours = (of: BudgetOf, spec: unknown): KubeObject => disruptionBudget(ref, applyDefaults(spec), of) as KubeObject;
  const run = async (cached: Partial<Record<BudgetOf, KubeObject>>, spec: unknown) => {
    const writes = { created: [] as string[], deleted: [] as string[] };
    const client = {
      create: (_t: unknown, obj: KubeObject) => (writes.created.push(obj.metadata.name ?? '-'), Promise.resolve(obj)),
      apply: (_t: unknown, obj: KubeObject) => Promise.resolve(obj),
      delete: (_t: unknown, key: { name: string }) => (writes.deleted.push(key.name), Promise.resolve()),
    };
    const store = { get: (key: string): KubeObject | undefined => Object.entries(cached).find(([of]) => key === `ns/cache-${of}`)?.[1] };
    const deps = { client, disruptionBudgets: { store } } as unknown as ReconcilerDeps;
    const outcomes = await reconcileDisruptionBudgets(deps, ref, applyDefaults(spec), signal);
    return { writes, outcomes };
  };
  const fresh = await run({}, { replicas: 2 });
  assert.deepEqual(fresh.writes.created, ['cache-primary', 'cache-replicas', 'cache-sentinel']);
  const all = { primary: ours('primary', { replicas: 2 }), replicas: ours('replicas', { replicas: 2 }), sentinel: ours('sentinel', { replicas: 2 }) };
  const lone = await run(all, { replicas: 0, sentinel: { replicas: 0 } });
  assert.deepEqual(lone.writes.deleted, ['cache-primary', 'cache-replicas', 'cache-sentinel']);
  assert.match((lone.outcomes[0] as { done: string }).done, /deleted the PodDisruptionBudget cache-primary: the spec no longer has the pods it kept \(no replica\)/);
  const foreign = { ...all.primary, metadata: { ...all.primary.metadata, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'x', uid: 'other', controller: true }] } };
  const theirs = await run({ primary: foreign }, { replicas: 0, sentinel: { replicas: 0 } });
  assert.deepEqual(theirs.writes.deleted, []);
  const conflict = await run({ primary: foreign }, { replicas: 2 });
  assert.match((conflict.outcomes[0] as { conflict: string }).conflict, /a PodDisruptionBudget named cache-primary that this Redis does not control is in the way/);
});

test('after a drain: two Sentinels on one node are spread once settled and the pod has stayed 5 min, to a node running an instance', () => {
  const o = onNodes({}, 3, []);
  // The drain of node-0 put cache-sentinel-0 beside cache-sentinel-1 on node-1; the uncordon brought the instances back.
  const crowded = (ageMs: number): Observed => ({ ...o, pods: new Map(o.pods).set('cache-sentinel-0', { ...o.pods.get('cache-sentinel-0')!, node: 'node-1', ageMs }) });
  assert.equal(plan(crowded(SPREAD_AFTER_MS - 1)).type, 'none', 'not before it has stayed SPREAD_AFTER_MS');
  assert.deepEqual(plan(crowded(SPREAD_AFTER_MS)), { type: 'delete-pod', pod: 'cache-sentinel-0', reason: 'spreading the Sentinels: cache-sentinel-0 shares the node node-1 with cache-sentinel-1, and node-0 (running cache-0) has none' });
  // node-0 still cordoned: nowhere to go.
  const cordoned = crowded(SPREAD_AFTER_MS);
  const stillCordoned = { ...cordoned, pods: new Map(cordoned.pods).set('cache-0', { ...cordoned.pods.get('cache-0')!, nodeCordoned: true }) };
  assert.notEqual(plan(stillCordoned).type, 'delete-pod');
  // Not while anything is unsettled (a replica syncing).
  const syncing = { ...crowded(SPREAD_AFTER_MS), instances: new Map(o.instances).set('cache-2', { ok: true, role: 'slave', primaryHost: host('cache-0'), linkUp: false, offset: 0, version: '7.0.15' }) };
  assert.equal(plan(syncing).type, 'none');
  // One node for everything (a development cluster): nothing to spread to.
  const single = { ...o, pods: new Map([...o.pods].map(([n, p]) => [n, { ...p, node: 'node-0', ageMs: SPREAD_AFTER_MS }])) };
  assert.equal(plan(single).type, 'none');
});
