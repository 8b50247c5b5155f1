import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CLUSTER_WIDE, FAULT_KINDS, choose, drawFaults, rng } from '../../chaos/sequence.ts';
import { clusterNotConverged } from '../../chaos/run.ts';
import type { EtcdCluster } from '../../src/api/etcdcluster.ts';

test('a seed draws the same sequence every time; another seed draws another', () => {
  const a = drawFaults({ seed: 1, faults: 50, clusters: 3 });
  assert.deepEqual(drawFaults({ seed: 1, faults: 50, clusters: 3 }), a);
  assert.notDeepEqual(drawFaults({ seed: 2, faults: 50, clusters: 3 }).map((d) => d.kind), a.map((d) => d.kind));
  // A shorter run of the same seed is the longer one's beginning: a failing fault replays with fewer faults.
  assert.deepEqual(drawFaults({ seed: 1, faults: 20, clusters: 3 }), a.slice(0, 20));
});

test('every kind is drawn once per deck of all kinds, in a random order', () => {
  const draws = drawFaults({ seed: 7, faults: FAULT_KINDS.length * 3, clusters: 3 });
  for (let deck = 0; deck < 3; deck++) {
    const kinds = draws.slice(deck * FAULT_KINDS.length, (deck + 1) * FAULT_KINDS.length).map((d) => d.kind);
    assert.deepEqual([...kinds].sort(), [...FAULT_KINDS].sort(), `deck ${deck} holds each kind once`);
  }
  assert.notDeepEqual(draws.slice(0, FAULT_KINDS.length).map((d) => d.kind), [...FAULT_KINDS].reverse(), 'the deck is shuffled');
  // The CI's short run (20 faults, seed 1) covers the whole set.
  assert.equal(new Set(drawFaults({ seed: 1, faults: 20, clusters: 3 }).map((d) => d.kind)).size, FAULT_KINDS.length);
});

test('draws stay in range: clusters, picks, outages of 10 to 30 s; cluster-wide faults name cluster 0', () => {
  const draws = drawFaults({ seed: 123, faults: 1000, clusters: 3 });
  assert.deepEqual(draws.map((d) => d.index), draws.map((_, i) => i + 1));
  for (const d of draws) {
    assert.ok(d.cluster >= 0 && d.cluster < 3);
    if (CLUSTER_WIDE.has(d.kind)) assert.equal(d.cluster, 0);
    assert.ok(d.pick >= 0 && d.pick < 1);
    assert.ok(d.outageSeconds >= 10 && d.outageSeconds <= 30 && Number.isInteger(d.outageSeconds));
  }
  const perCluster = [0, 1, 2].map((c) => draws.filter((d) => !CLUSTER_WIDE.has(d.kind) && d.cluster === c).length);
  for (const n of perCluster) assert.ok(n > 150, `each cluster is hit (${perCluster.join('/')})`);
  const outages = new Set(draws.map((d) => d.outageSeconds));
  assert.ok(outages.has(10) && outages.has(30), 'both ends of the outage range are drawn');
});

test('bad arguments are refused with what was wrong', () => {
  assert.throws(() => drawFaults({ seed: 1, faults: 0, clusters: 3 }), /--faults must be a positive integer \(got 0\)/);
  assert.throws(() => drawFaults({ seed: 1, faults: 5, clusters: 0 }), /--clusters must be a positive integer/);
  assert.throws(() => drawFaults({ seed: 1.5, faults: 5, clusters: 1 }), /--seed must be an integer/);
});

test('rng is uniform enough, and choose picks by the sorted candidates', () => {
  const r = rng(42);
  const buckets = new Array<number>(10).fill(0);
  for (let i = 0; i < 100_000; i++) buckets[Math.floor(r() * 10)]!++;
  for (const b of buckets) assert.ok(b > 9_500 && b < 10_500, `bucket ${b}`);
  assert.equal(choose(['c', 'a', 'b'], 0), 'a');
  assert.equal(choose(['c', 'a', 'b'], 0.5), 'b');
  assert.equal(choose(['c', 'a', 'b'], 0.999), 'c');
  assert.throws(() => choose([], 0.3), /no candidate/);
});

function cluster(status: Record<string, unknown>, spec: Record<string, unknown> = { replicas: 3 }): EtcdCluster {
  return { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name: 'c0', generation: 2 }, spec, status };
}
const member = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ name, ready: true, learner: false, leader: false, ...extra });
const fine = { observedGeneration: 2, conditions: [{ type: 'Available', status: 'True' }, { type: 'Degraded', status: 'False' }], members: [member('a'), member('b'), member('c')] };

test('a cluster has converged only when Available with spec.replicas ready voters, the spec observed, nothing under way and not Degraded', () => {
  assert.equal(clusterNotConverged(cluster(fine)), undefined);
  assert.match(clusterNotConverged(cluster({ ...fine, observedGeneration: 1 }))!, /generation 2 not yet observed \(1\)/);
  assert.match(clusterNotConverged(cluster({ ...fine, conditions: [{ type: 'Available', status: 'False', reason: 'NoQuorum' }] }))!, /not Available \(NoQuorum\)/);
  assert.match(clusterNotConverged(cluster(fine, { replicas: 5 }))!, /3 ready voting members of 3, spec 5/);
  assert.match(clusterNotConverged(cluster({ ...fine, members: [member('a'), member('b'), member('c', { learner: true })] }))!, /2 ready voting members of 3/);
  assert.match(clusterNotConverged(cluster({ ...fine, step: { name: 'AddMember', startedAt: '2026-11-24T00:00:00Z' } }))!, /step AddMember under way/);
  assert.match(clusterNotConverged(cluster({ ...fine, rollout: { targetVersion: '3.5.35' } }))!, /a rollout under way/);
  assert.match(clusterNotConverged(cluster({ ...fine, conditions: [{ type: 'Available', status: 'True' }, { type: 'Degraded', status: 'True', reason: 'NoSpace', message: 'alarm' }] }))!, /Degraded NoSpace: alarm/);
});
