// `kubectl quorum` without a cluster: the command line and its refusals, the tables and summaries as a user
// reads them, and the whole command against a fake API server through a kubeconfig (the context's
// namespace, --context, -n), with what it creates, how --wait follows, and its exit codes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { EtcdBackup } from '../../src/api/etcdbackup.ts';
import type { EtcdCluster } from '../../src/api/etcdcluster.ts';
import { UsageError } from '@quorum/kit';
import { parseDuration, parsePluginArgs } from '../../src/kubectl/args.ts';
import { backupSummary, clusterDetail, conditionIsFine, membersTable, statusTable } from '../../src/kubectl/format.ts';
import { kubectlQuorum } from '../../src/kubectl/plugin.ts';
import { FakeQuorumApi } from './kubectl-fake-api.ts';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const ago = (seconds: number): string => new Date(NOW - seconds * 1000).toISOString();

function cluster(name: string, namespace: string, over: { spec?: Partial<EtcdCluster['spec']>; status?: EtcdCluster['status'] } = {}): EtcdCluster {
  return {
    apiVersion: 'etcd.quorum.dev/v1alpha1',
    kind: 'EtcdCluster',
    metadata: { name, namespace, creationTimestamp: ago(3 * 86400) },
    spec: { replicas: 3, ...over.spec },
    status: over.status ?? {
      phase: 'Running',
      readyReplicas: 3,
      replicas: 3,
      currentVersion: '3.6.16',
      clusterVersion: '3.6.0',
      leader: `${name}-1`,
      conditions: [
        { type: 'Available', status: 'True', reason: 'QuorumHealthy', message: '3 of 3 members ready', lastTransitionTime: ago(3600) },
        { type: 'Progressing', status: 'False', reason: 'Stable', message: 'nothing to do', lastTransitionTime: ago(3600) },
        { type: 'Degraded', status: 'False', reason: 'AllMembersHealthy', message: '', lastTransitionTime: ago(3600) },
      ],
      members: [
        { name: `${name}-0`, id: 'a1', ready: true, leader: false, learner: false, version: '3.6.16', dbSize: 20480, peerURL: `http://${name}-0.${name}.${namespace}.svc:2380` },
        { name: `${name}-1`, id: 'b2', ready: true, leader: true, learner: false, version: '3.6.16', dbSize: 2 * 1024 * 1024, peerURL: `http://${name}-1.${name}.${namespace}.svc:2380` },
      ],
    },
  };
}

function backupOf(name: string, namespace: string, clusterName: string, status: EtcdBackup['status']): EtcdBackup {
  return { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdBackup', metadata: { name, namespace, creationTimestamp: ago(7200) }, spec: { clusterName, destination: { pvc: { claimName: 'backups', path: 'etcd' } } }, status };
}

const succeeded = (completedSecondsAgo: number): EtcdBackup['status'] => ({
  phase: 'Succeeded', location: 'pvc://backups/etcd/prod-20260301T100000Z-rev812.db', sizeBytes: 3 * 1024 * 1024, sha256: 'ab'.repeat(32), revision: 812, member: 'prod-0', etcdVersion: '3.6.16', completedAt: ago(completedSecondsAgo),
});
const failedStatus: EtcdBackup['status'] = {
  phase: 'Failed', completedAt: ago(300),
  conditions: [{ type: 'Failed', status: 'True', reason: 'AccessDenied', message: 'the bucket refused the credentials', lastTransitionTime: ago(300) }],
};

test('the command line: verbs, destinations, and the combinations that make no sense', () => {
  assert.deepEqual(parsePluginArgs(['status']), { verb: 'status', help: false, allNamespaces: false });
  assert.deepEqual(parsePluginArgs(['status', 'prod', '-n', 'db', '--context', 'c', '--kubeconfig', 'k']), { verb: 'status', help: false, namespace: 'db', context: 'c', kubeconfig: 'k', allNamespaces: false, name: 'prod' });
  assert.deepEqual(parsePluginArgs(['members', 'prod']), { verb: 'members', help: false, name: 'prod' });
  const backup = parsePluginArgs(['backup', 'prod', '--like', 'etcdbackupschedule/nightly', '--wait', '--timeout', '10m']);
  assert.deepEqual(backup, { verb: 'backup', help: false, cluster: 'prod', destination: { from: 'like', kind: 'EtcdBackupSchedule', name: 'nightly' }, wait: true, timeoutMs: 600_000 });
  assert.deepEqual(parsePluginArgs(['backup', 'prod', '--pvc', 'c', '--path', 'p']), { verb: 'backup', help: false, cluster: 'prod', destination: { from: 'pvc', claimName: 'c', path: 'p' }, wait: false, timeoutMs: 1_800_000 });
  assert.deepEqual((parsePluginArgs(['backup', 'prod', '--s3-bucket', 'b', '--s3-secret', 's', '--s3-path-style', '--s3-endpoint', 'http://minio:9000']) as { destination: unknown }).destination, {
    from: 's3', bucket: 'b', credentialsSecret: 's', endpoint: 'http://minio:9000', forcePathStyle: true,
  });
  assert.deepEqual(parsePluginArgs(['restore', 'b1', '--to', 'again', '--replicas', '1', '--version', '3.6.16']), { verb: 'restore', help: false, backup: 'b1', to: 'again', wait: false, timeoutMs: 1_800_000, replicas: 1, version: '3.6.16' });
  assert.deepEqual(parsePluginArgs([]), { verb: 'help', help: true });
  assert.deepEqual(parsePluginArgs(['members', '-h']), { verb: 'help', help: true });
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration('45'), 45_000);

  const refused: [string[], RegExp][] = [
    [['describe', 'prod'], /unknown command "describe"/],
    [['members'], /members needs the cluster/],
    [['backup'], /backup needs the cluster/],
    [['restore', 'b1'], /restore needs the backup and the new cluster/],
    [['status', '-A', '-n', 'x'], /exclude each other/],
    [['status', 'prod', '-A'], /give its namespace with -n/],
    [['members', 'prod', '-A'], /--all-namespaces is for status/],
    [['backup', 'prod', '--like', 'b', '--pvc', 'c'], /--like and --pvc exclude each other/],
    [['backup', 'prod', '--path', 'p'], /--path is for --pvc/],
    [['backup', 'prod', '--s3-bucket', 'b'], /--s3-bucket needs --s3-secret/],
    [['backup', 'prod', '--s3-region', 'eu'], /--s3-region is for --s3-bucket/],
    [['backup', 'prod', '--like', 'pods/x'], /name an EtcdBackup or an EtcdBackupSchedule/],
    [['backup', 'prod', '--to', 'x'], /--to is for restore/],
    [['restore', 'b1', '--to', 'x', '--pvc', 'c'], /--pvc is for backup/],
    [['restore', 'b1', '--to', 'x', '--replicas', 'two'], /--replicas two/],
    [['status', '--wait'], /--wait is for backup and restore/],
    [['backup', 'prod', '--timeout', '5m'], /--timeout is for --wait/],
    [['backup', 'prod', '--wait', '--timeout', 'soon'], /not a duration/],
    [['status', 'a', 'b'], /unexpected arguments: b/],
    [['status', '--frobnicate'], /Unknown option '--frobnicate'/],
  ];
  for (const [argv, message] of refused) assert.throws(() => parsePluginArgs(argv), (e: unknown) => e instanceof UsageError && message.test(e.message), argv.join(' '));
});

test('the status table: one row per cluster, then what needs attention', () => {
  const healthy = cluster('prod', 'db');
  const troubled = cluster('stage', 'db', {
    spec: { tls: { peer: {}, client: {} } },
    status: {
      phase: 'Degraded', readyReplicas: 2, replicas: 3, currentVersion: '3.5.21', clusterVersion: '3.5.0', targetVersion: '3.6.16', leader: 'stage-0',
      tls: { peer: { mode: 'Operator', notAfter: '2027-01-01T00:00:00Z' }, client: { mode: 'Operator' }, clientSecret: 'stage-client-tls' },
      conditions: [
        { type: 'Available', status: 'True', reason: 'QuorumHealthy', message: '2 of 3', lastTransitionTime: ago(60) },
        { type: 'Progressing', status: 'False', reason: 'UpgradeFailed', message: 'rollout halted', lastTransitionTime: ago(60) },
        { type: 'Degraded', status: 'True', reason: 'MemberCrashLooping', message: 'stage-2 keeps exiting:\nexit 1', lastTransitionTime: ago(60) },
      ],
      rollout: { target: 'h', fromVersion: '3.5.21', targetVersion: '3.6.16', startedAt: ago(600), member: 'stage-2', halted: { member: 'stage-2', reason: 'CrashLooping', message: 'exit code 1', at: ago(120) } },
    },
  });
  const backups = [
    backupOf('prod-old', 'db', 'prod', succeeded(86400)),
    backupOf('prod-new', 'db', 'prod', succeeded(7200)),
    backupOf('prod-bad', 'db', 'prod', failedStatus),
    backupOf('elsewhere', 'other', 'prod', succeeded(10)),
  ];
  const out = statusTable([healthy, troubled], backups, NOW, { withNamespace: false });
  const lines = out.split('\n');
  assert.match(lines[0]!, /^NAME\s+PHASE\s+READY\s+VERSION \(CLUSTER\)\s+LEADER\s+TLS\s+ROLLOUT\s+LAST BACKUP\s+AGE$/);
  assert.match(lines[1]!, /^prod\s+Running\s+3\/3\s+3\.6\.16 \(3\.6\.0\)\s+prod-1\s+none\s+-\s+prod-new \(2h ago\)\s+3d$/);
  assert.match(lines[2]!, /^stage\s+Degraded\s+2\/3\s+3\.5\.21 \(3\.5\.0\)\s+stage-0\s+peer\+client\s+halted at stage-2 \(CrashLooping\)\s+none\s+3d$/);
  assert.ok(out.includes('prod: backup prod-bad Failed 5m ago: AccessDenied: the bucket refused the credentials'), out);
  assert.ok(out.includes('stage: Progressing=False UpgradeFailed: rollout halted'), out);
  assert.ok(out.includes('stage: Degraded=True MemberCrashLooping: stage-2 keeps exiting: | exit 1'), out);
  assert.ok(out.includes('stage: rollout to 3.6.16 halted at stage-2 (CrashLooping) 2m ago: exit code 1'), out);
  assert.ok(!out.includes('Available='), 'fine conditions are not listed');
  assert.match(statusTable([healthy], [], NOW, { withNamespace: true }).split('\n')[1]!, /^db\s+prod\s+Running/);

  const detail = clusterDetail(troubled, [], [{ apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdBackupSchedule', metadata: { name: 'nightly', namespace: 'db' }, spec: { clusterName: 'stage', schedule: '0 3 * * *', destination: { s3: { bucket: 'bk', prefix: 'etcd', credentialsSecret: 's' } } }, status: { lastSuccessfulTime: ago(32400), nextScheduleTime: '2026-03-02T03:00:00Z' } }], NOW);
  assert.match(detail, /^EtcdCluster db\/stage\n/);
  assert.match(detail, /version: +3\.5\.21 \(cluster version 3\.5\.0\), target 3\.6\.16/);
  assert.match(detail, /tls: +peer operator-managed, expires 2027-01-01T00:00:00Z; client operator-managed; client certificate in Secret stage-client-tls/);
  assert.match(detail, /rollout: +3\.5\.21 → 3\.6\.16, started 10m ago; HALTED at stage-2 \(CrashLooping\): exit code 1/);
  assert.match(detail, /conditions: +Progressing=False UpgradeFailed: rollout halted\n +Degraded=True MemberCrashLooping/);
  assert.match(detail, /backups: +no Succeeded backup/);
  assert.match(detail, /schedules: +nightly "0 3 \* \* \*" to s3:\/\/bk\/etcd, last success 9h ago, next 2026-03-02T03:00:00Z/);
  assert.match(clusterDetail(healthy, backups, [], NOW), /conditions: +all fine\nbackups: +backup prod-new Succeeded 2h ago: pvc:\/\/backups\/etcd\/prod-20260301T100000Z-rev812\.db \(3\.0 MiB, revision 812\)\n +backup prod-bad Failed 5m ago/);
});

test('the members table, with long last errors in full below it', () => {
  const c = cluster('prod', 'db');
  const lastError = 'exit code 2; etcd said:\n{"level":"fatal","msg":"failed to open backend","error":"open /var/lib/etcd/member/snap/db: no space left on device"}';
  c.status!.members!.push({ name: 'prod-2', id: 'c3', ready: false, leader: false, learner: true, lastError });
  const out = membersTable(c);
  const lines = out.split('\n');
  assert.match(lines[0]!, /^NAME\s+ID\s+READY\s+LEADER\s+LEARNER\s+VERSION\s+DB SIZE\s+PEER URL\s+LAST ERROR$/);
  assert.match(lines[1]!, /^prod-0\s+a1\s+yes\s+no\s+no\s+3\.6\.16\s+20\.0 KiB\s+http:\/\/prod-0\.prod\.db\.svc:2380$/);
  assert.match(lines[2]!, /^prod-1\s+b2\s+yes\s+yes\s+no\s+3\.6\.16\s+2\.0 MiB/);
  assert.match(lines[3]!, /^prod-2\s+c3\s+no\s+no\s+yes\s+exit code 2; etcd said: \| \{"level":"fatal".*…$/);
  assert.ok(out.endsWith(`\nprod-2 last error:\n  exit code 2; etcd said:\n  ${lastError.split('\n')[1]}\n`), out);
  assert.equal(backupSummary(backupOf('b', 'db', 'prod', failedStatus)), 'EtcdBackup db/b Failed: AccessDenied: the bucket refused the credentials\n');
});

let api: FakeQuorumApi;
before(async () => {
  api = await FakeQuorumApi.start();
});
after(async () => {
  await api?.stop();
});

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await kubectlQuorum([...argv, '--kubeconfig', api.kubeconfig], { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) }, now: () => NOW, pollIntervalMs: 1 });
  return { code, out, err };
}

test("the namespace is -n, else the kubeconfig context's, else default; a missing object or context is named", async () => {
  api.put('etcdclusters', cluster('prod', 'team-a'));
  api.put('etcdclusters', cluster('web', 'default'));
  api.put('etcdclusters', cluster('other', 'team-b'));
  let r = await run(['status']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^NAME .*\nprod +Running +3\/3/);
  assert.ok(!r.out.includes('web') && !r.out.includes('other'), r.out);
  r = await run(['status', '--context', 'no-namespace']);
  assert.match(r.out, /\nweb +Running/);
  r = await run(['status', '-n', 'team-b']);
  assert.match(r.out, /\nother +Running/);
  r = await run(['status', '-A']);
  assert.match(r.out, /^NAMESPACE +NAME[^\n]*\ndefault +web[^\n]*\nteam-a +prod[^\n]*\nteam-b +other/);
  r = await run(['status', '-n', 'empty']);
  assert.deepEqual([r.code, r.out, r.err], [0, '', 'No EtcdClusters found in namespace empty.\n']);

  r = await run(['status', 'nope']);
  assert.deepEqual([r.code, r.err], [1, 'kubectl quorum: EtcdCluster team-a/nope not found\n']);
  r = await run(['members', 'nope', '-n', 'team-b']);
  assert.deepEqual([r.code, r.err], [1, 'kubectl quorum: EtcdCluster team-b/nope not found\n']);
  r = await run(['status', '--context', 'elsewhere']);
  assert.equal(r.code, 1);
  assert.match(r.err, /context "elsewhere" is not in the kubeconfig/);
  r = await run(['status', 'prod', '--bogus']);
  assert.equal(r.code, 2);
  assert.match(r.err, /Unknown option '--bogus'[\s\S]*usage: kubectl quorum/);

  r = await run(['status', 'prod']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^EtcdCluster team-a\/prod\nphase: +Running/);
  r = await run(['members', 'prod']);
  assert.match(r.out, /\nprod-1 +b2 +yes +yes +no/);

  api.served = false;
  try {
    r = await run(['status']);
    assert.equal(r.code, 1);
    assert.match(r.err, /does not serve EtcdCluster \(etcd\.quorum\.dev\/v1alpha1\): is the Quorum operator installed\?/);
  } finally {
    api.served = true;
  }
});

test('backup: to the destination asked for or the cluster\'s own; --wait follows it to Succeeded or Failed', async () => {
  api.put('etcdclusters', cluster('db1', 'team-a', { spec: { backup: { destination: { pvc: { claimName: 'own', path: 'snaps' } } } } }));
  api.put('etcdclusters', cluster('db2', 'team-a'));
  api.put('etcdbackupschedules', { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdBackupSchedule', metadata: { name: 'nightly', namespace: 'team-a' }, spec: { clusterName: 'other', schedule: '@daily', destination: { s3: { bucket: 'bk', credentialsSecret: 's3' } } } });
  const before = api.writes().length;

  let r = await run(['backup', 'db1']);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, 'etcdbackup.etcd.quorum.dev/db1-x1 created (cluster db1, to pvc://own/snaps from spec.backup.destination)\n');
  const created = api.writes()[before]!;
  assert.equal(created.path, '/apis/etcd.quorum.dev/v1alpha1/namespaces/team-a/etcdbackups');
  assert.deepEqual(created.body, { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdBackup', metadata: { generateName: 'db1-', namespace: 'team-a' }, spec: { clusterName: 'db1', destination: { pvc: { claimName: 'own', path: 'snaps' } } } });

  r = await run(['backup', 'db2', '--like', 'nightly', '--name', 'now']);
  assert.equal(r.out, 'etcdbackup.etcd.quorum.dev/now created (cluster db2, to s3://bk from EtcdBackupSchedule nightly)\n');
  r = await run(['backup', 'db2', '--like', 'nightly', '--name', 'now']);
  assert.deepEqual([r.code, r.err], [1, 'kubectl quorum: EtcdBackup team-a/now already exists: an EtcdBackup is one snapshot; choose another --name\n']);
  r = await run(['backup', 'db2', '--like', 'etcdbackup/missing']);
  assert.deepEqual([r.code, r.err], [1, 'kubectl quorum: --like etcdbackup/missing: EtcdBackup team-a/missing not found\n']);
  r = await run(['backup', 'db2']);
  assert.equal(r.code, 1);
  assert.match(r.err, /EtcdCluster team-a\/db2 has no spec\.backup\.destination and no EtcdBackupSchedule: say where with --like/);
  r = await run(['backup', 'gone', '--pvc', 'c']);
  assert.deepEqual([r.code, r.err], [1, 'kubectl quorum: EtcdCluster team-a/gone not found\n']);

  api.progress('etcdbackups', 'team-a', 'waited', [{ phase: 'Pending' }, { phase: 'Running', member: 'db2-0', job: 'waited-backup' }, { phase: 'Running', member: 'db2-0', job: 'waited-backup' }, succeeded(0)]);
  r = await run(['backup', 'db2', '--pvc', 'claim', '--name', 'waited', '--wait']);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.err, 'EtcdBackup team-a/waited: Pending\nEtcdBackup team-a/waited: Running (from member db2-0, job waited-backup)\nEtcdBackup team-a/waited: Succeeded\n');
  assert.match(r.out, /\nEtcdBackup team-a\/waited Succeeded\n +location: pvc:\/\/backups\/etcd\/prod-20260301T100000Z-rev812\.db\n +size: +3\.0 MiB\n +sha256: +(ab){32}\n +revision: 812 \(from member prod-0, etcd 3\.6\.16\)/);

  api.progress('etcdbackups', 'team-a', 'doomed', [{ phase: 'Running' }, failedStatus]);
  r = await run(['backup', 'db2', '--pvc', 'claim', '--name', 'doomed', '--wait']);
  assert.equal(r.code, 1);
  assert.match(r.out, /EtcdBackup team-a\/doomed Failed: AccessDenied: the bucket refused the credentials\n$/);

  api.progress('etcdbackups', 'team-a', 'slow', Array.from({ length: 10 }, () => ({ phase: 'Running' })));
  let clock = NOW;
  let err = '';
  const code = await kubectlQuorum(['backup', 'db2', '--pvc', 'claim', '--name', 'slow', '--wait', '--timeout', '30s', '--kubeconfig', api.kubeconfig], { stdout: { write: () => undefined }, stderr: { write: (s: string) => (err += s) }, now: () => (clock += 10_000), pollIntervalMs: 1 });
  assert.equal(code, 1);
  assert.match(err, /EtcdBackup team-a\/slow is still Running after 30 s; it goes on without the plugin \(kubectl get etcdbackup -n team-a slow -w\)/);
});

test('restore: refuses a missing or failed backup and an existing cluster; creates the EtcdRestore and follows it', async () => {
  api.put('etcdbackups', backupOf('good', 'team-a', 'prod', succeeded(60)));
  api.put('etcdbackups', backupOf('bad', 'team-a', 'prod', failedStatus));
  let r = await run(['restore', 'missing', '--to', 'again']);
  assert.deepEqual([r.code, r.err], [1, 'kubectl quorum: EtcdBackup team-a/missing not found\n']);
  r = await run(['restore', 'bad', '--to', 'again']);
  assert.deepEqual([r.code, r.err], [1, 'kubectl quorum: EtcdBackup team-a/bad Failed (AccessDenied: the bucket refused the credentials): there is no snapshot to restore\n']);
  r = await run(['restore', 'good', '--to', 'prod']);
  assert.deepEqual([r.code, r.err], [1, 'kubectl quorum: EtcdCluster team-a/prod already exists: a restore creates a new cluster; choose another --to\n']);

  const writes = api.writes().length;
  api.progress('etcdrestores', 'team-a', 'again', [
    { phase: 'Restoring', conditions: [{ type: 'Complete', status: 'False', reason: 'ClusterNotAvailable', message: 'waiting for EtcdCluster again to be Available', lastTransitionTime: ago(1) }] },
    { phase: 'Succeeded', conditions: [{ type: 'Complete', status: 'True', reason: 'ClusterAvailable', message: '', lastTransitionTime: ago(0) }] },
  ]);
  r = await run(['restore', 'good', '--to', 'again-new', '--name', 'again', '--replicas', '1', '--wait']);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(api.writes()[writes]!.body, { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdRestore', metadata: { name: 'again', namespace: 'team-a' }, spec: { clusterName: 'again-new', backupName: 'good', clusterSpec: { replicas: 1 } } });
  assert.match(r.out, /^etcdrestore\.etcd\.quorum\.dev\/again created \(new EtcdCluster again-new from EtcdBackup good\)\nEtcdRestore team-a\/again Succeeded\n$/);
  assert.equal(r.err, 'EtcdRestore team-a/again: Restoring (Complete=False ClusterNotAvailable: waiting for EtcdCluster again to be Available)\nEtcdRestore team-a/again: Succeeded\n');

  api.progress('etcdrestores', 'team-a', 'refused', [{ phase: 'Pending', conditions: [{ type: 'Complete', status: 'False', reason: 'ClusterExists', message: 'an EtcdCluster of spec.clusterName exists', lastTransitionTime: ago(0) }] }]);
  r = await run(['restore', 'good', '--to', 'raced', '--name', 'refused', '--wait']);
  assert.equal(r.code, 1);
  assert.match(r.out, /EtcdRestore team-a\/refused Pending: ClusterExists: an EtcdCluster of spec.clusterName exists\n$/);
});

test('which conditions need attention: good-news conditions when False, the others when True', () => {
  const c = (type: string, status: 'True' | 'False', reason = 'R') => ({ type, status, reason, message: '', lastTransitionTime: '2026-01-01T00:00:00Z' });
  assert.equal(conditionIsFine(c('Available', 'True')), true);
  assert.equal(conditionIsFine(c('MembersUpToDate', 'True')), true);
  assert.equal(conditionIsFine(c('MembersUpToDate', 'False')), false);
  assert.equal(conditionIsFine(c('Degraded', 'False')), true);
  assert.equal(conditionIsFine(c('EvenReplicas', 'True')), false);
  assert.equal(conditionIsFine(c('Progressing', 'False', 'Stable')), true);
  assert.equal(conditionIsFine(c('Progressing', 'True', 'RollingUpdate')), false);
});
