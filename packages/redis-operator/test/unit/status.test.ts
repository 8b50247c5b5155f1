// What the operator reads from an instance (INFO) and the status it writes from what it observed: Available only
// when the decided primary answers as primary, is Ready and is what `<name>` selects; lag from the offsets; the
// Sentinels' view; FailingOver while the primary is gone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyDefaults } from '../../src/api/defaults.ts';
import { operatorManifests, RULES } from '../../src/deploy/manifests.ts';
import type { InstanceReading, Observed, PodFacts, SentinelReading } from '../../src/plan/types.ts';
import { goodReplicasOf, instanceReading, parseInfo, podsOfEntries } from '../../src/redis/readings.ts';
import { redisConf, sentinelConf } from '../../src/render/config.ts';
import { buildStatus } from '../../src/reconcile/status.ts';
import type { KubeObject } from '@quorum/runtime';
import { redisSamples } from '../../src/operator/metrics.ts';

const host = (p: string): string => `${p}.cache-headless.ns.svc`;
const pod = (name: string, over: Partial<PodFacts> = {}): [string, PodFacts] => [name, { name, component: 'redis', phase: 'Running', ready: true, deleting: false, hash: 'h', ...over }];

function observed(over: Partial<Observed> = {}): Observed {
  const spec = applyDefaults({});
  const desired = { redisConf: redisConf(spec), sentinelConf: (p: string) => sentinelConf('cache', spec, host(p)) };
  const others = (p: string): string[] => ['0', '1', '2'].filter((i) => i !== p).map((i) => `cache-sentinel-${i}`);
  const sentinel = (p: string): [string, SentinelReading] => [`cache-sentinel-${p}`, { ok: true, primaryHost: host('cache-0'), knownReplicas: ['cache-1', 'cache-2'], goodReplicas: ['cache-1'], knownSentinels: others(p) }];
  return {
    redis: 'cache', namespace: 'ns', spec, auth: 'ok', desired, desiredHash: { redis: 'h', sentinel: 'h' }, rollout: {},
    config: { redisConf: desired.redisConf, sentinelConf: desired.sentinelConf('cache-0'), primary: 'cache-0' },
    services: new Set(), missingServices: [], claims: new Set(),
    pods: new Map([pod('cache-0', { roleLabel: 'primary' }), pod('cache-1', { roleLabel: 'replica' }), pod('cache-2', { roleLabel: 'replica' }), ...['0', '1', '2'].map((i) => pod(`cache-sentinel-${i}`, { component: 'sentinel' }))]),
    instances: new Map<string, InstanceReading>([
      ['cache-0', { ok: true, role: 'master', offset: 1000, version: '7.0.15' }],
      ['cache-1', { ok: true, role: 'slave', primaryHost: host('cache-0'), linkUp: true, offset: 990, version: '7.0.15' }],
      ['cache-2', { ok: true, role: 'slave', primaryHost: host('cache-0'), linkUp: false, offset: 400, version: '7.0.15' }],
    ]),
    sentinels: new Map([sentinel('0'), sentinel('1'), sentinel('2')]),
    ...over,
  };
}

const now = new Date('2026-11-27T12:00:00Z');
const condition = (s: ReturnType<typeof buildStatus>, type: string): string | undefined => s.conditions?.find((c) => c.type === type)?.status;

test('INFO replication and INFO server are read into a role, a primary, a link and an offset', () => {
  const replica = parseInfo('# Replication\r\nrole:slave\r\nmaster_host:cache-0.cache-headless.ns.svc\r\nmaster_port:6379\r\nmaster_link_status:up\r\nslave_repl_offset:4242\r\nmaster_repl_offset:4242\r\n# Server\r\nredis_version:7.0.15\r\n');
  assert.deepEqual(instanceReading(replica), { ok: true, role: 'slave', primaryHost: 'cache-0.cache-headless.ns.svc', linkUp: true, offset: 4242, version: '7.0.15' });
  assert.deepEqual(instanceReading(parseInfo('role:master\nmaster_repl_offset:77\nredis_version:7.0.15')), { ok: true, role: 'master', offset: 77, version: '7.0.15' });
  assert.equal(instanceReading(parseInfo('loading:1')).ok, false);
});

test('a healthy Redis is Running and Available, with each instance\'s role, lag and link, and the Sentinels agreeing', () => {
  const s = buildStatus({ observed: observed(), action: { type: 'none' }, step: undefined, generation: 3, previous: undefined, now, stepDeadlineMs: 120_000 });
  assert.equal(s.phase, 'Running');
  assert.equal(s.primary, 'cache-0');
  assert.equal(condition(s, 'Available'), 'True');
  assert.equal(condition(s, 'Degraded'), 'False');
  assert.equal(condition(s, 'Progressing'), 'False');
  assert.deepEqual(s.instances?.map((i) => [i.name, i.role, i.lagBytes, i.linkStatus]), [['cache-0', 'primary', undefined, undefined], ['cache-1', 'replica', 10, 'up'], ['cache-2', 'replica', 600, 'down']]);
  assert.deepEqual(s.sentinel, { primary: 'cache-0', reporting: 3, agreeing: 3, ableToFailOver: 3, quorum: 2 });
  assert.equal(s.observedGeneration, 3);
});

test('Sentinels that have not learned the replicas or each other could not fail the primary over: Degraded says so, Available stays', () => {
  // A Sentinel learns replicas from the primary's INFO and other Sentinels from its hello channel: if the primary is
  // lost before they have, no failover ever happens (seen under load: the pod deleted 12 s after the Sentinels started).
  const o = observed();
  const sentinels = new Map(o.sentinels);
  sentinels.set('cache-sentinel-0', { ok: true, primaryHost: host('cache-0'), knownReplicas: [], goodReplicas: [], knownSentinels: ['cache-sentinel-1', 'cache-sentinel-2'] });
  sentinels.set('cache-sentinel-1', { ok: true, primaryHost: host('cache-0'), knownReplicas: ['cache-1'], goodReplicas: ['cache-1'], knownSentinels: [] });
  const s = buildStatus({ observed: { ...o, sentinels }, action: { type: 'none' }, step: undefined, generation: 3, previous: undefined, now, stepDeadlineMs: 120_000 });
  assert.equal(s.sentinel?.agreeing, 3);
  assert.equal(s.sentinel?.ableToFailOver, 1);
  assert.equal(condition(s, 'Available'), 'True');
  const degraded = s.conditions?.find((c) => c.type === 'Degraded');
  assert.equal(degraded?.status, 'True');
  assert.equal(degraded?.reason, 'SentinelsCannotFailOver');
  assert.match(degraded?.message ?? '', /only 1 of 3 Sentinels could fail cache-0 over \(2 needed\)/);
  assert.equal(s.phase, 'Degraded');
  // Without replicas there is nothing to fail over to, and nothing to report.
  const alone = buildStatus({ observed: { ...o, spec: { ...o.spec, replicas: 0 }, sentinels }, action: { type: 'none' }, step: undefined, generation: 3, previous: undefined, now, stepDeadlineMs: 120_000 });
  assert.doesNotMatch(alone.conditions?.find((c) => c.type === 'Degraded')?.message ?? '', /could fail/);
});

test('the primary pod gone: not Available, FailingOver, and the wait in Progressing with its age', () => {
  const o = observed();
  const pods = new Map(o.pods);
  pods.delete('cache-0');
  const instances = new Map(o.instances);
  instances.delete('cache-0');
  const step = { name: 'WaitingForFailover', startedAt: new Date(now.getTime() - 12_000).toISOString() };
  const s = buildStatus({ observed: { ...o, pods, instances }, action: { type: 'wait', reason: 'WaitingForFailover', message: 'waiting for the Sentinels', requeueAfterMs: 2000 }, step, generation: 3, previous: undefined, now, stepDeadlineMs: 120_000 });
  assert.equal(s.phase, 'FailingOver');
  assert.equal(condition(s, 'Available'), 'False');
  assert.equal(s.conditions?.find((c) => c.type === 'Progressing')?.reason, 'WaitingForFailover');
  assert.equal(s.conditions?.find((c) => c.type === 'Progressing')?.message, 'waiting for the Sentinels (for 10 s)');
  assert.equal(condition(s, 'Degraded'), 'True');
  assert.equal(s.primary, undefined);
});

test('the last Sentinel a rollout deleted, still terminating and answering: the rollout is not over, the Redis not Running', () => {
  // The state a CI run caught: every pod on the new spec but the last Sentinel, deleted a moment ago, whose pod
  // still reported Ready and whose process still answered; the status said Running with no rollout.
  const o = observed({ desiredHash: { redis: 'h', sentinel: 'h2' }, rollout: { record: { target: 'h.h2', updated: 5, total: 6 } } });
  const pods = new Map(o.pods);
  for (const i of ['1', '2']) pods.set(`cache-sentinel-${i}`, { ...pods.get(`cache-sentinel-${i}`)!, hash: 'h2' });
  pods.set('cache-sentinel-0', { ...pods.get('cache-sentinel-0')!, deleting: true });
  const s = buildStatus({ observed: { ...o, pods }, action: { type: 'none' }, step: undefined, generation: 3, previous: undefined, now, stepDeadlineMs: 120_000 });
  assert.equal(s.phase, 'Updating');
  assert.deepEqual(s.rollout, { target: 'h.h2', updated: 5, total: 6 });
  assert.equal(condition(s, 'Degraded'), 'True');
  assert.match(s.conditions?.find((c) => c.type === 'Degraded')?.message ?? '', /1 of 3 Sentinels not ready/);
  const back = new Map(pods);
  back.set('cache-sentinel-0', { ...pods.get('cache-sentinel-0')!, deleting: false, hash: 'h2' });
  const done = buildStatus({ observed: { ...o, pods: back }, action: { type: 'none' }, step: undefined, generation: 3, previous: undefined, now, stepDeadlineMs: 120_000 });
  assert.equal(done.phase, 'Running', 'once the pod is back on the new spec, the rollout is over');
  assert.equal(done.rollout, undefined);
});

test('a primary that answers but is not labelled yet is not Available: clients reach it only through the Service', () => {
  const o = observed();
  const pods = new Map(o.pods).set(...pod('cache-0'));
  assert.equal(condition(buildStatus({ observed: { ...o, pods }, action: { type: 'label-role', pod: 'cache-0', role: 'primary' }, step: undefined, generation: 1, previous: undefined, now, stepDeadlineMs: 120_000 }), 'Available'), 'False');
});

test('the manifests grant only what the reconciler uses: Secrets get, create and update (TLS renewal), a Role in the tenant namespace', () => {
  assert.deepEqual(RULES.find((r) => r.resources.includes('secrets'))?.verbs, ['get', 'create', 'update']);
  const scoped = operatorManifests({ namespaces: ['apps'] });
  const kinds = scoped.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}`);
  assert.ok(kinds.includes('Role/apps') && kinds.includes('RoleBinding/apps'), kinds.join(' '));
  // Cluster-wide only what /metrics and the webhook need (TokenReview, SubjectAccessReview: cluster-scoped kinds;
  // the webhook's own configuration, by name), the cordoned Nodes (read only) and the metrics-reader role, which grants nothing until a scraper is
  // bound to it.
  const clusterRoles = scoped.filter((o) => o.kind === 'ClusterRole') as (KubeObject & { rules: unknown[] })[];
  assert.deepEqual(clusterRoles.map((r) => [r.metadata.name, r.rules]), [
    ['quorum-redis-operator-metrics-auth', [{ apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] }, { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] }]],
    ['quorum-redis-operator-nodes', [{ apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch'] }]],
    ['quorum-redis-operator-metrics-reader', [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]],
    ['quorum-redis-operator-webhooks', [{ apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], resourceNames: ['quorum-redis-validating'], verbs: ['get', 'patch'] }]],
  ]);
  assert.ok(operatorManifests({ clusterWide: true }).some((o) => o.kind === 'ClusterRole' && o.metadata.name === 'quorum-redis-operator'), 'cluster-wide only when asked for');
  const container = (scoped.find((o) => o.kind === 'Deployment') as KubeObject & { spec: { template: { spec: { containers: { ports: { name: string; containerPort: number }[] }[] } } } }).spec.template.spec.containers[0]!;
  assert.deepEqual(container.ports, [{ name: 'probes', containerPort: 8081 }, { name: 'metrics', containerPort: 8443 }, { name: 'webhook', containerPort: 9443 }], '/metrics on its own HTTPS port');
});

test('metrics come from status: the step under way by its kind, and a halted rollout with its pod and reason', () => {
  const redis = {
    apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'Redis', metadata: { name: 'cache', namespace: 'ns' }, spec: {},
    status: {
      step: { name: 'RolloutHalted', startedAt: '2026-11-27T11:59:00Z', failures: 2, stalled: false },
      rollout: { target: 'a.b', updated: 4, total: 6, halted: { instance: 'cache-2', reason: 'CrashLooping' as const, message: 'keeps exiting', at: '2026-11-27T11:59:00Z' } },
    },
  };
  const s = redisSamples([redis], now.getTime());
  assert.deepEqual(s.stepAge, [{ labels: { namespace: 'ns', redis: 'cache', step: 'RolloutHalted' }, value: 60 }]);
  assert.deepEqual(s.stepFailures.map((x) => x.value), [2]);
  assert.deepEqual(s.rolloutUpdated.map((x) => x.value), [4]);
  assert.deepEqual(s.rolloutHalted, [{ labels: { namespace: 'ns', redis: 'cache', instance: 'cache-2', reason: 'CrashLooping' }, value: 1 }]);
});

test('what a Sentinel remembers: pods by announced hostname, and the replicas it would promote now', () => {
  const replica = (pod: string, flags: string, link: string): string[] => ['name', `${host(pod)}:6379`, 'ip', host(pod), 'port', '6379', 'flags', flags, 'master-link-status', link];
  const answer = [replica('cache-1', 'slave', 'ok'), replica('cache-2', 's_down,slave,disconnected', 'err'), replica('cache-3', 'slave', 'err')];
  assert.deepEqual(podsOfEntries(answer), ['cache-1', 'cache-2', 'cache-3']);
  assert.deepEqual(goodReplicasOf(answer), ['cache-1']);
  assert.deepEqual(podsOfEntries('not an array'), []);
});
