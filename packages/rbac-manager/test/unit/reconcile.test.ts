// A reconcile, against fake caches and a recording client. The manager acts only while its escalation webhook
// guards definition writes: what counts as in place (the shipped configuration, pointing at this manager,
// failing closed, letting nothing past), and a reconcile while it is not (deletions only, every grant withheld
// and reported, a Warning event, a bounded re-check). A binding's window reaching an edge: counted and told.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, type EventInput, type Informer, type KubeObject, type OpenObject } from '@quorum/runtime';
import { ESCALATION_WEBHOOK_PATH } from '../../src/admission/webhook.ts';
import { API_VERSION, KIND, type RBACDefinition, type RBACDefinitionStatus } from '../../src/api/rbacdefinition.ts';
import type { Caches } from '../../src/controller/observe.ts';
import { rbacDefinitionReconciler, type ReconcileDeps } from '../../src/controller/reconcile.ts';
import { WEBHOOK_RECHECK_MS, webhookGate, webhookProblem, type EscalationWebhookRef } from '../../src/controller/webhook-gate.ts';
import { escalationWebhookConfiguration } from '../../src/deploy/manifests.ts';
import { managedLabels } from '../../src/plan/names.ts';

const ref: EscalationWebhookRef = { configuration: 'quorum-rbac-manager', target: { service: { namespace: 'quorum-system', name: 'quorum-rbac-manager' } } };
const shipped = (): OpenObject => escalationWebhookConfiguration({ service: { namespace: 'quorum-system', name: 'quorum-rbac-manager', path: ESCALATION_WEBHOOK_PATH, port: 443 } });
const hook = (config: OpenObject): Record<string, unknown> => (config['webhooks'] as Record<string, unknown>[])[0]!;

test('in place: the configuration the manifests ship, pointing at this manager; anything less is named', () => {
  assert.equal(webhookProblem(shipped(), ref), undefined);
  assert.match(webhookProblem(undefined, ref) ?? '', /ValidatingWebhookConfiguration quorum-rbac-manager does not exist/);
  const cases: [string, (c: OpenObject) => void, RegExp][] = [
    ['failing open', (c) => void (hook(c)['failurePolicy'] = 'Ignore'), /failurePolicy is Ignore; it must fail closed/],
    ['UPDATE not sent', (c) => void ((hook(c)['rules'] as { operations: string[] }[])[0]!.operations = ['CREATE']), /does not send UPDATE of rbacdefinitions/],
    ['another Service', (c) => void ((hook(c)['clientConfig'] as { service: { name: string } }).service.name = 'elsewhere'), /calls Service quorum-system\/elsewhere/],
    ['an objectSelector', (c) => void (hook(c)['objectSelector'] = { matchLabels: { checked: 'yes' } }), /lets some definitions past/],
    ['no escalation webhook', (c) => void (hook(c)['name'] = 'other.example.com'), /has no webhook escalation/],
  ];
  for (const [what, change, problem] of cases) {
    const config = shipped();
    change(config);
    assert.match(webhookProblem(config, ref) ?? '', problem, what);
  }
  const byUrl = escalationWebhookConfiguration({ url: 'https://10.0.0.1:9443/validate-rbacdefinition' });
  assert.equal(webhookProblem(byUrl, { configuration: ref.configuration, target: { url: 'https://10.0.0.1:9443/validate-rbacdefinition' } }), undefined);
  assert.match(webhookProblem(byUrl, ref) ?? '', /does not reach this manager/);
});

test('the gate voices each change once (warn when it closes, info when it opens) and sets its gauge', () => {
  const cluster: { config?: OpenObject } = {};
  const lines: string[] = [];
  const gauge: number[] = [];
  const problem = webhookGate({ ref, read: () => cluster.config, log: { warn: (_o: object, m: string) => void lines.push(`warn ${m}`), info: (_o: object, m: string) => void lines.push(`info ${m}`) } as never, inPlace: { set: (_l, v) => void gauge.push(v) } });
  assert.ok(problem());
  assert.ok(problem());
  cluster.config = shipped();
  assert.equal(problem(), undefined);
  assert.deepEqual(gauge, [0, 1]);
  assert.deepEqual(lines.map((l) => l.split(' ')[0]), ['warn', 'info']);
});

// ---- a reconcile with the gate closed, against fake caches and a recording client ----

const uid = 'uid-1';
const definition: RBACDefinition = {
  apiVersion: API_VERSION,
  kind: KIND,
  metadata: { name: 'team', uid, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
  rbacBindings: [{ name: 'devs', subjects: [{ kind: 'User', name: 'alice' }], roleBindings: [{ clusterRole: 'edit', namespace: 'a' }] }],
};
// A RoleBinding the definition made for a binding it no longer has: revoking it needs no webhook.
const stale: OpenObject = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { name: 'team-old-view', namespace: 'a', labels: managedLabels('team', 'old'), ownerReferences: [{ apiVersion: API_VERSION, kind: KIND, name: 'team', uid, controller: true }] },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
  subjects: [],
};

function store<T extends KubeObject = OpenObject>(objects: Record<string, KubeObject>): Informer<T> {
  const list = Object.values(objects);
  return { store: { get: (key: string) => objects[key], list: () => list, byIndex: () => list } } as unknown as Informer<T>;
}

interface Recorded {
  run: () => Promise<unknown>;
  calls: string[];
  events: EventInput[];
  transitions: string[];
  status: () => RBACDefinitionStatus | undefined;
}

function reconcileWith(problem: string | undefined, seen: RBACDefinition = definition, now = new Date('2026-06-01T00:00:00Z')): Recorded {
  const calls: string[] = [];
  const events: EventInput[] = [];
  const transitions: string[] = [];
  let status: RBACDefinitionStatus | undefined;
  const caches: Caches = { namespaces: store({ a: { metadata: { name: 'a' } } }), clusterRoles: store({ edit: { metadata: { name: 'edit' } } }), roles: store({}), made: [store({ stale })] };
  const client = {
    create: (_t: unknown, o: KubeObject) => (calls.push(`create ${o.metadata.name}`), Promise.resolve(o)),
    apply: (_t: unknown, o: KubeObject) => (calls.push(`apply ${o.metadata.name}`), Promise.resolve(o)),
    get: () => Promise.reject(new Error('not asked for')),
    delete: (_t: unknown, key: { name: string }) => (calls.push(`delete ${key.name}`), Promise.resolve()),
    mergePatch: (_t: unknown, _k: unknown, patch: { status: RBACDefinitionStatus }) => ((status = patch.status), Promise.resolve({})),
  } as unknown as ReconcileDeps['client'];
  const deps: ReconcileDeps = {
    client,
    definitions: store<RBACDefinition>({ team: seen }),
    caches,
    events: { record: (_o: KubeObject, e: EventInput) => void events.push(e) },
    writes: { inc: () => undefined },
    transitions: { inc: (l) => void transitions.push(l.state) },
    concurrency: 4,
    now: () => now,
    webhookProblem: () => problem,
  };
  const context = { signal: new AbortController().signal, log: createLogger({ level: 'silent' }), retries: 0 };
  return { run: () => rbacDefinitionReconciler(deps)({ namespace: '', name: 'team' }, context), calls, events, transitions, status: () => status };
}

test('while the webhook is not in place: deletions only, the grant withheld and reported, a Warning event, a re-check within a bound', async () => {
  const closed = reconcileWith('the ValidatingWebhookConfiguration quorum-rbac-manager does not exist');
  const result = await closed.run();
  assert.deepEqual(closed.calls, ['delete team-old-view']);
  assert.deepEqual(result, { requeueAfter: WEBHOOK_RECHECK_MS });
  const ready = closed.status()?.conditions?.find((c) => c.type === 'Ready');
  assert.deepEqual([ready?.status, ready?.reason], ['False', 'WebhookMissing']);
  assert.match(ready?.message ?? '', /does not exist/);
  assert.deepEqual(closed.status()?.bindings?.[0]?.skipped?.map((s) => `${s.reason} ${s.name}`), ['Withheld team-devs-edit']);
  assert.deepEqual(closed.events.filter((e) => e.type === 'Warning').map((e) => e.reason), ['WebhookMissing']);

  const open = reconcileWith(undefined);
  await open.run();
  assert.deepEqual(open.calls.sort(), ['create team-devs-edit', 'delete team-old-view']);
  assert.equal(open.status()?.conditions?.find((c) => c.type === 'Ready')?.reason, 'InPlace');
});

test("a window's edges: the binding that ended is counted and told (GrantEnded), its objects deleted as Expired; the one that started, GrantStarted", async () => {
  const bindings: RBACDefinition['rbacBindings'] = [
    { name: 'devs', subjects: [{ kind: 'User', name: 'alice' }], roleBindings: [{ clusterRole: 'edit', namespace: 'a' }], notBefore: '2026-06-01T00:00:00Z' },
    { name: 'old', subjects: [{ kind: 'User', name: 'bob' }], roleBindings: [{ clusterRole: 'view', namespace: 'a' }], expiresAt: '2026-06-01T00:00:00Z' },
  ];
  const before: RBACDefinitionStatus = { bindings: [{ name: 'devs', state: 'Pending' }, { name: 'old', state: 'Active' }] };
  const edge = reconcileWith(undefined, { ...definition, rbacBindings: bindings, status: before }, new Date('2026-06-01T00:00:01Z'));
  await edge.run();
  assert.deepEqual(edge.calls.sort(), ['create team-devs-edit', 'delete team-old-view']);
  assert.deepEqual(edge.transitions, ['Active', 'Expired']);
  assert.deepEqual(
    edge.events.filter((e) => e.action === 'Window').map((e) => e.reason),
    ['GrantStarted', 'GrantEnded'],
  );
  assert.ok(edge.events.some((e) => e.reason === 'Expired' && /team-old-view: binding old expired/.test(e.note)));
});
