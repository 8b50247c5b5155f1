// The planner, step by step: a Redis from nothing to Available, a Sentinel failover followed (never led), the
// operator's own failover without Sentinels, and the waits that keep a lost primary from coming back as primary.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bestReplica, decidedPrimary, FAILOVER_WAIT_MS, plan } from '../../src/plan/plan.ts';
import type { Action, InstanceReading, Observed, SentinelReading } from '../../src/plan/types.ts';
import { host, observed, pod } from './observed-fixture.ts';

const master = (offset = 100): InstanceReading => ({ ok: true, role: 'master', offset, version: '7.0.15' });
const replicaOf = (primary: string, offset = 100): InstanceReading => ({ ok: true, role: 'slave', primaryHost: host(primary), linkUp: true, offset, version: '7.0.15' });
const says = (primary: string): SentinelReading => ({ ok: true, primaryHost: host(primary) });
const silent: SentinelReading = { ok: false, error: 'connect ECONNREFUSED' };

/** A healthy Redis: cache-0 primary, cache-1 and cache-2 replicas, three Sentinels naming cache-0. */
function healthy(over: Partial<Observed> = {}): Observed {
  return observed({}, {
    pods: new Map([
      pod('cache-0', { roleLabel: 'primary' }),
      pod('cache-1', { roleLabel: 'replica' }),
      pod('cache-2', { roleLabel: 'replica' }),
      pod('cache-sentinel-0'),
      pod('cache-sentinel-1'),
      pod('cache-sentinel-2'),
    ]),
    instances: new Map([['cache-0', master()], ['cache-1', replicaOf('cache-0')], ['cache-2', replicaOf('cache-0')]]),
    sentinels: new Map([['cache-sentinel-0', says('cache-0')], ['cache-sentinel-1', says('cache-0')], ['cache-sentinel-2', says('cache-0')]]),
    ...over,
  });
}

test('from nothing: Secret, ConfigMap naming cache-0, Services, claims, instance pods, then Sentinels once the primary is ready', () => {
  assert.deepEqual(plan(observed({}, { auth: 'generate', config: undefined })), { type: 'create-secret' });
  assert.deepEqual(plan(observed({}, { config: undefined })), { type: 'write-config', primary: 'cache-0', reason: 'Bootstrap' });
  assert.deepEqual(plan(observed({}, { missingServices: ['cache', 'cache-headless'] })), { type: 'create-services', names: ['cache', 'cache-headless'] });
  assert.deepEqual(plan(observed({}, { claims: new Set(['data-cache-0']) })), { type: 'create-claim', instance: 'cache-1' });
  assert.deepEqual(plan(observed()), { type: 'create-pod', pod: 'cache-0', component: 'redis' });
  const instancesUp = new Map([pod('cache-0', { ready: false }), pod('cache-1', { ready: false }), pod('cache-2', { ready: false })]);
  assert.equal((plan(observed({}, { pods: instancesUp })) as { reason: string }).reason, 'WaitingForPrimary');
  instancesUp.set(...pod('cache-0'));
  assert.deepEqual(plan(observed({}, { pods: instancesUp })), { type: 'create-pod', pod: 'cache-sentinel-0', component: 'sentinel' });
});

test('before the Sentinels answer, the recorded primary is labelled once it says it is primary, the replicas once they say so', () => {
  const pods = new Map([pod('cache-0'), pod('cache-1'), pod('cache-2'), pod('cache-sentinel-0', { ready: false }), pod('cache-sentinel-1'), pod('cache-sentinel-2')]);
  const sentinels = new Map([['cache-sentinel-0', silent]]);
  assert.deepEqual(plan(observed({}, { pods, sentinels, instances: new Map([['cache-0', { ok: false, error: 'LOADING' }]]) })), { type: 'none' }, 'no label without the instance saying so');
  const instances = new Map([['cache-0', master()], ['cache-1', replicaOf('cache-0')], ['cache-2', replicaOf('cache-0')]]);
  assert.deepEqual(plan(observed({}, { pods, sentinels, instances })), { type: 'label-role', pod: 'cache-0', role: 'primary' });
  pods.set(...pod('cache-0', { roleLabel: 'primary' }));
  assert.deepEqual(plan(observed({}, { pods, sentinels, instances })), { type: 'label-role', pod: 'cache-1', role: 'replica' });
});

test('a healthy Redis has nothing to do', () => {
  assert.deepEqual(plan(healthy()), { type: 'none' });
});

test('the primary pod deleted: the operator waits for the Sentinels, never recreating it as primary first', () => {
  const pods = new Map(healthy().pods);
  pods.delete('cache-0');
  const o = healthy({ pods, instances: new Map([['cache-1', replicaOf('cache-0', 90)], ['cache-2', replicaOf('cache-0', 100)]]) });
  const action = plan(o);
  assert.equal(action.type, 'wait');
  assert.equal((action as { reason: string }).reason, 'WaitingForFailover');
  // Past the bound with no failover, it is recreated as it was (and Degraded says so).
  assert.deepEqual(plan({ ...o, step: { name: 'WaitingForFailover', ageMs: FAILOVER_WAIT_MS } }), { type: 'create-pod', pod: 'cache-0', component: 'redis' });
});

test('a Sentinel failover is followed: the decision recorded, then the old primary recreated as a replica, the labels moved', () => {
  const pods = new Map(healthy().pods);
  pods.delete('cache-0');
  const sentinels = new Map([['cache-sentinel-0', says('cache-2')], ['cache-sentinel-1', says('cache-2')], ['cache-sentinel-2', says('cache-0')]]);
  const instances = new Map([['cache-1', replicaOf('cache-2')], ['cache-2', master(120)]]);
  const o = healthy({ pods, sentinels, instances });
  assert.equal(decidedPrimary(o), 'cache-2');
  assert.deepEqual(plan(o), { type: 'write-config', primary: 'cache-2', reason: 'PrimaryChanged' });
  const recorded = { ...o, config: { ...o.config!, primary: 'cache-2', sentinelConf: o.desired.sentinelConf('cache-2') } };
  assert.deepEqual(plan(recorded), { type: 'create-pod', pod: 'cache-0', component: 'redis' });
  const back = new Map(pods).set(...pod('cache-0', { roleLabel: 'primary', ready: false }));
  assert.deepEqual(plan({ ...recorded, pods: back }), { type: 'label-role', pod: 'cache-0', role: null }, 'the old primary label goes first');
  back.set(...pod('cache-0'));
  const rejoined = new Map(instances).set('cache-0', replicaOf('cache-2'));
  assert.deepEqual(plan({ ...recorded, pods: back, instances: rejoined }), { type: 'label-role', pod: 'cache-2', role: 'primary' });
  back.set(...pod('cache-2', { roleLabel: 'primary' }));
  assert.deepEqual(plan({ ...recorded, pods: back, instances: rejoined }), { type: 'label-role', pod: 'cache-0', role: 'replica' });
});

test("the old primary's pod stuck terminating (its node stopped) does not hold the Service back: the decided primary is labelled meanwhile", () => {
  const pods = new Map(healthy().pods).set(...pod('cache-0', { roleLabel: 'primary', ready: false, deleting: true }));
  const sentinels = new Map([['cache-sentinel-0', says('cache-2')], ['cache-sentinel-1', says('cache-2')], ['cache-sentinel-2', silent]]);
  const instances = new Map([['cache-0', { ok: false as const, error: 'timeout' }], ['cache-1', replicaOf('cache-2')], ['cache-2', master(120)]]);
  const o = healthy({ pods, sentinels, instances });
  const recorded = { ...o, config: { ...o.config!, primary: 'cache-2', sentinelConf: o.desired.sentinelConf('cache-2') } };
  assert.deepEqual(plan(recorded), { type: 'label-role', pod: 'cache-2', role: 'primary' });
  const labelled = { ...recorded, pods: new Map(pods).set(...pod('cache-2', { roleLabel: 'primary' })) };
  assert.equal(plan(labelled).type, 'wait', 'then it waits for the terminating pod');
  assert.equal((plan(labelled) as { reason?: string }).reason, 'PodTerminating');
});

test('a minority of Sentinels changes nothing: the recorded primary keeps its label', () => {
  const sentinels = new Map([['cache-sentinel-0', says('cache-1')], ['cache-sentinel-1', silent], ['cache-sentinel-2', silent]]);
  assert.equal(decidedPrimary(healthy({ sentinels })), undefined);
  assert.deepEqual(plan(healthy({ sentinels })), { type: 'none' });
});

test('one authority: with Sentinels the operator never promotes nor repoints, whatever it observes', () => {
  const states: Observed[] = [];
  const readings: (InstanceReading | undefined)[] = [master(1), master(5), replicaOf('cache-1', 3), replicaOf('cache-0', 9), { ok: false, error: 'timeout' }, undefined];
  const sentinelViews: SentinelReading[] = [says('cache-0'), says('cache-1'), says('cache-2'), silent];
  for (const r0 of readings) for (const r1 of readings) for (const s of sentinelViews) for (const gone of [undefined, 'cache-0', 'cache-1']) {
    const pods = new Map(healthy().pods);
    if (gone) pods.delete(gone);
    const instances = new Map<string, InstanceReading>();
    if (r0) instances.set('cache-0', r0);
    if (r1) instances.set('cache-1', r1);
    states.push(healthy({ pods, instances, sentinels: new Map([['cache-sentinel-0', s], ['cache-sentinel-1', s], ['cache-sentinel-2', silent]]) }));
  }
  for (const o of states) {
    const action = plan(o);
    assert.ok(action.type !== 'promote' && action.type !== 'replicate', JSON.stringify(action));
  }
  assert.ok(states.length > 100);
});

test('without Sentinels the operator fails over on a fact: the primary pod gone, the replica with the most data promoted', () => {
  const noSentinel = { sentinel: { replicas: 0 } };
  const pods = new Map([pod('cache-1', { roleLabel: 'replica' }), pod('cache-2', { roleLabel: 'replica' })]);
  const instances = new Map([['cache-1', replicaOf('cache-0', 90)], ['cache-2', replicaOf('cache-0', 100)]]);
  const base = observed(noSentinel);
  const o = { ...base, pods, instances };
  assert.equal(bestReplica(o, 'cache-0'), 'cache-2');
  assert.deepEqual(plan(o), { type: 'promote', instance: 'cache-2' });
  // A crash after the promotion: the next reconcile adopts it, then recreates cache-0, then repoints cache-1.
  const promoted = new Map(instances).set('cache-2', master(100));
  assert.deepEqual(plan({ ...o, instances: promoted }), { type: 'write-config', primary: 'cache-2', reason: 'PrimaryChanged' });
  const recorded = { ...o, instances: promoted, config: { ...base.config!, primary: 'cache-2', sentinelConf: base.desired.sentinelConf('cache-2') } };
  assert.deepEqual(plan(recorded), { type: 'create-pod', pod: 'cache-0', component: 'redis' });
  const all = new Map(pods).set(...pod('cache-0', { roleLabel: 'replica' })).set(...pod('cache-2', { roleLabel: 'primary' }));
  assert.deepEqual(plan({ ...recorded, pods: all, instances: new Map(promoted).set('cache-0', replicaOf('cache-2')) }), { type: 'replicate', instance: 'cache-1', primary: 'cache-2' });
  // An instance that does not answer is not dead: no promotion while the primary's pod is there.
  assert.deepEqual(plan({ ...o, pods: new Map(pods).set(...pod('cache-0', { roleLabel: 'primary' })), instances: new Map(instances).set('cache-0', { ok: false, error: 'timeout' }) }), { type: 'none' });
});

test('a lost primary with no replica to fail over to is recreated at once (replicas: 0, or a new Redis)', () => {
  assert.deepEqual(plan(observed({ replicas: 0 }, { pods: new Map() })), { type: 'create-pod', pod: 'cache-0', component: 'redis' });
  // Nor when no replica has started yet: a new Redis's primary is created first.
  assert.deepEqual(plan(observed({}, { pods: new Map([pod('cache-1', { ready: false })]) })), { type: 'create-pod', pod: 'cache-0', component: 'redis' });
});

test('failed pods are deleted, terminating ones waited for, config changes written, a missing user Secret waited for', () => {
  const failed = new Map(healthy().pods).set(...pod('cache-1', { phase: 'Failed', ready: false }));
  assert.deepEqual(plan(healthy({ pods: failed })), { type: 'delete-pod', pod: 'cache-1', reason: 'its phase is Failed' });
  const terminating = new Map(healthy().pods).set(...pod('cache-2', { deleting: true }));
  assert.equal((plan(healthy({ pods: terminating })) as { reason: string }).reason, 'PodTerminating');
  const changed = observed({ maxmemory: '64Mi' });
  assert.deepEqual(plan({ ...healthy(), desired: changed.desired, spec: changed.spec }), { type: 'write-config', primary: 'cache-0', reason: 'ConfigChanged' });
  const missing = plan(observed({ auth: { secretName: 'mine' } }, { auth: 'missing' })) as Action & { message: string };
  assert.match(missing.message, /the Secret mine with key password \(spec\.auth\) does not exist/);
});

test('a Redis bootstrapped from a backup makes no pod until the backup is resolved, and then starts as any other', () => {
  const from = { bootstrap: { fromBackup: { backupName: 'b1' } } };
  const blocked = plan(observed(from, { bootstrapBlocked: 'spec.bootstrap.fromBackup.backupName: the RedisBackup b1 has not succeeded (phase Running)' }));
  assert.equal(blocked.type, 'wait');
  assert.match((blocked as { message: string }).message, /b1 has not succeeded/);
  assert.deepEqual(plan(observed(from)), { type: 'create-pod', pod: 'cache-0', component: 'redis' });
});

test('TLS: Secrets issued before anything else, no pod made while a Secret is in the way, a renewed certificate reloaded in place', () => {
  const issue = [{ name: 'cache-ca', reason: 'Missing' }, { name: 'cache-tls', reason: 'IssuerChanged' }];
  assert.deepEqual(plan(observed({}, { config: undefined, tls: { secretName: 'cache-tls', issue } })), { type: 'issue-tls', secrets: issue });
  const problem = { reason: 'TLSSecretConflict', message: 'Secret cache-ca is in the way' };
  assert.equal(plan(observed({}, { tls: { secretName: 'cache-tls', issue: [], problem } })).type, 'wait');
  const tls = { secretName: 'cache-tls', issue: [], certificate: 'NEW' };
  const serving = (certificate: string): InstanceReading => ({ ...replicaOf('cache-0'), certificate } as InstanceReading);
  const primary: InstanceReading = { ...master(), certificate: 'NEW' } as InstanceReading;
  const instances = (cache1: string): Map<string, InstanceReading> => new Map([['cache-0', primary], ['cache-1', serving(cache1)], ['cache-2', serving('NEW')]]);
  assert.deepEqual(plan(healthy({ tls, instances: instances('OLD') })), { type: 'reload-tls', instance: 'cache-1' });
  assert.deepEqual(plan(healthy({ tls, instances: instances('NEW') })), { type: 'none' });
});
