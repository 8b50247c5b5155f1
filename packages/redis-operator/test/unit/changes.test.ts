// The planner's changes to a running Redis: scale-down (highest ordinal first, the primary only after a planned
// failover, claims per reclaimPolicy, Sentinels made to forget), rolling updates (replicas first, each gated, a
// planned failover, the old primary last, halts that hold until a revert or a retry), and a whole rollout and
// scale-down driven step by step through a model of the Redis, re-planned from scratch after every step as an
// operator restarted there would.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FAILOVER_ASK_MS, FAILOVER_BOUND_MS, ROLLOUT_GATE_MS } from '../../src/plan/changes.ts';
import { decidedPrimary } from '../../src/plan/facts.ts';
import { plan } from '../../src/plan/plan.ts';
import type { Action, InstanceReading, Observed, PodFacts, SentinelReading } from '../../src/plan/types.ts';
import { host, observed } from './observed-fixture.ts';

const OLD = { redis: 'r-old', sentinel: 's-old' };
const NEW = { redis: 'r-new', sentinel: 's-old' };

const pod = (name: string, over: Partial<PodFacts> = {}): [string, PodFacts] => {
  const component = name.includes('sentinel') ? 'sentinel' : 'redis';
  return [name, { name, component, phase: 'Running', ready: true, deleting: false, hash: OLD[component], ...over }];
};
const master = (offset = 100): InstanceReading => ({ ok: true, role: 'master', offset, version: '7.0.15' });
const unsynced = (primary: string): InstanceReading => ({ ok: true, role: 'slave', primaryHost: host(primary), linkUp: false, offset: 0, version: '7.0.15' });
const replicaOf = (primary: string, offset = 100): InstanceReading => ({ ok: true, role: 'slave', primaryHost: host(primary), linkUp: true, offset, version: '7.0.15' });
const sentinelSays = (primary: string, replicas: string[], sentinels: string[], good?: string[]): SentinelReading => ({ ok: true, primaryHost: host(primary), knownReplicas: replicas, knownSentinels: sentinels, ...(good ? { goodReplicas: good } : {}) });

/** cache-0 … cache-<n-1> with `primary`, three Sentinels that know them all, pods on `OLD`. */
function running(spec: Record<string, unknown>, instances: number, primary = 'cache-0', over: Partial<Observed> = {}): Observed {
  const names = Array.from({ length: instances }, (_, i) => `cache-${i}`);
  const sentinels = ['cache-sentinel-0', 'cache-sentinel-1', 'cache-sentinel-2'];
  const base = observed(spec);
  return {
    ...base,
    config: { redisConf: base.desired.redisConf, sentinelConf: base.desired.sentinelConf(primary), primary },
    claims: new Set(names.map((n) => `data-${n}`)),
    pods: new Map([...names.map((n) => pod(n, { roleLabel: n === primary ? 'primary' : 'replica' })), ...sentinels.map((n) => pod(n))]),
    instances: new Map(names.map((n) => [n, n === primary ? master() : replicaOf(primary)])),
    sentinels: new Map(sentinels.map((n) => [n, sentinelSays(primary, names.filter((x) => x !== primary), sentinels.filter((x) => x !== n))])),
    desiredHash: OLD,
    ...over,
  };
}

const reasonOf = (a: Action): string | undefined => (a.type === 'wait' ? a.reason : undefined);

test('scale-down: the highest replica goes first, and only once every instance and Sentinel the spec keeps serves', () => {
  const o = running({ replicas: 1 }, 3);
  assert.deepEqual(plan(o), { type: 'delete-pod', pod: 'cache-2', reason: 'scale-down: beyond spec.replicas (1)' });
  const notLinked = new Map(o.instances).set('cache-1', unsynced('cache-0'));
  assert.equal(reasonOf(plan({ ...o, instances: notLinked })), 'WaitingForInstances');
  const twoDown = running({ replicas: 0 }, 3);
  assert.deepEqual(plan(twoDown), { type: 'delete-pod', pod: 'cache-2', reason: 'scale-down: beyond spec.replicas (0)' });
});

test('scale-down of the primary: a planned failover first, waited for, asked again, and the pod removed once it moved', () => {
  const o = running({ replicas: 1 }, 3, 'cache-2');
  assert.deepEqual(plan(o), { type: 'failover', from: 'cache-2', reason: 'scale-down: the primary cache-2 is beyond spec.replicas (1)' });
  assert.equal(reasonOf(plan({ ...o, plannedFailover: { from: 'cache-2', ageMs: 1000 } })), 'PlannedFailover');
  assert.equal(plan({ ...o, plannedFailover: { from: 'cache-2', ageMs: FAILOVER_ASK_MS } }).type, 'failover', 'asked again');
  // The Sentinels chose cache-1: recorded, labels moved, then cache-2 goes.
  const moved = { ...o, instances: new Map(o.instances).set('cache-1', master(120)).set('cache-0', replicaOf('cache-1')).set('cache-2', replicaOf('cache-1')), sentinels: new Map([...o.sentinels].map(([n, r]) => [n, { ...r, primaryHost: host('cache-1') }])) };
  assert.deepEqual(plan(moved), { type: 'write-config', primary: 'cache-1', reason: 'PrimaryChanged' });
  const recorded = { ...moved, config: { redisConf: moved.desired.redisConf, primary: 'cache-1', sentinelConf: moved.desired.sentinelConf('cache-1') } };
  const relabelled = { ...recorded, pods: new Map(recorded.pods).set(...pod('cache-1', { roleLabel: 'primary' })).set(...pod('cache-2', { roleLabel: 'replica' })) };
  assert.deepEqual(plan(relabelled), { type: 'delete-pod', pod: 'cache-2', reason: 'scale-down: beyond spec.replicas (1)' });
});

test('without Sentinels a planned failover names the replica with the most data, and the operator adopts the FAILOVER TO result', () => {
  const o = running({ replicas: 1, sentinel: { replicas: 0 } }, 3, 'cache-2', { sentinels: new Map() });
  const sentinelless = { ...o, pods: new Map([...o.pods].filter(([n]) => !n.includes('sentinel'))) };
  assert.deepEqual(plan(sentinelless), { type: 'failover', from: 'cache-2', to: 'cache-0', reason: 'scale-down: the primary cache-2 is beyond spec.replicas (1)' });
  // Mid-swap the new primary says so before the old one does: nobody is repointed while the swap has its time.
  const midSwap = { ...sentinelless, plannedFailover: { from: 'cache-2', ageMs: 500 }, instances: new Map(sentinelless.instances).set('cache-0', master(130)) };
  assert.equal(reasonOf(plan(midSwap)), 'PlannedFailover');
  const swapped = { ...sentinelless, instances: new Map(sentinelless.instances).set('cache-2', replicaOf('cache-0')).set('cache-0', master(130)).set('cache-1', replicaOf('cache-2')) };
  assert.equal(decidedPrimary(swapped), 'cache-0', 'the old primary says it replicates cache-0, which says it is primary');
  assert.deepEqual(plan(swapped), { type: 'write-config', primary: 'cache-0', reason: 'PrimaryChanged' });
});

test('scale-down: claims of removed instances are deleted with reclaimPolicy Delete, kept with Retain', () => {
  const gone = (policy: string): Observed => {
    const o = running({ replicas: 1, storage: { reclaimPolicy: policy } }, 2, 'cache-0', { claims: new Set(['data-cache-0', 'data-cache-1', 'data-cache-2']) });
    return o;
  };
  assert.deepEqual(plan(gone('Delete')), { type: 'delete-claim', instance: 'cache-2', reason: 'scale-down with reclaimPolicy Delete' });
  assert.deepEqual(plan(gone('Retain')), { type: 'none' });
});

test('Sentinels that remember a removed replica or Sentinel are reset one at a time, the next once the last one relearned', () => {
  const o = running({ replicas: 1 }, 2);
  const stale = new Map(o.sentinels).set('cache-sentinel-0', sentinelSays('cache-0', ['cache-1', 'cache-2'], ['cache-sentinel-1', 'cache-sentinel-2'])).set('cache-sentinel-1', sentinelSays('cache-0', ['cache-1'], ['cache-sentinel-0', 'cache-sentinel-2', 'cache-sentinel-3']));
  assert.deepEqual(plan({ ...o, sentinels: stale }), { type: 'reset-sentinel', sentinel: 'cache-sentinel-0', forget: ['cache-2'] });
  const relearning = new Map(stale).set('cache-sentinel-0', sentinelSays('cache-0', [], ['cache-sentinel-1', 'cache-sentinel-2']));
  assert.equal(reasonOf(plan({ ...o, sentinels: relearning })), 'SentinelsRediscovering');
  const relearned = new Map(stale).set('cache-sentinel-0', sentinelSays('cache-0', ['cache-1'], ['cache-sentinel-1', 'cache-sentinel-2']));
  assert.deepEqual(plan({ ...o, sentinels: relearned }), { type: 'reset-sentinel', sentinel: 'cache-sentinel-1', forget: ['cache-sentinel-3'] });
  // A removed instance whose pod still exists is not forgotten yet (the Sentinel would relearn it).
  const stillThere = running({ replicas: 1 }, 3);
  assert.equal(plan(stillThere).type, 'delete-pod');
});

test('Sentinels beyond spec.sentinel.replicas are removed highest first', () => {
  const o = running({ sentinel: { replicas: 1 } }, 3);
  const relaxed = { ...o, sentinels: new Map([['cache-sentinel-0', sentinelSays('cache-0', ['cache-1', 'cache-2'], [])]]) };
  assert.deepEqual(plan(relaxed), { type: 'delete-pod', pod: 'cache-sentinel-2', reason: 'scale-down: beyond spec.sentinel.replicas (1)' });
});

test('a rollout: replicas first, highest first; an updated pod gates the next; then a planned failover; the old primary last', () => {
  const o = running({}, 3, 'cache-0', { desiredHash: NEW });
  assert.deepEqual(plan(o), { type: 'delete-pod', pod: 'cache-2', reason: 'rolling update (3 instances and 0 Sentinels left): updating the replica cache-2' });
  const starting = { ...o, pods: new Map(o.pods).set(...pod('cache-2', { hash: NEW.redis, ready: false, roleLabel: 'replica' })), instances: new Map(o.instances).set('cache-2', unsynced('cache-0')) };
  assert.equal(reasonOf(plan(starting)), 'RolloutGate');
  assert.deepEqual(plan({ ...starting, step: { name: 'RolloutGate', ageMs: ROLLOUT_GATE_MS } }).type, 'halt-rollout');
  const replicasDone = { ...o, pods: new Map(o.pods).set(...pod('cache-2', { hash: NEW.redis, roleLabel: 'replica' })).set(...pod('cache-1', { hash: NEW.redis, roleLabel: 'replica' })) };
  assert.deepEqual(plan(replicasDone), { type: 'failover', from: 'cache-0', reason: 'rolling update (1 instance and 0 Sentinels left): every replica is updated; the old primary cache-0 goes last' });
  assert.equal(plan({ ...replicasDone, step: { name: 'PlannedFailover', ageMs: FAILOVER_BOUND_MS }, plannedFailover: { from: 'cache-0', ageMs: FAILOVER_ASK_MS } }).type, 'halt-rollout');
});

test('a planned failover is asked only once a Sentinel sees a replica it would promote (else SENTINEL FAILOVER says NOGOODSLAVE)', () => {
  const o = running({}, 3, 'cache-0', { desiredHash: NEW });
  const updated = { ...o, pods: new Map(o.pods).set(...pod('cache-2', { hash: NEW.redis, roleLabel: 'replica' })).set(...pod('cache-1', { hash: NEW.redis, roleLabel: 'replica' })) };
  const others = (n: string): string[] => ['cache-sentinel-0', 'cache-sentinel-1', 'cache-sentinel-2'].filter((x) => x !== n);
  const notYet = new Map([...o.sentinels.keys()].map((n) => [n, sentinelSays('cache-0', ['cache-1', 'cache-2'], others(n), [])]));
  assert.equal(reasonOf(plan({ ...updated, sentinels: notYet })), 'PlannedFailover');
  const seen = new Map(notYet).set('cache-sentinel-1', sentinelSays('cache-0', ['cache-1', 'cache-2'], others('cache-sentinel-1'), ['cache-2']));
  assert.equal(plan({ ...updated, sentinels: seen }).type, 'failover');
});

test('a rollout halts at a crash-looping updated pod; the halt holds until the spec changes or a retry is asked for', () => {
  const o = running({}, 3, 'cache-0', { desiredHash: NEW });
  const looping = { ...o, pods: new Map(o.pods).set(...pod('cache-2', { hash: NEW.redis, ready: false, roleLabel: 'replica', crashLooping: 'container redis in CrashLoopBackOff, last exit code 1' })) };
  const halt = plan(looping);
  assert.equal(halt.type, 'halt-rollout');
  assert.equal((halt as { reason: string }).reason, 'CrashLooping');
  const record = { target: `${NEW.redis}.${NEW.sentinel}`, updated: 1, total: 6, halted: { instance: 'cache-2', reason: 'CrashLooping' as const, message: 'keeps exiting', at: '2026-11-27T12:00:00Z' } };
  assert.equal(reasonOf(plan({ ...looping, rollout: { record } })), 'RolloutHalted');
  assert.equal(plan({ ...looping, rollout: { record, retryToken: 'again' } }).type, 'halt-rollout', 'a retry re-gates it (and halts again while it still crashes)');
  // Reverted: the crash-looping pod is outdated now and serves nobody, so it is rolled back first.
  const reverted = { ...looping, desiredHash: OLD, rollout: { record } };
  assert.deepEqual(plan(reverted), { type: 'delete-pod', pod: 'cache-2', reason: 'rolling update (1 instance and 0 Sentinels left): updating cache-2, which serves nobody now' });
});

/** A model of the Redis that takes the planner's actions the way Kubernetes, Redis and Sentinel would (at once). */
function step(o: Observed, a: Action): Observed {
  const pods = new Map(o.pods);
  const instances = new Map(o.instances);
  const primary = decidedPrimary(o)!;
  switch (a.type) {
    case 'delete-pod':
      pods.delete(a.pod);
      instances.delete(a.pod);
      return { ...o, pods, instances };
    case 'create-pod':
      pods.set(...pod(a.pod, { hash: o.desiredHash[a.component] }));
      if (a.component === 'redis') instances.set(a.pod, replicaOf(o.config!.primary));
      return { ...o, pods, instances };
    case 'label-role':
      pods.set(a.pod, { ...pods.get(a.pod)!, ...(a.role ? { roleLabel: a.role } : { roleLabel: undefined }) });
      return { ...o, pods, instances };
    case 'write-config':
      return { ...o, config: { redisConf: o.desired.redisConf, sentinelConf: o.desired.sentinelConf(a.primary), primary: a.primary } };
    case 'delete-claim':
      return { ...o, claims: new Set([...o.claims].filter((c) => c !== `data-${a.instance}`)) };
    case 'failover': {
      const to = [...instances.keys()].find((n) => n !== a.from && o.pods.get(n)?.hash === o.desiredHash.redis && Number(n.split('-')[1]) <= o.spec.replicas)!;
      for (const n of instances.keys()) instances.set(n, n === to ? master() : replicaOf(to));
      return { ...o, instances, sentinels: new Map([...o.sentinels].map(([n, r]) => [n, { ...r, primaryHost: host(to) } as SentinelReading])), plannedFailover: { from: a.from, ageMs: 0 } };
    }
    case 'reset-sentinel': {
      const replicas = [...instances.keys()].filter((n) => n !== primary);
      const r = o.sentinels.get(a.sentinel) as Extract<SentinelReading, { ok: true }>;
      const sentinels = [...pods.values()].filter((p) => p.component === 'sentinel' && p.name !== a.sentinel).map((p) => p.name);
      return { ...o, sentinels: new Map(o.sentinels).set(a.sentinel, { ...r, knownReplicas: replicas, knownSentinels: sentinels }) };
    }
    default:
      throw new Error(`unexpected ${JSON.stringify(a)}`);
  }
}

test('driven to the end, re-planned after every step: a rollout then a scale-down never takes two instances at once, never deletes the primary, and ends on the new spec', () => {
  let o = running({ replicas: 1 }, 3, 'cache-0', { desiredHash: NEW });
  const taken: string[] = [];
  for (let i = 0; i < 60; i++) {
    const a = plan(o);
    if (a.type === 'none') break;
    if (a.type === 'delete-pod') assert.notEqual(a.pod, decidedPrimary(o), `never the primary: ${a.reason}`);
    const down = [...o.pods.values()].filter((p) => p.component === 'redis' && !p.ready).length;
    assert.ok(down === 0, 'a step is only taken with every instance serving');
    taken.push(a.type === 'delete-pod' || a.type === 'create-pod' ? `${a.type} ${a.pod}` : a.type);
    o = step(o, a);
  }
  assert.deepEqual(plan(o), { type: 'none' }, taken.join(', '));
  assert.deepEqual([...o.pods.values()].filter((p) => p.component === 'redis').map((p) => [p.name, p.hash]).sort(), [['cache-0', NEW.redis], ['cache-1', NEW.redis]]);
  assert.equal(taken[0], 'delete-pod cache-2', 'the scale-down comes first: nothing is rolled that is about to go');
  assert.ok(taken.includes('failover'), taken.join(', '));
  assert.ok(!o.claims.has('data-cache-2') === (o.spec.storage.reclaimPolicy === 'Delete'));
});
