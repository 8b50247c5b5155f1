// The backup a version change takes first: its name (deterministic, a valid label value, new on a retry) and
// what the planner is told about it from the backups' cache.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EtcdBackup } from '../../src/api/etcdbackup.ts';
import type { RolloutRecord } from '../../src/api/etcdcluster.ts';
import { applyDefaults } from '../../src/api/defaults.ts';
import { observePreUpgradeBackup, preUpgradeBackupName } from '../../src/cluster/rollout.ts';

const record: RolloutRecord = { target: 'a1b2c3d4e5f60718', fromVersion: '3.5.35', targetVersion: '3.6.16', startedAt: '2026-11-23T00:00:00Z' };
const destination = { s3: { bucket: 'b', credentialsSecret: 's' } };
const store = (backups: EtcdBackup[]): { store: { get: (key: string) => EtcdBackup | undefined } } => ({
  store: { get: (key) => backups.find((b) => `${b.metadata?.namespace}/${b.metadata?.name}` === key) },
});

test('the name: cluster, target version and a hash of the target and retry token, at most 63 characters', () => {
  const name = preUpgradeBackupName('main', record);
  assert.match(name, /^main-pre-3-6-16-[0-9a-f]{5}$/);
  assert.equal(preUpgradeBackupName('main', record), name, 'the same rollout finds the same backup after a crash');
  assert.notEqual(preUpgradeBackupName('main', { ...record, retryToken: '2' }), name, 'a retry takes a new backup');
  assert.notEqual(preUpgradeBackupName('main', { ...record, target: 'ffff' }), name, 'another target takes its own');
  const long = preUpgradeBackupName('a'.repeat(49) + '-b', record);
  assert.ok(long.length <= 63 && /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(long), long);
});

test('observed only for a recorded version change with spec.backup and beforeVersionChange Always', () => {
  const spec = applyDefaults({ version: '3.6.16', backup: { destination } });
  assert.equal(spec.backup?.beforeVersionChange, 'Always', 'the default');
  assert.equal(observePreUpgradeBackup('main', 'ns', spec, undefined, store([]), []), undefined, 'no rollout recorded yet');
  assert.equal(observePreUpgradeBackup('main', 'ns', spec, { ...record, targetVersion: '3.5.35' }, store([]), []), undefined, 'the version stays');
  assert.equal(observePreUpgradeBackup('main', 'ns', applyDefaults({ version: '3.6.16' }), record, store([]), []), undefined, 'no spec.backup');
  assert.equal(observePreUpgradeBackup('main', 'ns', applyDefaults({ version: '3.6.16', backup: { destination, beforeVersionChange: 'Never' } }), record, store([]), []), undefined);

  const missing = observePreUpgradeBackup('main', 'ns', spec, record, store([]), [0]);
  assert.deepEqual(missing, { name: preUpgradeBackupName('main', record), destination: spec.backup.destination, phase: 'Missing', boundMs: 360_000 });
  const name = preUpgradeBackupName('main', record);
  const failed: EtcdBackup = {
    metadata: { name, namespace: 'ns' },
    spec: { clusterName: 'main', destination },
    status: { phase: 'Failed', conditions: [{ type: 'Failed', status: 'True', reason: 'BucketNotFound', message: 'no bucket b', lastTransitionTime: '2026-11-23T00:00:00Z' }] },
  };
  const seen = observePreUpgradeBackup('main', 'ns', spec, record, store([failed]), [64 * 1024 * 1024]);
  assert.equal(seen?.phase, 'Failed');
  assert.equal(seen?.message, 'BucketNotFound: no bucket b');
  assert.equal(seen?.boundMs, (300 + 32 + 60) * 1000, 'the Job deadline grows with the database');
  assert.equal(observePreUpgradeBackup('main', 'ns', spec, record, store([{ ...failed, status: {} }]), [])?.phase, 'Pending', 'created, no status yet');
});
