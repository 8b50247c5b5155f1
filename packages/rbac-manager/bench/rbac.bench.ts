// The RBAC manager's figures on localkube (issue 22), `npm run bench -- rbac`. The manager runs in this process
// as createRbacManager builds it (admin's client), its escalation webhook served here too and registered
// fail-closed (the manager grants nothing without it), over QUORUM_RBAC_DEFINITIONS definitions (default 100)
// and QUORUM_RBAC_NAMESPACES namespaces (default 1,000) in 10 label groups: definition d binds view to its own
// user in every namespace of group d mod 10 (by namespaceSelector), so each namespace gets definitions/10
// RoleBindings and the whole set is definitions × namespaces / 10 (10,000 by default).
//
// QUORUM_BENCH_RUNS runs (default 5, the least a median is reported over), each of two sides in alternating order:
//   resync   the manager stopped, every RoleBinding it made deleted, the manager started: seconds until its
//            client has created every one again (201 answers; checked by one list at the end).
//   floor    the same RoleBindings created by a plain client, as many in flight as the manager's workers ×
//            writes per definition, then deleted: what the API server takes with nothing to decide.
// then, with the manager running, QUORUM_RBAC_NEW_NAMESPACES (default 20) namespaces created one at a time, each
// timed from its create to its last RoleBinding listed (polled every 10 ms).
//
// Figures: rbac.full_resync_s (goal ≤ 60 s), rbac.full_resync_floor_s, rbac.full_resync_ratio (median of the
// per-run ratios); rbac.namespace_to_binding_p99_ms (goal ≤ 1,000 ms) and _p50_ms over every run's samples;
// rbac.idle_writes_per_min: every write of the manager's client (POST, PUT, PATCH, DELETE, Events included)
// in 60 s with nothing changing, after the last run (goal 0; no leader election here, so no Lease).
import { Client, ClusterRoles, createLogger, CustomResourceDefinitions, Namespaces, RoleBindings, sleep, type OpenObject } from '@quorum/runtime';
import { eventually, TestEnv } from '@quorum/localkube/testing';
import { rbacDefinitionCRD } from '../src/api/crd.ts';
import { API_VERSION, KIND } from '../src/api/rbacdefinition.ts';
import { createRbacManager, DEFAULT_WORKERS, DEFAULT_WRITE_CONCURRENCY } from '../src/operator/manager.ts';
import { MANAGED_BY, MANAGED_BY_LABEL } from '../src/plan/names.ts';
import { RBACDefinitions } from '../src/resources.ts';
import { serveEscalationWebhook } from '../test/integration/support.ts';

const report = (bench: string, value: number, unit: string): void => void process.stdout.write(JSON.stringify({ bench, value: Math.round(value * 1000) / 1000, unit }) + '\n');
const progress = (msg: string): void => void process.stderr.write(`[rbac bench] ${msg}\n`);
const percentile = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};
const median = (xs: readonly number[]): number => percentile(xs, 50);

const DEFINITIONS = Number(process.env['QUORUM_RBAC_DEFINITIONS'] ?? 100);
const NAMESPACES = Number(process.env['QUORUM_RBAC_NAMESPACES'] ?? 1_000);
const NEW_NAMESPACES = Number(process.env['QUORUM_RBAC_NEW_NAMESPACES'] ?? 20);
const RUNS = Number(process.env['QUORUM_BENCH_RUNS'] ?? 5);
const GROUPS = 10;
const MADE = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;
if (RUNS < 5) progress(`QUORUM_BENCH_RUNS=${RUNS}: the figures are medians of fewer than 5 runs`);

const run = Date.now().toString(36);
const LABEL = `rbac-bench-${run}`;
const groupOf = (i: number): string => `g${i % GROUPS}`;
const perNamespace = Math.ceil(DEFINITIONS / GROUPS);
const namespaces: string[] = [];

async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  const queue = [...items];
  const worker = async (): Promise<void> => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
  };
  await Promise.all(Array.from({ length: Math.min(limit, queue.length) }, worker));
}

async function deleteBindings(client: Client, labelSelector: string): Promise<void> {
  await inParallel(namespaces, 16, (ns) => client.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, undefined, { query: { labelSelector } }));
}

/** The floor: every RoleBinding the definitions make, created by a plain client; seconds. */
async function floor(client: Client): Promise<number> {
  const bindings = namespaces.flatMap((ns) => {
    const group = /-(g\d+)-\d+$/.exec(ns)?.[1];
    return Array.from({ length: DEFINITIONS }, (_, d) => d)
      .filter((d) => `g${d % GROUPS}` === group)
      .map((d): OpenObject => ({
        metadata: { name: `floor-${d}-view`, namespace: ns, labels: { 'rbac-bench-floor': run } },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `bench-${d}` }],
      }));
  });
  const started = performance.now();
  await inParallel(bindings, DEFAULT_WORKERS * DEFAULT_WRITE_CONCURRENCY, (b) => client.create(RoleBindings, b, { fieldManager: 'rbac-bench-floor' }));
  const seconds = (performance.now() - started) / 1000;
  await deleteBindings(client, `rbac-bench-floor=${run}`);
  return seconds;
}

interface Running {
  stop(): Promise<void>;
  writes(): number;
  created(): number;
}

/** The manager in this process, on a client of its own whose writes are counted. */
async function startManager(env: TestEnv, escalationWebhook: Parameters<typeof createRbacManager>[0]['escalationWebhook']): Promise<Running> {
  const client = await Client.connect({ kubeconfig: env.kubeconfig });
  let writes = 0;
  let created = 0;
  client.observe((method, path, code) => {
    if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) writes++;
    if (method === 'POST' && path.endsWith('/rolebindings') && code === 201) created++;
  });
  const { manager } = await createRbacManager({ escalationWebhook, logger: createLogger({ level: 'warn' }), manager: { client, gracefulShutdownMs: 2_000 } });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  return {
    stop: async () => {
      stop.abort();
      await running.catch(() => undefined);
      client.close();
    },
    writes: () => writes,
    created: () => created,
  };
}

/** Namespaces `…-<group>-<i>`: the group ends the name, so the floor knows what each gets. */
async function createNamespace(admin: Client, name: string, group: string): Promise<void> {
  await admin.create(Namespaces, { metadata: { name, labels: { [LABEL]: 'yes', group } } });
  namespaces.push(name);
}

async function setUp(admin: Client): Promise<void> {
  await admin.apply(CustomResourceDefinitions, rbacDefinitionCRD(), { fieldManager: 'rbac-bench', force: true });
  await eventually('the CRD established', async () => {
    const crd = (await admin.get(CustomResourceDefinitions, rbacDefinitionCRD().metadata.name ?? '')) as OpenObject & { status?: { conditions?: { type: string; status: string }[] } };
    return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  }, { timeoutMs: 30_000, intervalMs: 200 });
  await admin.get(ClusterRoles, 'view');
  progress(`creating ${NAMESPACES} namespaces and ${DEFINITIONS} definitions (${(DEFINITIONS * NAMESPACES) / GROUPS} RoleBindings)`);
  await inParallel(Array.from({ length: NAMESPACES }, (_, i) => i), 32, (i) => createNamespace(admin, `${LABEL}-${groupOf(i)}-${i}`, groupOf(i)));
  await inParallel(Array.from({ length: DEFINITIONS }, (_, d) => d), 16, (d) =>
    admin.create(RBACDefinitions, {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name: `${LABEL}-${d}`, labels: { [LABEL]: 'yes' } },
      rbacBindings: [{ name: 'b', subjects: [{ kind: 'User', name: `bench-${d}` }], roleBindings: [{ clusterRole: 'view', namespaceSelector: { matchLabels: { [LABEL]: 'yes', group: `g${d % GROUPS}` } } }] }],
    }),
  );
}

/** Namespace created → its RoleBindings listed, for NEW_NAMESPACES namespaces; milliseconds each. */
async function namespaceLatencies(admin: Client, r: number): Promise<number[]> {
  const out: number[] = [];
  for (let k = 0; k < NEW_NAMESPACES; k++) {
    const group = groupOf(k);
    const ns = `${LABEL}-n${r}-${group}-${k}`;
    const t0 = performance.now();
    await createNamespace(admin, ns, group);
    await eventually(`bindings in ${ns}`, async () => (await admin.list(RoleBindings, { namespace: ns, labelSelector: MADE })).items.length === perNamespace, { timeoutMs: 30_000, intervalMs: 10 });
    out.push(performance.now() - t0);
  }
  return out;
}

const env = await TestEnv.start();
const admin = env.client;
const webhook = await serveEscalationWebhook(admin, admin, `quorum-rbac-manager-bench-${run}`);
let manager: Running | undefined;
try {
  await webhook.register();
  await setUp(admin);
  const resync: number[] = [];
  const floors: number[] = [];
  const latencies: number[] = [];
  const resyncOnce = async (): Promise<number> => {
    await manager?.stop();
    await deleteBindings(admin, MADE);
    const expected = namespaces.length * perNamespace;
    const started = performance.now();
    const running = (manager = await startManager(env, webhook.ref));
    await eventually('every binding in place', () => running.created() >= expected, { timeoutMs: 600_000, intervalMs: 50 });
    const seconds = (performance.now() - started) / 1000;
    const listed = (await admin.list(RoleBindings, { labelSelector: MADE })).items.length;
    if (listed !== expected) throw new Error(`${listed} RoleBindings listed after the resync, ${expected} expected`);
    return seconds;
  };
  for (let r = 0; r < RUNS; r++) {
    for (const side of r % 2 === 0 ? ['resync', 'floor'] : ['floor', 'resync']) {
      if (side === 'resync') resync.push(await resyncOnce());
      else floors.push(await floor(admin));
    }
    latencies.push(...(await namespaceLatencies(admin, r)));
    progress(`run ${r + 1}/${RUNS}: resync ${resync.at(-1)!.toFixed(1)} s, floor ${floors.at(-1)!.toFixed(1)} s, namespace → bindings p99 so far ${percentile(latencies, 99).toFixed(0)} ms`);
  }
  const before = manager!.writes();
  await sleep(60_000);
  const idleWrites = manager!.writes() - before;
  report('rbac.full_resync_s', median(resync), 's');
  report('rbac.full_resync_floor_s', median(floors), 's');
  report('rbac.full_resync_ratio', median(resync.map((s, i) => s / floors[i]!)), 'ratio');
  report('rbac.namespace_to_binding_p99_ms', percentile(latencies, 99), 'ms');
  report('rbac.namespace_to_binding_p50_ms', percentile(latencies, 50), 'ms');
  report('rbac.idle_writes_per_min', idleWrites, 'writes/min');
} finally {
  await manager?.stop();
  await webhook.stop();
  progress('cleaning up (definitions, then namespaces)');
  await admin.request('DELETE', '/apis/rbac.quorum.dev/v1alpha1/rbacdefinitions', undefined, { query: { labelSelector: `${LABEL}=yes` } }).catch(() => undefined);
  await inParallel(namespaces, 32, (ns) => admin.delete(Namespaces, ns).catch(() => undefined));
  await env.stop();
}
