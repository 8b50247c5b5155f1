// kubectl-quorum as users run it: installed with `npm run kubectl-plugin:install`'s script into a directory
// on PATH, and found and run by the real kubectl (localkube's pinned one) against a real cluster: status and
// members of an Available cluster, a backup to a PVC followed with --wait, and a restore from it into a new
// cluster that holds the data written before the backup.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
// @shared operator
// @timeout 20m: a backup bounded at 5 minutes and a restore at 8
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { run, type RunResult } from '@quorum/images';
import { PersistentVolumeClaims } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import { RESTRICTED_NAMESPACE_LABELS } from '../../src/deploy/manifests.ts';
import { EtcdClient } from '../../src/etcd/client.ts';
import { EtcdBackups, EtcdClusters } from '../../src/resources.ts';
import { applyCluster, clientServiceEndpoint, clusterEndpoint, eventually, getCluster, PLAINTEXT, setUpOperator, waitAvailable } from './support.ts';

const root = join(import.meta.dirname, '..', '..', '..', '..');
const NAME = 'plugged';
const RESTORED = 'plugged-again';

let env: TestEnv;
let ns: string;
let pathDir: string;

before(async () => {
  env = await setUpOperator();
  ns = await env.namespace('kubectl', { labels: { ...RESTRICTED_NAMESPACE_LABELS } });
  pathDir = await mkdtemp(join(tmpdir(), 'kubectl-quorum-path-'));
  await run('bash', [join(root, 'scripts', 'kubectl-plugin-install'), pathDir]);
});
after(async () => {
  await env?.stop();
  if (pathDir) await rm(pathDir, { recursive: true, force: true });
});

/** `kubectl ARGS` with the plugin's directory on PATH and the suite's kubeconfig in $KUBECONFIG, as a user's shell has them. */
function kubectl(args: string[]): Promise<RunResult> {
  return run(join(env.kube.stateDir, 'bin', 'kubectl'), args, {
    env: { ...process.env, PATH: `${pathDir}:${process.env['PATH'] ?? ''}`, KUBECONFIG: env.kubeconfig },
    allowFailure: true,
  });
}

function ok(r: RunResult, what: string): string {
  assert.equal(r.exitCode, 0, `${what}: exit ${r.exitCode}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r.stdout;
}

test('kubectl finds the plugin; status and members of an Available cluster', async () => {
  // Only the listing: `plugin list` exits 1 over warnings about other plugins a machine's PATH may hold.
  assert.match((await kubectl(['plugin', 'list'])).stdout, new RegExp(`${pathDir}/kubectl-quorum`));
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3 });
  await waitAvailable(env.client, ns, NAME, 3);
  // Right after bootstrap etcd reports cluster version 3.0.0 until its leader decides the real one (CI saw
  // `3.6.16 (3.0.0)`): the table is read once status shows the decided version.
  const state = await eventually('etcd decided the cluster version (status.clusterVersion 3.6.x)', async () => {
    const s = await getCluster(env.client, ns, NAME);
    return s.available && s.cluster.status?.clusterVersion?.startsWith('3.6.') ? s : undefined;
  }, { timeoutMs: 60_000, intervalMs: 500 });
  const leader = state.cluster.status!.leader!;

  const table = ok(await kubectl(['quorum', 'status', '-n', ns]), 'status');
  assert.match(table, /^NAME\s+PHASE\s+READY\s+VERSION \(CLUSTER\)\s+LEADER/);
  assert.match(table, new RegExp(`\\n${NAME}\\s+Running\\s+3/3\\s+3\\.6\\.16 \\(3\\.6\\.\\d+\\)\\s+${leader}\\s+none\\s+-\\s+none\\s`));
  assert.doesNotMatch(table, /Degraded=|Available=/, 'an Available cluster has nothing to report');

  const detail = ok(await kubectl(['quorum', 'status', NAME, '--namespace', ns, '--kubeconfig', env.kubeconfig]), 'status NAME');
  assert.match(detail, new RegExp(`^EtcdCluster ${ns}/${NAME}\\n`));
  assert.match(detail, /conditions: +all fine/);

  const members = ok(await kubectl(['quorum', 'members', NAME, '-n', ns]), 'members').trimEnd().split('\n');
  assert.match(members[0]!, /^NAME\s+ID\s+READY\s+LEADER\s+LEARNER\s+VERSION\s+DB SIZE\s+PEER URL\s+LAST ERROR$/);
  assert.equal(members.length, 4, members.join('\n'));
  assert.equal(members.filter((l) => /^\S+\s+[0-9a-f]+\s+yes\s+yes\s+no\s+3\.6\.16/.test(l)).length, 1, 'one leader, ready, a voter');
  assert.ok(members.some((l) => l.startsWith(`${leader} `)), `the leader ${leader} is listed`);

  const missing = await kubectl(['quorum', 'members', 'nope', '-n', ns]);
  assert.equal(missing.exitCode, 1);
  assert.match(missing.stderr, new RegExp(`EtcdCluster ${ns}/nope not found`));
  const wrong = await kubectl(['quorum', 'restore', 'no-such-backup', '--to', 'x', '-n', ns]);
  assert.equal(wrong.exitCode, 1);
  assert.match(wrong.stderr, new RegExp(`EtcdBackup ${ns}/no-such-backup not found`));
});

test('backup to a PVC with --wait, then restore from it into a new cluster with --wait', async () => {
  await env.client.create(PersistentVolumeClaims, {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'etcd-backups', namespace: ns },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  });
  const source = new EtcdClient({ endpoint: await clientServiceEndpoint(env.client, ns, NAME), timeoutMs: 10_000 });
  try {
    await source.put('/kubectl-quorum/before-backup', 'kept');
  } finally {
    source.close();
  }

  const backup = await kubectl(['quorum', 'backup', NAME, '-n', ns, '--pvc', 'etcd-backups', '--path', 'kubectl', '--name', 'now', '--wait', '--timeout', '5m']);
  const out = ok(backup, 'backup --wait');
  assert.match(out, /^etcdbackup\.etcd\.quorum\.dev\/now created \(cluster plugged, to pvc:\/\/etcd-backups\/kubectl from --pvc\)\n/);
  assert.match(out, /EtcdBackup \S+\/now Succeeded\n +location: pvc:\/\/etcd-backups\/kubectl\//);
  assert.match(backup.stderr, /EtcdBackup \S+\/now: Succeeded/);
  const stored = await env.client.get(EtcdBackups, { namespace: ns, name: 'now' });
  assert.equal(stored.status?.phase, 'Succeeded');
  assert.match(ok(await kubectl(['quorum', 'status', '-n', ns]), 'status after backup'), new RegExp(`\\n${NAME}\\s.*\\snow \\(\\d+[sm] ago\\)`));

  const restore = await kubectl(['quorum', 'restore', 'now', '--to', RESTORED, '-n', ns, '--replicas', '1', '--wait', '--timeout', '8m']);
  const restored = ok(restore, 'restore --wait');
  assert.match(restored, new RegExp(`^etcdrestore\\.etcd\\.quorum\\.dev/${RESTORED} created \\(new EtcdCluster ${RESTORED} from EtcdBackup now\\)\\n`));
  assert.match(restored, new RegExp(`EtcdRestore \\S+/${RESTORED} Succeeded\\n +cluster: +EtcdCluster \\S+/${RESTORED}, \\w+, \\d/1 ready`));
  await waitAvailable(env.client, ns, RESTORED, 1);
  // The restore made a new cluster, with TLS by default: read it with its client Secret.
  const copy = new EtcdClient({ ...(await clusterEndpoint(env.client, ns, RESTORED)), timeoutMs: 10_000 });
  try {
    assert.equal((await copy.get('/kubectl-quorum/before-backup'))?.value, 'kept', 'the restored cluster has what was written before the backup');
  } finally {
    copy.close();
  }
  const members = ok(await kubectl(['quorum', 'members', RESTORED, '-n', ns]), 'members of the restored cluster');
  assert.equal(members.trimEnd().split('\n').length, 2);
  await env.client.delete(EtcdClusters, { namespace: ns, name: RESTORED });
});
