// The operator killed right after every etcd or Kubernetes write it makes, through a scale-up and a
// scale-down: each "process" is a fresh operator (empty caches, no memory) acting with only the operator's
// generated RBAC, stopped by a failpoint the moment its write returns. It must converge with no duplicate,
// stuck-learner or orphan member.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { Client, Pods, createLogger } from '@quorum/runtime';
import type { TestEnv } from '@quorum/runtime/testing';
import { createOperator } from '../../src/operator/operator.ts';
import { configFromEnv } from '../../src/operator/config.ts';
import { EtcdClusters } from '../../src/resources.ts';
import { NAME as OPERATOR } from '../../src/deploy/manifests.ts';
import { waitForWebhooks } from '../../src/deploy/install.ts';
import { applyCluster, clientServiceEndpoint, etcdctl, setUpOperator, waitAvailable } from './support.ts';

const quiet = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });

let env: TestEnv;
let ns: string;
let operatorClient: Client;

class Crash extends Error {}

before(async () => {
  env = await setUpOperator();
  ns = await env.namespace('crash');
  // The deployed operator steps aside (it watches another namespace); the webhooks it serves stay on.
  await env.kube.kubectl(['-n', 'quorum-system', 'set', 'env', `deploy/${OPERATOR}`, 'WATCH_NAMESPACE=quorum-elsewhere']);
  await env.kube.kubectl(['-n', 'quorum-system', 'rollout', 'status', `deploy/${OPERATOR}`, '--timeout=120s']);
  await waitForWebhooks(env.client);
  operatorClient = await env.clientFor('quorum-system', OPERATOR);
});
after(async () => {
  await env.kube.kubectl(['-n', 'quorum-system', 'set', 'env', `deploy/${OPERATOR}`, 'WATCH_NAMESPACE-']).catch(() => '');
  operatorClient?.close();
  await env.stop();
});

/** Runs operator "processes" one after another until `done` holds; each dies right after its first write. */
async function runCrashingOperators(done: () => Promise<boolean>, writes: string[]): Promise<number> {
  let lives = 0;
  const deadline = Date.now() + 600_000;
  while (!(await done())) {
    assert.ok(Date.now() < deadline, `not converged after ${lives} operator lives; writes: ${writes.join(', ')}`);
    lives++;
    const stop = new AbortController();
    const config = { ...configFromEnv({}), watchNamespace: ns, leaderElection: false, webhooks: false, probePort: 0, crashLoopGraceMs: 15_000 };
    const manager = await createOperator({
      config,
      logger: quiet,
      manager: { client: operatorClient, gracefulShutdownMs: 1000 },
      afterWrite: (what) => {
        writes.push(what);
        stop.abort();
        throw new Crash(`failpoint after ${what}`);
      },
    });
    const running = manager.start(stop.signal).catch(() => undefined);
    // A life ends at its first write, or after a while with nothing to write (converging needs no write).
    await Promise.race([new Promise((r) => stop.signal.addEventListener('abort', r, { once: true })), new Promise((r) => setTimeout(r, 8000))]);
    stop.abort();
    await running;
  }
  return lives;
}

async function converged(replicas: number): Promise<boolean> {
  try {
    await waitAvailable(env.client, ns, 'crashy', replicas, 1);
  } catch {
    return false;
  }
  return true;
}

async function assertClean(replicas: number): Promise<void> {
  const state = await waitAvailable(env.client, ns, 'crashy', replicas, 60_000);
  const endpoint = await clientServiceEndpoint(env.client, ns, 'crashy');
  const listed = JSON.parse(await etcdctl(endpoint, 'member', 'list', '-w', 'json')) as { members: { name: string; isLearner?: boolean; peerURLs: string[] }[] };
  assert.equal(listed.members.length, replicas, 'no duplicate or leftover members');
  assert.ok(listed.members.every((m) => !m.isLearner && m.name), 'no learner stuck, no member that never started');
  assert.deepEqual(new Set(listed.members.map((m) => m.peerURLs[0])).size, replicas);
  const pods = (await env.client.list(Pods, { namespace: ns, labelSelector: 'app.kubernetes.io/instance=crashy' })).items.filter((p) => !p.metadata.deletionTimestamp);
  assert.deepEqual(pods.map((p) => p.metadata.name).sort(), listed.members.map((m) => m.name).sort(), 'a pod for every member and no orphan pod');
  assert.deepEqual(state.members.map((m) => m.name).sort(), listed.members.map((m) => m.name).sort());
}

test('killed after every write, the operator still creates the cluster and scales it 3 → 5 → 3', async () => {
  const writes: string[] = [];
  await applyCluster(env.client, ns, 'crashy', { replicas: 3 });
  const created = await runCrashingOperators(() => converged(3), writes);
  await assertClean(3);
  for (const n of [5, 3]) {
    await env.client.mergePatch(EtcdClusters, { namespace: ns, name: 'crashy' }, { spec: { replicas: n } });
    await runCrashingOperators(() => converged(n), writes);
    await assertClean(n);
  }
  process.stderr.write(`operator died ${writes.length} times (${created} lives to create); after: ${writes.join(' | ')}\n`);
  for (const kind of ['etcd member add', 'etcd member promote', 'etcd member remove', 'create pod', 'create pvc', 'delete pod']) {
    assert.ok(writes.some((w) => w.startsWith(kind)), `a crash right after "${kind}" was exercised`);
  }
});
