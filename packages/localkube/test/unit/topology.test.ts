// Every node gets its own address, pod subnet, zone, bridge and cgroup; bad node counts are refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { POD_NETWORK, topology } from '../../src/cluster/topology.ts';

test('nodes are distinct in every host resource', () => {
  const topo = topology('/tmp/x', 3);
  for (const key of ['name', 'ip', 'podCIDR', 'zone', 'bridge', 'cgroup', 'containerdSocket'] as const) {
    assert.equal(new Set(topo.nodes.map((n) => n[key])).size, 3, key);
  }
  for (const n of topo.nodes) assert.ok(n.podCIDR.startsWith(POD_NETWORK.split('.').slice(0, 2).join('.')));
});

test('node counts outside 1..9 are refused with a clear message', () => {
  assert.throws(() => topology('/tmp/x', 0), /--nodes must be 1 to 9, got 0/);
  assert.throws(() => topology('/tmp/x', 10), /--nodes must be 1 to 9/);
});
