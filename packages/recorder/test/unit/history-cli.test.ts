// `quorum history` without a cluster: the command line, naming kinds as kubectl does, choosing records (the
// restore default included), the patch that makes a restored object exact, and the whole command on record
// stores in a temporary directory (--path), with what it prints and its exit codes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyPatch } from 'diff';
import { parse } from 'yaml';
import { historyCommand } from '../../src/cli/history.ts';
import { parseHistoryArgs, parseTarget } from '../../src/cli/args.ts';
import { CliError, UsageError } from '../../src/cli/errors.ts';
import { resolveKind } from '../../src/cli/kinds.ts';
import { pluralOf } from '../../src/kind-names.ts';
import { leftoverOps } from '../../src/cli/restore.ts';
import { chooseRecord, chooseRestore, findRecord } from '../../src/cli/select.ts';
import { refusal } from '../../src/cli/source.ts';
import type { KindInfo, RecordResponse, RecordSummary } from '../../src/history/protocol.ts';
import { CM, writeFixture } from './history-fixture.ts';

async function run(argv: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await historyCommand(argv, { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) }, env });
  return { code, out, err };
}

test('the command line: verbs, KIND/NAME, options, and the combinations that make no sense', () => {
  const show = parseHistoryArgs(['show', 'deploy/web', '-n', 'prod', '--record', '20260301', '--recorder', 'team/b']);
  assert.deepEqual(
    { verb: show.verb, target: show.target, namespace: show.namespace, record: show.record, recorder: show.recorder, recorderNamespace: show.recorderNamespace, recorderService: show.recorderService },
    { verb: 'show', target: { kind: 'deploy', name: 'web' }, namespace: 'prod', record: '20260301', recorder: 'team/b', recorderNamespace: 'quorum-system', recorderService: 'quorum-recorder' },
  );
  assert.deepEqual(parseHistoryArgs(['list']).target, undefined);
  assert.deepEqual(parseHistoryArgs(['list', 'cm', '-A']).target, { kind: 'cm' });
  assert.equal(parseHistoryArgs(['diff', 'cm/app', '--to', 'current']).to, 'current');
  assert.equal(parseHistoryArgs(['restore', 'cm/app', '--dry-run']).dryRun, true);
  assert.equal(parseHistoryArgs(['list', '--token', 't1']).token, 't1');
  assert.equal(parseHistoryArgs(['list'], { QUORUM_HISTORY_TOKEN: 't2', QUORUM_RECORDER_NAMESPACE: 'ops' }).token, 't2');
  assert.equal(parseHistoryArgs(['list'], { QUORUM_RECORDER_NAMESPACE: 'ops' }).recorderNamespace, 'ops');
  assert.equal(parseHistoryArgs([]).verb, 'help');
  assert.equal(parseHistoryArgs(['show', '--help']).verb, 'help');
  assert.deepEqual(parseTarget('system:reader'), { kind: 'system:reader' });

  const refused: [string[], RegExp][] = [
    [['undo', 'cm/app'], /unknown command "undo"/],
    [['show'], /show needs KIND\/NAME/],
    [['restore', 'cm'], /restore needs KIND\/NAME/],
    [['show', 'cm/'], /"cm\/" is not KIND\/NAME/],
    [['show', 'cm/a/b'], /is not KIND\/NAME/],
    [['show', 'cm/app', '-A'], /-A is for list/],
    [['list', '-n', 'x', '-A'], /exclude each other/],
    [['list', 'cm/app', '--record', 'x'], /--record is for show, diff and restore/],
    [['show', 'cm/app', '--to', 'current'], /--to is for diff/],
    [['diff', 'cm/app', '--dry-run'], /--dry-run is for restore/],
    [['list', '-o', 'yaml'], /only -o json/],
    [['diff', 'cm/app', '-o', 'json'], /-o json is for list and show/],
    [['list', '--frobnicate'], /Unknown option '--frobnicate'/],
    [['show', 'cm/app', 'extra'], /unexpected arguments: extra/],
  ];
  for (const [argv, message] of refused) assert.throws(() => parseHistoryArgs(argv), (e: unknown) => e instanceof UsageError && message.test(e.message), argv.join(' '));
});

test('kinds are named as kubectl names them, among the kinds that have records', () => {
  const kinds: KindInfo[] = [
    { group: 'apps', kind: 'Deployment', namespaced: true },
    { group: '', kind: 'ConfigMap', namespaced: true },
    { group: 'networking.k8s.io', kind: 'Ingress', namespaced: true },
    { group: 'etcd.quorum.dev', kind: 'EtcdCluster', namespaced: true },
    { group: 'example.com', kind: 'Deployment', namespaced: true },
    { group: '', kind: 'Endpoints', namespaced: true },
    { group: 'policy', kind: 'NetworkPolicy', namespaced: true },
  ];
  const name = (token: string): string => {
    const k = resolveKind(token, kinds);
    return `${k.kind}.${k.group}`;
  };
  for (const token of ['cm', 'configmap', 'ConfigMap', 'configmaps', 'CONFIGMAP']) assert.equal(name(token), 'ConfigMap.');
  for (const token of ['ingress', 'ingresses', 'ing', 'Ingress.networking.k8s.io', 'ingresses.networking.k8s.io']) assert.equal(name(token), 'Ingress.networking.k8s.io');
  for (const token of ['etcd', 'etcdcluster', 'etcdclusters']) assert.equal(name(token), 'EtcdCluster.etcd.quorum.dev');
  for (const token of ['deploy', 'deployment.apps', 'deployments.apps']) assert.equal(name(token), 'Deployment.apps');
  assert.equal(name('deployment.example.com'), 'Deployment.example.com');
  assert.equal(name('endpoints'), 'Endpoints.');
  assert.equal(name('networkpolicies'), 'NetworkPolicy.policy');
  assert.throws(() => resolveKind('deployment', kinds), /deployment is ambiguous: it names Deployment\.apps and Deployment\.example\.com; write it as KIND\.GROUP/);
  assert.throws(() => resolveKind('secret', kinds), /no records of any kind named "secret" \(kinds with records: Deployment\.apps, ConfigMap, Ingress/);
  assert.throws(() => resolveKind('cm', []), /there are no records yet/);
  assert.deepEqual(['Service', 'Ingress', 'NetworkPolicy', 'StatefulSet', 'Endpoints', 'Gateway'].map(pluralOf), ['services', 'ingresses', 'networkpolicies', 'statefulsets', 'endpoints', 'gateways']);
});

const rec = (id: string, reason: RecordSummary['reason'] = 'Updated', store = 'a'): RecordSummary => ({ store, id, reason, seenLate: false, recordedAt: '', resourceVersion: id.split('-')[1] ?? '' });

test('records are chosen by ID, file name or unique prefix; the default is the newest', () => {
  const records = [rec('20260301T120000.000Z-1'), rec('20260301T130000.000Z-2'), rec('20260302T090000.000Z-3')];
  assert.equal(findRecord(records, '20260301T130000.000Z-2', CM).id, '20260301T130000.000Z-2');
  assert.equal(findRecord(records, '20260301T130000.000Z-2.yaml', CM).id, '20260301T130000.000Z-2');
  assert.equal(findRecord(records, '20260302', CM).id, '20260302T090000.000Z-3');
  assert.throws(() => findRecord(records, '20260301', CM), /"20260301" names several records of ConfigMap default\/app: 20260301T120000\.000Z-1, 20260301T130000\.000Z-2/);
  assert.throws(() => findRecord(records, '2025', CM), (e: unknown) => e instanceof CliError && /^ConfigMap default\/app has no record 2025 \(its records: 20260301T120000\.000Z-1, /.test(e.message));
  assert.throws(() => findRecord([...records, rec('20260302T090000.000Z-3', 'Updated', 'b')], '20260302', CM), /is in several stores \(a, b\); choose one with --recorder/);
  assert.equal(chooseRecord(records, undefined, CM).id, '20260302T090000.000Z-3');
  assert.throws(() => chooseRecord([], undefined, CM), /ConfigMap default\/app has no records yet/);
});

test('restore chooses the last record before a deletion, or the previous version of a live object; never a stale one', () => {
  const changes = [rec('20260301T120000.000Z-1'), rec('20260301T130000.000Z-2')];
  const deleted = [...changes, rec('20260301T140000.000Z-3', 'Deleted')];
  const seen = [{ store: 'a', resourceVersion: '3', seenAt: '2026-03-01T13:00:00.000Z' }];
  assert.equal(chooseRestore(deleted, [], false, undefined, CM).record.id, '20260301T140000.000Z-3', 'gone: its last state');
  assert.equal(chooseRestore(changes, seen, true, undefined, CM).record.id, '20260301T130000.000Z-2', 'live: the version before its last change');
  const recreated = chooseRestore(deleted, seen, true, undefined, CM);
  assert.equal(recreated.record.id, '20260301T140000.000Z-3');
  assert.match(recreated.note ?? '', /was deleted and created again since its newest record/);
  assert.throws(() => chooseRestore(changes, seen, false, undefined, CM), /ConfigMap default\/app is gone, but the recorder has not recorded its deletion yet \(store a last saw resourceVersion 3/);
  assert.equal(chooseRestore(changes, seen, false, '20260301T12', CM).record.id, '20260301T120000.000Z-1', 'a record named explicitly is taken as it is');
  assert.throws(() => chooseRestore([], seen, true, undefined, CM), /has no records: the recorder has seen no change of it/);
  assert.throws(() => chooseRestore([], [], false, undefined, CM), /does not exist and has no records/);
});

test('the patch to the record: labels and annotations key by key (leaving what cleaning hides), added keys removed, lists whole', () => {
  const current = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'app', namespace: 'default', labels: { app: 'x', 'added/by': 'edit' }, annotations: { note: 'new' } },
    data: { color: 'yellow', extra: 'x' },
    spec: { ports: [{ port: 1 }, { port: 2 }] },
    status: { phase: 'whatever' },
  };
  const wanted = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: 'default', labels: { app: 'y' } }, data: { color: 'blue' }, spec: { ports: [{ port: 1 }] } };
  assert.deepEqual(leftoverOps(current, wanted), [
    { op: 'remove', path: '/metadata/labels/added~1by' },
    { op: 'replace', path: '/metadata/labels/app', value: 'y' },
    { op: 'remove', path: '/metadata/annotations/note' },
    { op: 'remove', path: '/data/extra' },
    { op: 'replace', path: '/data/color', value: 'blue' },
    { op: 'replace', path: '/spec/ports', value: [{ port: 1 }] },
  ]);
  assert.deepEqual(leftoverOps(wanted, wanted), [], 'nothing left: no patch');
  // The real object's annotations hold only what cleaning hides (a Deployment's revision): cleaned, it has none.
  // An annotation of the record is added into that map, not over it.
  const record = { metadata: { name: 'web', annotations: { team: 'a' } } };
  assert.deepEqual(leftoverOps({ metadata: { name: 'web' } }, record, { annotations: { 'deployment.kubernetes.io/revision': '3' } }), [{ op: 'add', path: '/metadata/annotations/team', value: 'a' }]);
  assert.deepEqual(leftoverOps({ metadata: { name: 'web' } }, record, {}), [
    { op: 'add', path: '/metadata/annotations', value: {} },
    { op: 'add', path: '/metadata/annotations/team', value: 'a' },
  ], 'no map at all: it is created first');
});

test('refusals are reported in the words of whoever refused', () => {
  assert.equal(refusal(403, { error: 'the records of Secret a/b are not shown: no' }, 'the endpoint'), 'the records of Secret a/b are not shown: no');
  assert.equal(
    refusal(403, { kind: 'Status', message: 'services "https:quorum-recorder:history" is forbidden' }, 'the endpoint'),
    'the API server does not let you reach the endpoint: services "https:quorum-recorder:history" is forbidden',
  );
  assert.match(refusal(503, { kind: 'Status', message: 'no endpoints available for service' }, 'the endpoint'), /is not available: no endpoints available .*is the recorder running\?/);
  assert.match(refusal(404, { kind: 'Status', message: 'services "quorum-recorder" not found' }, 'the endpoint'), /was not found: .*--recorder-namespace/);
  assert.equal(refusal(502, '<html>bad gateway</html>', 'the endpoint'), 'the endpoint answered 502: <html>bad gateway</html>');
});

test('quorum history --path: list, list KIND/NAME, show, diff, as a user reads them', async (t) => {
  const { root, ids, cmData } = await writeFixture(t);
  const all = await run(['list', '--path', root]);
  assert.equal(all.code, 0, all.err);
  const lines = all.out.trimEnd().split('\n');
  assert.match(lines[0]!, /^NAMESPACE\s+KIND\s+NAME\s+RECORDS\s+NEWEST\s+REASON\s+STATE\s+RECORDER$/);
  assert.match(lines[1]!, /^\(cluster\)\s+ClusterRole\.rbac\.authorization\.k8s\.io\s+reader\s+1\s+2026-03-01T12:08:00Z\s+Deleted\s+deleted\s+rec-a$/);
  assert.match(lines[2]!, /^default\s+ConfigMap\s+app\s+3\s+2026-03-01T12:03:00Z\s+Updated\s+live\s+rec-a$/);
  assert.match(lines[4]!, /^default\s+Deployment\.apps\s+web\s+2\s+.*Deleted\s+deleted\s+rec-a$/);
  assert.equal(lines.length, 6);

  const inProd = await run(['list', '--path', root, '-n', 'prod', '-o', 'json']);
  assert.deepEqual((JSON.parse(inProd.out) as { objects: { name: string }[] }).objects.map((o) => o.name), ['db']);

  const one = await run(['list', 'configmap/app', '--path', root, '-n', 'default', '--recorder', 'rec-a']);
  assert.equal(one.code, 0, one.err);
  const [state, header, ...rows] = one.out.trimEnd().split('\n');
  assert.equal(state, 'ConfigMap default/app: live, last seen at resourceVersion 4 at 2026-03-01T12:04:00Z; 3 record(s)');
  assert.match(header!, /^RECORD\s+RECORDED\s+REASON\s+CHANGED BY\s+CHANGED AT$/);
  assert.deepEqual(rows.map((r) => r.split(/\s{2,}/)[0]), ids.cm);
  assert.match(rows[0]!, /Updated\s+kubectl-edit \(Update\)\s+2026-03-01T12:02:00Z$/);

  // list KIND/NAME without -n: the name in every namespace it has records in.
  const everywhere = await run(['list', 'cm/app', '--path', root]);
  assert.equal(everywhere.code, 0, everywhere.err);
  assert.match(everywhere.out, /^ConfigMap default\/app: live/);

  const show = await run(['show', 'cm/app', '--path', root, '--recorder', 'rec-a', '--record', ids.cm[1]!]);
  assert.equal(show.code, 0, show.err);
  assert.match(show.out, new RegExp(`^# ConfigMap default/app, record ${ids.cm[1]!.replace('.', '\\.')} \\(Updated, recorded 2026-03-01T12:02:00Z, resourceVersion 2\\): the version before a change by kubectl-edit \\(Update\\) at 2026-03-01T12:03:00Z\\n`));
  assert.deepEqual((parse(show.out) as { data: unknown }).data, cmData[1], 'the output is the record, ready for kubectl apply');
  const newest = await run(['show', 'cm/app', '--path', root, '-o', 'json']);
  assert.equal((JSON.parse(newest.out) as RecordResponse).record.id, ids.cmInB[0], 'the newest record of any store by default');

  const diff = await run(['diff', 'cm/app', '--path', root, '--recorder', 'rec-a', '--record', ids.cm[0]!]);
  assert.equal(diff.code, 0, diff.err);
  const first = await run(['show', 'cm/app', '--path', root, '--recorder', 'rec-a', '--record', ids.cm[0]!]);
  const second = await run(['show', 'cm/app', '--path', root, '--recorder', 'rec-a', '--record', ids.cm[1]!]);
  const body = (text: string): string => text.slice(text.indexOf('\n') + 1);
  assert.equal(applyPatch(body(first.out), diff.out), body(second.out), 'diff shows the change the record was taken for');
  const toCurrent = await run(['diff', 'cm/app', '--path', root, '--recorder', 'rec-a', '--record', ids.cm[0]!, '--to', 'current']);
  assert.match(toCurrent.out, /^\+\+\+ current \(resourceVersion 4\)$/m);
  const same = await run(['diff', 'cm/app', '--path', root, '--recorder', 'rec-a', '--record', ids.cm[0]!, '--to', ids.cm[0]!]);
  assert.equal(same.out, '');
  assert.match(same.err, /are the same/);
  const deletion = await run(['diff', 'deploy/web', '--path', root]);
  assert.match(deletion.out, /^\+\+\+ \(deleted\)$/m);
  const clusterScoped = await run(['show', 'clusterrole/reader', '--path', root, '-n', 'ignored']);
  assert.equal(clusterScoped.code, 0, clusterScoped.err);
  assert.match(clusterScoped.out, /^# ClusterRole\.rbac\.authorization\.k8s\.io reader, record/);
});

test('quorum history --path: errors name the object and the record, with exit code 1; usage errors exit 2', async (t) => {
  const { root, ids } = await writeFixture(t);
  const missing = await run(['show', 'cm/app', '--path', root, '--recorder', 'rec-a', '--record', '20250101T000000.000Z-1']);
  assert.equal(missing.code, 1);
  assert.equal(missing.err, `quorum history: ConfigMap default/app has no record 20250101T000000.000Z-1 (its records: ${ids.cm.join(', ')})\n`);
  const noObject = await run(['show', 'cm/nope', '--path', root, '-n', 'default']);
  assert.equal(noObject.err, 'quorum history: no records of ConfigMap default/nope\n');
  const noKind = await run(['list', 'ingress/x', '--path', root]);
  assert.equal(noKind.code, 1);
  assert.match(noKind.err, /no records of any kind named "ingress" \(kinds with records: ClusterRole\.rbac\.authorization\.k8s\.io, ConfigMap, Deployment\.apps, Secret\)/);
  const noStore = await run(['list', '--path', root, '--recorder', 'nope']);
  assert.match(noStore.err, /no record store named "nope"/);
  const usage = await run(['show', 'cm/app', '-A']);
  assert.equal(usage.code, 2);
  assert.match(usage.err, /^quorum history: -A is for list; show needs the object's namespace \(-n\)\nusage: quorum history/);
  const help = await run(['--help']);
  assert.equal(help.code, 0);
  assert.match(help.out, /^usage: quorum history <command>/);
});
