// A reconcile, against fake caches and a recording client. The manager acts only while its escalation webhook
// guards definition writes: what counts as in place (the shipped configuration, pointing at this manager,
// failing closed, letting nothing past, trusting its CA alone), and a reconcile while it is not (deletions only, every grant withheld
// and reported, a Warning event, a bounded re-check). A binding's window reaching an edge: counted and told.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, NotFoundError, type EventInput, type Logger, type Informer, type KubeObject, type OpenObject } from '@quorum/runtime';
import { ESCALATION_WEBHOOK_PATH } from '../../src/admission/webhook.ts';
import { API_VERSION, KIND, type RBACDefinition, type RBACDefinitionStatus } from '../../src/api/rbacdefinition.ts';
import type { Caches } from '../../src/controller/observe.ts';
import { rbacDefinitionReconciler, type ReconcileDeps } from '../../src/controller/reconcile.ts';
import { CA_REREAD_MS, CA_RETRY_MS, pemCertificates, trustedCAReader, WEBHOOK_RECHECK_MS, webhookGate, webhookProblem, type EscalationWebhookRef } from '../../src/controller/webhook-gate.ts';
import { escalationWebhookConfiguration } from '../../src/deploy/manifests.ts';
import { managedLabels } from '../../src/plan/names.ts';

// Two CA certificates as PEM blocks: the gate compares their bodies, not their contents.
const pemOf = (body: string): string => `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`;
const ownCA = pemOf('TUFOQUdFUi1DQS0xAAECAwQFBgcICQ==');
const renewedCA = pemOf('TUFOQUdFUi1DQS0yAAECAwQFBgcICQ==');
const foreignCA = pemOf('QU5PVEhFUi1DQQABAgMEBQYHCAk=');
const b64 = (pem: string): string => Buffer.from(pem).toString('base64');
const trusted = pemCertificates(ownCA);

const ref: EscalationWebhookRef = { configuration: 'quorum-rbac-manager', target: { service: { namespace: 'quorum-system', name: 'quorum-rbac-manager' } }, ca: { pem: ownCA } };
const hook = (config: OpenObject): Record<string, unknown> => (config['webhooks'] as Record<string, unknown>[])[0]!;
const clientConfig = (config: OpenObject): Record<string, unknown> => hook(config)['clientConfig'] as Record<string, unknown>;
/** The configuration the manifests ship, with the CA published into it as the webhook's serving does. */
const shipped = (): OpenObject => {
  const config = escalationWebhookConfiguration({ service: { namespace: 'quorum-system', name: 'quorum-rbac-manager', path: ESCALATION_WEBHOOK_PATH, port: 443 } });
  clientConfig(config)['caBundle'] = b64(ownCA);
  return config;
};

test('in place: the configuration the manifests ship, pointing at this manager and trusting its CA alone; anything less is named', () => {
  assert.equal(webhookProblem(shipped(), ref, trusted), undefined);
  assert.match(webhookProblem(undefined, ref, trusted) ?? '', /ValidatingWebhookConfiguration quorum-rbac-manager does not exist/);
  const cases: [string, (c: OpenObject) => void, RegExp][] = [
    ['failing open', (c) => void (hook(c)['failurePolicy'] = 'Ignore'), /failurePolicy is Ignore; it must fail closed/],
    ['matching one version exactly', (c) => void (hook(c)['matchPolicy'] = 'Exact'), /matchPolicy is Exact; writes through another version/],
    ['UPDATE not sent', (c) => void ((hook(c)['rules'] as { operations: string[] }[])[0]!.operations = ['CREATE']), /does not send UPDATE of rbacdefinitions/],
    ['another Service', (c) => void ((clientConfig(c) as { service: { name: string } }).service.name = 'elsewhere'), /calls Service quorum-system\/elsewhere/],
    ['an objectSelector', (c) => void (hook(c)['objectSelector'] = { matchLabels: { checked: 'yes' } }), /lets some definitions past/],
    ['no escalation webhook', (c) => void (hook(c)['name'] = 'other.example.com'), /has no webhook escalation/],
    ['no caBundle', (c) => void delete clientConfig(c)['caBundle'], /has no caBundle: the API server would trust its system roots/],
    ['a foreign CA beside its own', (c) => void (clientConfig(c)['caBundle'] = b64(ownCA + foreignCA)), /its caBundle trusts 1 CA\(s\) besides the manager's/],
    ['a foreign CA instead of its own', (c) => void (clientConfig(c)['caBundle'] = b64(foreignCA)), /its caBundle trusts 1 CA\(s\) besides the manager's/],
    ['no certificate in the caBundle', (c) => void (clientConfig(c)['caBundle'] = b64('not a certificate')), /its caBundle holds no PEM certificate/],
  ];
  for (const [what, change, problem] of cases) {
    const config = shipped();
    change(config);
    assert.match(webhookProblem(config, ref, trusted) ?? '', problem, what);
  }
  // Its CA not read yet: it cannot tell whom the API server trusts, so it does not count the webhook in place.
  assert.match(webhookProblem(shipped(), ref, []) ?? '', /has not read its own CA yet/);
  // A renewal: the Secret holds the new CA and the old one; the configuration, published before or after, is in place.
  const both = pemCertificates(renewedCA + ownCA);
  assert.equal(webhookProblem(shipped(), ref, both), undefined);
  const republished = shipped();
  clientConfig(republished)['caBundle'] = b64(renewedCA + ownCA);
  assert.equal(webhookProblem(republished, ref, both), undefined);
  const byUrl = escalationWebhookConfiguration({ url: 'https://10.0.0.1:9443/validate-rbacdefinition' });
  clientConfig(byUrl)['caBundle'] = b64(ownCA);
  assert.equal(webhookProblem(byUrl, { ...ref, target: { url: 'https://10.0.0.1:9443/validate-rbacdefinition' } }, trusted), undefined);
  assert.match(webhookProblem(byUrl, ref, trusted) ?? '', /does not reach this manager/);
});

test('pemCertificates: each certificate of a bundle, its body without line breaks, whatever the wrapping', () => {
  const wrapped = `-----BEGIN CERTIFICATE-----\nTUFO\nQUdF\r\nUi1D\n-----END CERTIFICATE-----\n${foreignCA}`;
  assert.deepEqual(pemCertificates(wrapped), ['TUFOQUdFUi1D', 'QU5PVEhFUi1DQQABAgMEBQYHCAk=']);
  assert.deepEqual(pemCertificates('-----BEGIN PRIVATE KEY-----\nQUJD\n-----END PRIVATE KEY-----\n'), []);
});

test('the gate voices each change once (warn when it closes, info when it opens) and sets its gauge', async () => {
  const cluster: { config?: OpenObject } = {};
  const lines: string[] = [];
  const gauge: number[] = [];
  const log = { warn: (_o: object, m: string) => void lines.push(`warn ${m}`), info: (_o: object, m: string) => void lines.push(`info ${m}`) } as unknown as Pick<Logger, 'warn' | 'info'>;
  const problem = webhookGate({ ref, read: () => cluster.config, trustedCAs: () => Promise.resolve({ certificates: trusted }), log, inPlace: { set: (_l, v) => void gauge.push(v) } });
  assert.ok(await problem());
  assert.ok(await problem());
  cluster.config = shipped();
  assert.equal(await problem(), undefined);
  // Weakened: a foreign CA added closes it again, with its own warning.
  clientConfig(cluster.config)['caBundle'] = b64(ownCA + foreignCA);
  assert.match((await problem()) ?? '', /besides the manager's/);
  assert.deepEqual(gauge, [0, 1, 0]);
  assert.deepEqual(lines.map((l) => l.split(' ')[0]), ['warn', 'info', 'warn']);
});

test('trustedCAReader: the serving Secret read on first use and at most every 30 s (2 s while it knows no CA), one read at a time; every CA it held stays trusted; a failed read keeps them and warns once per reason', async () => {
  let clock = 0;
  let reads = 0;
  let secret: { data?: Record<string, string> } | Error = new NotFoundError('GET', '/api/v1/namespaces/quorum-system/secrets/certs', 404, { reason: 'NotFound', message: 'not found' });
  const client = { get: () => (reads++, secret instanceof Error ? Promise.reject(secret) : Promise.resolve(secret)) } as unknown as Parameters<typeof trustedCAReader>[0];
  const warnings: string[] = [];
  const read = trustedCAReader(client, { secret: { namespace: 'quorum-system', name: 'certs' } }, { warn: (_o: object, m: string) => void warnings.push(m) } as unknown as Pick<Logger, 'warn'>, () => clock);
  // Not made yet (the first replica's webhook serving makes it): nothing trusted, and why.
  assert.deepEqual(await read(), { certificates: [], readProblem: 'its serving certificate Secret quorum-system/certs does not exist yet' });
  // Knowing no CA, it looks again after 2 s.
  clock += CA_RETRY_MS - 1;
  await read();
  assert.equal(reads, 1, 'read again before 2 s');
  clock += 1;
  secret = { data: { 'ca.crt': b64(ownCA) } };
  // Four reconciles asking at once share one read.
  const answers = await Promise.all([read(), read(), read(), read()]);
  assert.equal(reads, 2);
  assert.deepEqual(answers.map((a) => a.certificates), Array.from({ length: 4 }, () => trusted));
  // Knowing it, not again before 30 s.
  secret = { data: { 'ca.crt': b64(renewedCA + ownCA) } };
  clock += CA_REREAD_MS - 1;
  assert.deepEqual((await read()).certificates, trusted, 'read again before 30 s');
  clock += 1;
  assert.deepEqual([...(await read()).certificates].sort(), pemCertificates(ownCA + renewedCA).sort());
  assert.equal(reads, 3);
  // The next renewal drops the oldest CA from the Secret: the configuration may still hold it for a publishing
  // round, so it stays trusted.
  secret = { data: { 'ca.crt': b64(renewedCA) } };
  clock += CA_REREAD_MS;
  assert.deepEqual([...(await read()).certificates].sort(), pemCertificates(ownCA + renewedCA).sort());
  // A refused read: what was read stays, one warning per reason.
  secret = new Error('connect ECONNREFUSED');
  for (let i = 0; i < 3; i++) {
    clock += CA_REREAD_MS;
    const got = await read();
    assert.equal(got.certificates.length, 2);
    assert.match(got.readProblem ?? '', /cannot read its serving certificate Secret quorum-system\/certs: .*ECONNREFUSED/);
  }
  assert.equal(warnings.length, 2, 'the NotFound, then the refusal, each once');
  // Given a PEM (served outside the cluster): never read.
  assert.deepEqual(await trustedCAReader(client, { pem: ownCA }, { warn: () => undefined })(), { certificates: trusted });
});

test('the gate, its CA unknown: the configuration is not in place, and the message says why the CA could not be read', async () => {
  const problem = webhookGate({
    ref,
    read: shipped,
    trustedCAs: () => Promise.resolve({ certificates: [], readProblem: 'its serving certificate Secret quorum-system/certs does not exist yet' }),
    log: { warn: () => undefined, info: () => undefined },
    inPlace: { set: () => undefined },
  });
  assert.match((await problem()) ?? '', /has not read its own CA yet .*\(its serving certificate Secret quorum-system\/certs does not exist yet\)/);
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
    webhookProblem: () => Promise.resolve(problem),
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
