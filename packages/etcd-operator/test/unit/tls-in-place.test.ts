// Plaintext to TLS in place (docs/tls.md): each member's stage as a pure function of what is observed, what a
// pod at each stage runs, and the planner's order: every member first gets the certificates (peer `trust`,
// client `both`), then each member's peer URL is switched (followers first, the leader last after leadership
// moved) and its pod restarted on https only.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { applyDefaults } from '../../src/api/defaults.ts';
import type { EtcdCluster } from '../../src/api/etcdcluster.ts';
import { plan, type Observed, type ObservedMember, type ObservedPod } from '../../src/cluster/plan/index.ts';
import { madeWithTLS, memberPod, outdatedFields, TEMPLATE_ANNOTATION } from '../../src/cluster/resources.ts';
import {
  CLIENT_TLS_ANNOTATION,
  desiredTLSStage,
  finalTLSStage,
  memberTLS,
  memberTLSStages,
  newMemberPeerScheme,
  PEER_TLS_ANNOTATION,
  servedPeerStage,
  tlsFingerprint,
} from '../../src/tls/members.ts';

const BOTH = applyDefaults({ tls: { peer: {}, client: {} } });
const PEER_ONLY = applyDefaults({ tls: { peer: {} } });
const CLIENT_ONLY = applyDefaults({ tls: { client: {} } });
const PLAIN = applyDefaults({});

describe('each member\'s stage', () => {
  test('a new cluster (no member list yet) starts at the end: https peer and client', () => {
    assert.deepEqual(desiredTLSStage(BOTH, {}, []), { peer: 'on', client: 'on' });
    assert.deepEqual(finalTLSStage(BOTH), { peer: 'on', client: 'on' });
    assert.deepEqual(desiredTLSStage(PLAIN, {}, []), { peer: 'off', client: 'off' });
  });

  test('while a member\'s peer URL is http, it trusts the peer CA without listening on https, and serves clients both ways', () => {
    assert.deepEqual(desiredTLSStage(BOTH, { peerScheme: 'http', servedClient: 'off' }, ['off', 'off', 'off']), { peer: 'trust', client: 'both' });
    // Even once every pod serves both: its last restart (the peer switch) drops http, not a third pass.
    assert.deepEqual(desiredTLSStage(BOTH, { peerScheme: 'http', servedClient: 'both' }, ['both', 'both', 'both']), { peer: 'trust', client: 'both' });
  });

  test('once etcd lists its peer URL as https, the member listens on https, and drops http for clients once no pod serves http only', () => {
    assert.deepEqual(desiredTLSStage(BOTH, { peerScheme: 'https', servedClient: 'both' }, ['both', 'both', 'both']), { peer: 'on', client: 'on' });
    assert.deepEqual(desiredTLSStage(BOTH, { peerScheme: 'https', servedClient: 'both' }, ['both', 'off', 'both']), { peer: 'on', client: 'both' });
  });

  test('client TLS alone: both while any pod serves http only, then https only', () => {
    assert.deepEqual(desiredTLSStage(CLIENT_ONLY, { peerScheme: 'http', servedClient: 'off' }, ['off', 'both']), { peer: 'off', client: 'both' });
    assert.deepEqual(desiredTLSStage(CLIENT_ONLY, { peerScheme: 'http', servedClient: 'both' }, ['both', 'both']), { peer: 'off', client: 'on' });
  });

  test('peer TLS alone: trust while the peer URL is http, then on; clients stay on plain http', () => {
    assert.deepEqual(desiredTLSStage(PEER_ONLY, { peerScheme: 'http', servedClient: 'off' }, ['off', 'off']), { peer: 'trust', client: 'off' });
    assert.deepEqual(desiredTLSStage(PEER_ONLY, { peerScheme: 'https', servedClient: 'off' }, ['off', 'off']), { peer: 'on', client: 'off' });
  });

  test('peer TLS added to a cluster that already serves clients https only never goes back to http for clients', () => {
    assert.deepEqual(desiredTLSStage(BOTH, { peerScheme: 'http', servedClient: 'on' }, ['on', 'on', 'on']), { peer: 'trust', client: 'on' });
  });

  test('memberTLSStages reads the served client stages of live pods only, and the peer scheme per member', () => {
    const stageOf = memberTLSStages(BOTH, [
      { member: 'c-0', servedClient: 'both', deleting: false },
      { member: 'c-1', servedClient: 'off', deleting: true },
    ], new Map([['c-0', 'https'], ['c-1', 'http']]));
    assert.deepEqual(stageOf('c-0'), { peer: 'on', client: 'on' }, 'the terminating pod serving http only does not count');
    assert.deepEqual(stageOf('c-1'), { peer: 'trust', client: 'both' });
  });

  test('a member added mid-way gets an https peer URL only once every pod has the peer certificates', () => {
    assert.equal(newMemberPeerScheme(BOTH, ['trust', 'on', 'trust']), 'https');
    assert.equal(newMemberPeerScheme(BOTH, ['off', 'trust', 'trust']), 'http');
    assert.equal(newMemberPeerScheme(PLAIN, []), 'http');
    assert.equal(newMemberPeerScheme(CLIENT_ONLY, ['off']), 'http');
    // A pod made before stages were recorded says nothing: its member's peer URL does.
    assert.equal(servedPeerStage({ metadata: {} }, 'https'), 'on');
    assert.equal(servedPeerStage({ metadata: {} }, 'http'), 'off');
    assert.equal(servedPeerStage({ metadata: { annotations: { [PEER_TLS_ANNOTATION]: 'trust' } } }, 'http'), 'trust');
  });
});

describe('what a pod at each stage runs', () => {
  test('trust: the peer certificate flags, but an http peer listener and advertised URL', () => {
    const r = memberTLS(BOTH, 'c-0', { peer: 'trust', client: 'both' });
    assert.equal(r.listenPeer, 'http://0.0.0.0:2380');
    assert.equal(r.advertisePeer, 'http');
    assert.ok(r.args.some((a) => a.startsWith('--peer-trusted-ca-file=')), 'its dialer trusts the peer CA');
    assert.ok(r.args.some((a) => a.startsWith('--peer-cert-file=')), 'and presents its certificate to https peers');
    assert.equal(r.listenClient, 'http://0.0.0.0:2379,https://0.0.0.0:2379', 'both schemes on one port (etcd splits them)');
    assert.equal(r.advertiseClient, 'https');
    assert.deepEqual(r.annotations, { [CLIENT_TLS_ANNOTATION]: 'both', [PEER_TLS_ANNOTATION]: 'trust' });
  });

  test('off: nothing of TLS; on: https only', () => {
    const off = memberTLS(BOTH, 'c-0', { peer: 'off', client: 'off' });
    assert.deepEqual(off.args, []);
    assert.equal(off.listenClient, 'http://0.0.0.0:2379');
    const on = memberTLS(BOTH, 'c-0');
    assert.equal(on.listenPeer, 'https://0.0.0.0:2380');
    assert.equal(on.listenClient, 'https://0.0.0.0:2379');
    assert.deepEqual(on.annotations, { [CLIENT_TLS_ANNOTATION]: 'on', [PEER_TLS_ANNOTATION]: 'on' });
  });

  test('the final stage keeps the fingerprint clusters made with TLS already have (no rollout after an operator upgrade)', () => {
    const before = createHash('sha256').update(JSON.stringify({ tls: BOTH.tls, peerCA: 'p', clientCA: 'c' })).digest('hex').slice(0, 12);
    assert.deepEqual(tlsFingerprint(BOTH, { peer: 'p', client: 'c' }), { tls: before });
    assert.deepEqual(tlsFingerprint(BOTH, { peer: 'p', client: 'c' }, { peer: 'on', client: 'on' }), { tls: before });
    assert.notDeepEqual(tlsFingerprint(BOTH, { peer: 'p', client: 'c' }, { peer: 'trust', client: 'both' }), { tls: before });
  });

  test('a plaintext pod is outdated once spec.tls is set, and a pod at `trust` once its stage moves on', () => {
    const cluster: EtcdCluster = { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name: 'c', namespace: 'ns', uid: 'u' }, spec: {} };
    const plain = memberPod(cluster, PLAIN, { member: 'c-0', initialClusterState: 'new', initialCluster: ['c-0=http://c-0.c.ns.svc:2380'] });
    assert.equal(madeWithTLS(plain), false);
    assert.deepEqual(outdatedFields(plain, PLAIN), []);
    assert.deepEqual(outdatedFields(plain, BOTH, {}, { peer: 'trust', client: 'both' }), ['tls']);
    const trusting = memberPod(cluster, BOTH, { member: 'c-0', initialClusterState: 'existing', initialCluster: ['c-0=http://c-0.c.ns.svc:2380'], tlsStage: { peer: 'trust', client: 'both' } });
    assert.equal(madeWithTLS(trusting), true);
    assert.ok(trusting.metadata.annotations?.[TEMPLATE_ANNOTATION]);
    assert.deepEqual(outdatedFields(trusting, BOTH, {}, { peer: 'trust', client: 'both' }), []);
    assert.deepEqual(outdatedFields(trusting, BOTH, {}, { peer: 'on', client: 'on' }), ['tls']);
    const args = trusting.spec.containers.find((c) => c.name === 'etcd')!.args!;
    assert.ok(args.includes('--initial-advertise-peer-urls=http://c-0.c.ns.svc:2380'));
    assert.ok(args.includes('--advertise-client-urls=https://c-0.c.ns.svc:2379'));
  });
});

// ---- the planner ----
const NOW = 1_700_000_000_000;
const member = (i: number, scheme: 'http' | 'https'): ObservedMember => ({
  id: String(100 + i), member: `c-${i}`, started: true, learner: false, healthy: true, version: '3.5.35', appliedIndex: '500', caughtUp: true, peerScheme: scheme,
});
const pod = (i: number): ObservedPod => ({ member: `c-${i}`, phase: 'Running', ready: true, deleting: false, readySince: NOW - 60_000 });

/** Three members at `trust`/`both` (nothing outdated), c-0 leading, with the peer schemes given. */
function observed(schemes: ('http' | 'https')[], leader = 0, over: Partial<Observed['rollout']> = {}): Observed {
  const members = schemes.map((s, i) => member(i, s));
  return {
    cluster: 'c', replicas: members.length, persistent: true, reclaimPolicy: 'Retain',
    pods: members.map((_, i) => pod(i)), pvcs: members.map((m) => m.member),
    membership: { members, leaderId: String(100 + leader), leaderCommit: '500' },
    lastKnownMembers: members.map((m) => m.member), bootstrapped: true, bootstrapMembers: ['c-0', 'c-1', 'c-2'], nextMemberIndex: 3,
    now: NOW, crashLoopGraceMs: 60_000, stuckTerminatingReplaceMs: 300_000, refusedRestartMs: 120_000, disasterRecovery: 'Manual',
    rollout: {
      outdated: [], target: 'T', targetVersion: '3.5.35', currentVersion: '3.5.35', path: { kind: 'None' }, alarms: [], gateBoundMs: 300_000, minReadyMs: 2000,
      record: { target: 'T', fromVersion: '3.5.35', targetVersion: '3.5.35', startedAt: new Date(NOW - 100_000).toISOString() },
      peerSwitch: members.filter((m) => m.peerScheme === 'http').map((m) => m.member),
      ...over,
    },
  };
}

describe('the planner switches peer URLs one member at a time', () => {
  test('with nothing recorded, a pending switch starts a rollout (recorded before anything is touched)', () => {
    const a = plan(observed(['http', 'http', 'http'], 0, { record: undefined }));
    assert.equal(a.type, 'startRollout');
    assert.ok(a.type === 'startRollout' && /switching the peer URLs of c-0, c-1, c-2 to https/.test(a.detail));
  });

  test('once every pod has the certificates: followers first, by index', () => {
    const a = plan(observed(['http', 'http', 'http']));
    assert.deepEqual(a.type === 'switchPeerURL' ? [a.member, a.id] : a, ['c-1', '101']);
    const b = plan(observed(['http', 'https', 'http']));
    assert.deepEqual(b.type === 'switchPeerURL' ? b.member : b, 'c-2');
  });

  test('a switched member is updated next (its pod is outdated), before any other switch', () => {
    const a = plan(observed(['http', 'https', 'http'], 0, { outdated: [{ member: 'c-1', fields: ['tls'] }] }));
    assert.equal(a.type === 'updateMember' ? a.member : a.type, 'c-1');
  });

  test('the leader is switched last, after leadership moved to another member', () => {
    const a = plan(observed(['http', 'https', 'https']));
    assert.equal(a.type, 'moveLeader');
    assert.ok(a.type === 'moveLeader' && a.from === 'c-0');
    const b = plan(observed(['http', 'https', 'https'], 1));
    assert.deepEqual(b.type === 'switchPeerURL' ? b.member : b, 'c-0');
  });

  test('nothing is switched while another member does not serve', () => {
    const o = observed(['http', 'http', 'http']);
    o.membership!.members[2] = { ...o.membership!.members[2]!, healthy: false };
    const a = plan(o);
    assert.equal(a.type, 'wait');
  });

  test('every URL https and nothing outdated: done', () => {
    assert.deepEqual(plan(observed(['https', 'https', 'https'], 0, { peerSwitch: [] })), { type: 'steady' });
  });

  test('a member added while members still lack the peer certificates gets an http URL; https once they all have them', () => {
    const o = observed(['http', 'http']);
    o.replicas = 3;
    o.rollout.record = undefined;
    o.rollout.peerSwitch = [];
    // Every member runs 3.5: a downgrade to 3.5 etcd may still have enabled is ended first (plan.test.ts).
    assert.deepEqual(plan({ ...o, rollout: { ...o.rollout, newMemberPeerScheme: 'http' } }), { type: 'addMember', member: 'c-3', endDowngradeTo: '3.5' });
    assert.deepEqual(plan({ ...o, rollout: { ...o.rollout, newMemberPeerScheme: 'https' } }), { type: 'addMember', member: 'c-3', peerScheme: 'https', endDowngradeTo: '3.5' });
  });
});

describe('an operator-managed CA rotation, once nothing else is under way', () => {
  const steady = (caRotation: NonNullable<Observed['tls']>['caRotation'], over: Partial<Observed> = {}): Observed => {
    const o = observed(['https', 'https', 'https'], 0, { record: undefined, peerSwitch: [] });
    return { ...o, tls: { issue: [], memberSecrets: ['c-0', 'c-1', 'c-2'], ...(caRotation ? { caRotation } : {}), caOverlapMs: 60_000 }, ...over };
  };

  test('asked for: TrustNew first', () => {
    const a = plan(steady({ ca: 'peer', phase: 'Start', why: 'etcd.quorum.dev/rotate-ca is r1' }));
    assert.deepEqual(a.type === 'rotateCA' ? [a.ca, a.step] : a, ['peer', 'TrustNew']);
  });

  test('TrustNew waits for the members to restart trusting both (the rollout), then signing moves', () => {
    const o = steady({ ca: 'peer', phase: 'TrustNew', why: 'under way' });
    const rolling = plan({ ...o, rollout: { ...o.rollout, outdated: [{ member: 'c-1', fields: ['tls'] }] } });
    assert.equal(rolling.type, 'startRollout', 'the members roll first');
    const a = plan(o);
    assert.deepEqual(a.type === 'rotateCA' ? a.step : a, 'Reissue');
  });

  test('Reissue: the old CA goes only once every member serves the new one and the overlap has passed', () => {
    const waiting = plan(steady({ ca: 'client', phase: 'Reissue', why: 'under way', rotatedAt: NOW - 120_000, notServedByNew: ['c-2'] }));
    assert.ok(waiting.type === 'wait' && waiting.reason === 'CARotation' && /c-2/.test(waiting.detail));
    assert.deepEqual(plan(steady({ ca: 'client', phase: 'Reissue', why: 'under way', rotatedAt: NOW - 10_000, notServedByNew: [] })), { type: 'steady' }, 'within the overlap: steady');
    const a = plan(steady({ ca: 'client', phase: 'Reissue', why: 'under way', rotatedAt: NOW - 120_000, notServedByNew: [] }));
    assert.deepEqual(a.type === 'rotateCA' ? [a.ca, a.step] : a, ['client', 'DropOld']);
  });

  test('nothing moves while a member does not serve', () => {
    const o = steady({ ca: 'peer', phase: 'Start', why: 'r' });
    o.membership!.members[1] = { ...o.membership!.members[1]!, healthy: false };
    assert.equal(plan(o).type, 'wait');
  });
});
