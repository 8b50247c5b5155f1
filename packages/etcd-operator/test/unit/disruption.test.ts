import assert from 'node:assert/strict';
import { test } from 'node:test';
import { staleDisruptions } from '../../src/cluster/disruption.ts';
import type { PodObject } from '../../src/cluster/observe-members.ts';

const pod = (name: string, created: string, deleting = false): PodObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, creationTimestamp: created, ...(deleting ? { deletionTimestamp: '2026-11-27T01:37:30Z' } : {}) },
});

test('a pod made again after its eviction, still listed by the budget, is named with when Kubernetes stops counting it', () => {
  // As chaos seed 7 met it: c2-3 evicted at 01:37:19, made again at 01:37:26, kube-apiserver restarted meanwhile.
  const pdb = { status: { disruptedPods: { 'c2-3': '2026-11-27T01:37:19Z' } } };
  const why = staleDisruptions(pdb, [pod('c2-3', '2026-11-27T01:37:26Z'), pod('c2-6', '2026-11-27T01:28:00Z')]);
  assert.equal(why, 'Kubernetes still counts c2-3 (evicted at 2026-11-27T01:37:19Z, made again since; counted until 2026-11-27T01:39:19.000Z) as disrupted: its disruption controller missed the old pod\'s deletion (as after a kube-apiserver restart) and keeps such a pod listed for 2 min');
});

test('an evicted pod not made again yet, or still being deleted, is the ordinary reason: nothing to add', () => {
  const pdb = { status: { disruptedPods: { 'c2-3': '2026-11-27T01:37:19Z' } } };
  assert.equal(staleDisruptions(pdb, [pod('c2-3', '2026-11-27T01:20:00Z', true)]), undefined, 'the evicted pod itself, terminating');
  assert.equal(staleDisruptions(pdb, [pod('c2-3', '2026-11-27T01:20:00Z')]), undefined, 'made before the eviction');
  assert.equal(staleDisruptions(pdb, []), undefined, 'gone');
  assert.equal(staleDisruptions({ status: {} }, [pod('c2-3', '2026-11-27T01:37:26Z')]), undefined, 'nothing listed');
  assert.equal(staleDisruptions(undefined, [pod('c2-3', '2026-11-27T01:37:26Z')]), undefined, 'no budget');
});
