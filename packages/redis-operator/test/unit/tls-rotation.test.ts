// The planner through a CA rotation (plan/tls.ts): each step only once every instance serves the Secret's
// certificate and every Sentinel was made from it (reloads and the Sentinels' roll come first), the overlap kept
// between TrustNew and Reissue as a steady Redis, and each step reported (Progressing reason CARotation).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plan } from '../../src/plan/plan.ts';
import type { CARotationFacts, InstanceReading, Observed, SentinelReading } from '../../src/plan/types.ts';
import { buildStatus } from '../../src/reconcile/status.ts';
import { host, observed, pod } from './observed-fixture.ts';

const serving = (certificate: string, primary?: string): InstanceReading =>
  primary === undefined ? { ok: true, role: 'master', offset: 100, version: '7.0.15', certificate } : { ok: true, role: 'slave', primaryHost: host(primary), linkUp: true, offset: 100, version: '7.0.15', certificate };
const SENTINELS = ['cache-sentinel-0', 'cache-sentinel-1', 'cache-sentinel-2'];
const says = (self: string): SentinelReading => ({ ok: true, primaryHost: host('cache-0'), knownReplicas: ['cache-1', 'cache-2'], knownSentinels: SENTINELS.filter((s) => s !== self) });

/** A settled Redis (cache-0 primary, two replicas, three Sentinels) whose Secret holds certificate NEW, in `rotation`. */
function rotating(rotation: CARotationFacts, over: Partial<Observed> = {}): Observed {
  return observed({}, {
    pods: new Map([pod('cache-0', { roleLabel: 'primary' }), pod('cache-1', { roleLabel: 'replica' }), pod('cache-2', { roleLabel: 'replica' }), pod('cache-sentinel-0'), pod('cache-sentinel-1'), pod('cache-sentinel-2')]),
    instances: new Map([['cache-0', serving('NEW')], ['cache-1', serving('NEW', 'cache-0')], ['cache-2', serving('NEW', 'cache-0')]]),
    sentinels: new Map(SENTINELS.map((s) => [s, says(s)])),
    tls: { secretName: 'cache-tls', issue: [], certificate: 'NEW', caRotation: rotation },
    ...over,
  });
}

test('each step once every instance serves the Secret\'s certificate and every Sentinel was made from it: Start → TrustNew, TrustNew (overlap over) → Reissue, Reissue → DropOld', () => {
  assert.deepEqual(
    { ...plan(rotating({ phase: 'Start', why: 'redis.quorum.dev/rotate-ca is t1' })), detail: undefined },
    { type: 'rotate-ca', step: 'TrustNew', detail: undefined },
  );
  assert.match((plan(rotating({ phase: 'Start', why: 'redis.quorum.dev/rotate-ca is t1' })) as { detail: string }).detail, /rotate-ca is t1/);
  assert.equal((plan(rotating({ phase: 'TrustNew', why: 'under way', overlapLeftMs: 0 })) as { step?: string }).step, 'Reissue');
  assert.equal((plan(rotating({ phase: 'Reissue', why: 'under way' })) as { step?: string }).step, 'DropOld');
  assert.deepEqual(plan(rotating({ phase: 'TrustNew', why: 'under way', overlapLeftMs: 60_000 })), { type: 'none' }, 'the overlap is no step: steady meanwhile');
  const noRotation = rotating({ phase: 'Start', why: '' });
  delete noRotation.tls!.caRotation;
  assert.deepEqual(plan(noRotation), { type: 'none' });
});

test('a step waits for the certificate it follows: an instance serving the previous one reloads first, an outdated Sentinel rolls first, a silent instance is waited for', () => {
  const trustNew: CARotationFacts = { phase: 'TrustNew', why: 'under way', overlapLeftMs: 0 };
  const stale = rotating(trustNew, { instances: new Map([['cache-0', serving('NEW')], ['cache-1', serving('OLD', 'cache-0')], ['cache-2', serving('NEW', 'cache-0')]]) });
  assert.deepEqual(plan(stale), { type: 'reload-tls', instance: 'cache-1' });
  const sentinelOutdated = rotating(trustNew, { pods: new Map([...rotating(trustNew).pods, pod('cache-sentinel-2', { hash: 'made-from-the-previous-certificate' })]) });
  assert.deepEqual(plan(sentinelOutdated), { type: 'delete-pod', pod: 'cache-sentinel-2', reason: 'rolling update (0 instances and 1 Sentinel left): updating the Sentinel cache-sentinel-2' });
  const silent = rotating(trustNew, { instances: new Map([['cache-0', serving('NEW')], ['cache-1', serving('NEW', 'cache-0')], ['cache-2', { ok: false, error: 'connect ETIMEDOUT' }]]) });
  const waiting = plan(silent);
  assert.equal(waiting.type === 'wait' && waiting.reason, 'CARotation');
  assert.match((waiting as { message: string }).message, /rotating the CA \(TrustNew\) waits for cache-2: it does not answer/);
});

test('a step is reported: Progressing with reason CARotation and what the step does', () => {
  const o = rotating({ phase: 'Reissue', why: 'under way' });
  const action = plan(o);
  const now = new Date('2026-01-01T00:00:00Z');
  const status = buildStatus({ observed: o, action, step: { name: 'rotate-ca DropOld', startedAt: now.toISOString() }, generation: 1, previous: undefined, now, stepDeadlineMs: 600_000 });
  const progressing = status.conditions?.find((c) => c.type === 'Progressing');
  assert.equal(progressing?.reason, 'CARotation');
  assert.match(progressing?.message ?? '', /the old CA leaves the bundle/);
});
