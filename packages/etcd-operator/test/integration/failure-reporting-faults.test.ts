// Failures say what they are, on real clusters (issue 7, "no silent retries" and "status that tells the
// truth"): members that crash at start are Degraded MembersCrashLooping with etcd's own words; a learner
// whose pod can never be scheduled does not hold back a lower replicas; a member pod stuck Terminating on a
// stopped node is reported with its node and what a person can do, the cluster stays Available on a quorum
// meanwhile, and past spec.replaceStuckMemberAfterSeconds the member is replaced under a new name.
// Every absence is asserted only after a positive signal (a condition, an event, a deletionTimestamp).
// What this file needs, for the test harness (docs/testing.md):
// @exclusive nodes
// @shared operator
// @timeout 30m: three clusters, a stopped node, pods stuck terminating
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Pods } from '@quorum/runtime';
import type { TestEnv } from '@quorum/runtime/testing';
import { EtcdClusters } from '../../src/resources.ts';
import type { EtcdCluster } from '../../src/api/etcdcluster.ts';
import { applyCluster, eventually, getCluster, setUpOperator, waitAvailable, type ClusterState } from './support.ts';

let env: TestEnv;

before(async () => {
  env = await setUpOperator();
});
after(async () => {
  await env.stop();
});

interface PodObj {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  spec: { nodeName?: string };
  status?: { phase?: string };
}

interface CoreEvent {
  reason?: string;
  type?: string;
  message?: string;
  note?: string;
}

interface ConditionView {
  status: string;
  reason: string;
  message: string;
}

const condition = (cluster: EtcdCluster, type: string): ConditionView | undefined => cluster.status?.conditions?.find((c) => c.type === type);

const describe = (s: ClusterState): string => JSON.stringify({ conditions: s.cluster.status?.conditions?.map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`), members: s.members }, null, 2);

const pods = async (ns: string, name: string): Promise<PodObj[]> =>
  ((await env.client.list(Pods, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${name}` })).items as unknown as PodObj[]);

const findPod = async (ns: string, name: string): Promise<PodObj | undefined> => (await env.client.find(Pods, { namespace: ns, name })) as unknown as PodObj | undefined;

/** The cluster's events as the core API shows them (events.k8s.io `note` appears as `message`). */
async function events(ns: string, name: string): Promise<CoreEvent[]> {
  const out = await env.kube.kubectl(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${name}`, '-o', 'json']);
  return (JSON.parse(out) as { items: CoreEvent[] }).items;
}
const text = (e: CoreEvent): string => e.message ?? e.note ?? '';

/** Deletes a cluster and waits until its pods are gone, so later tests and files have the nodes to themselves. */
async function deleteCluster(ns: string, name: string): Promise<void> {
  await env.client.delete(EtcdClusters, { namespace: ns, name }).catch(() => undefined);
  await eventually(`the pods of ${ns}/${name} gone`, async () => (await pods(ns, name)).length === 0, { timeoutMs: 120_000, intervalMs: 1000 });
}

async function nodeReady(node: string): Promise<boolean> {
  const out = await env.kube.kubectl(['get', 'node', node, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']);
  return out.trim() === 'True';
}

test('members that crash at start say why: Degraded MembersCrashLooping with exit code and etcd\'s words, lastError, a Warning event', async () => {
  const ns = await env.namespace('crashing');
  const NAME = 'shout';
  await applyCluster(env.client, ns, NAME, { replicas: 3, etcd: { extraArgs: ['--log-level=shouting'] } });
  try {
    // The positive signal: every member is reported crash-looping, in the condition and in its status entry.
    const state = await eventually('Degraded MembersCrashLooping naming all 3 members, each with a lastError', async () => {
      const s = await getCluster(env.client, ns, NAME);
      const degraded = condition(s.cluster, 'Degraded');
      if (degraded?.status !== 'True' || degraded.reason !== 'MembersCrashLooping') return undefined;
      if (s.members.length !== 3) return undefined;
      return s.members.every((m) => m.lastError !== undefined && degraded.message.includes(m.name)) ? s : undefined;
    }, { timeoutMs: 180_000, intervalMs: 500 });

    const degraded = condition(state.cluster, 'Degraded')!;
    for (const m of state.members) {
      const lastError = m.lastError!;
      assert.match(lastError, /^exit code 2: /, `${m.name}: lastError has the exit code\n${describe(state)}`);
      assert.match(lastError, /shouting/, `${m.name}: lastError has etcd's own words (panic: unrecognized level: "shouting")\n${describe(state)}`);
      // The condition carries the same text: "<members>: exited with code 2: <etcd's last lines>".
      assert.ok(degraded.message.includes(`exited with code 2: ${lastError.replace(/^exit code 2: /, '')}`), `Degraded names ${m.name} with the same text as its lastError\n${describe(state)}`);
    }
    assert.ok(state.members.every((m) => !m.ready), 'no member is ready');
    const available = condition(state.cluster, 'Available');
    assert.equal(available?.status, 'False', describe(state));
    assert.ok(available.reason === 'Unreachable' || available.reason === 'QuorumLost', `Available reason: ${available.reason}`);

    // A Warning event per member, with the exit code and the last lines etcd printed.
    const warned = await eventually('a MembersCrashLooping Warning event for every member', async () => {
      const crashes = (await events(ns, NAME)).filter((e) => e.reason === 'MembersCrashLooping' && e.type === 'Warning');
      return state.members.every((m) => crashes.some((e) => text(e).startsWith(`${m.name} keeps exiting (exit code 2)`))) ? crashes : undefined;
    }, { timeoutMs: 60_000, intervalMs: 1000 });
    for (const m of state.members) {
      assert.ok(warned.some((e) => text(e).startsWith(`${m.name} keeps exiting (exit code 2)`) && text(e).includes('shouting')), `an event names ${m.name} with etcd's words:\n${warned.map(text).join('\n')}`);
    }
  } finally {
    // Running members are not recreated for spec changes (no rollouts yet): the cluster goes instead.
    await deleteCluster(ns, NAME);
  }
});

test('a learner whose pod can never be scheduled does not hold back a lower replicas', async () => {
  const ns = await env.namespace('pending');
  const NAME = 'pend';
  await applyCluster(env.client, ns, NAME, { replicas: 3 });
  try {
    await waitAvailable(env.client, ns, NAME, 3);
    // Membership comes before a rolling update: the fourth member (made from the new template) is added first,
    // and its pod matches no node, so the learner never starts and no running member is touched.
    await env.client.mergePatch(EtcdClusters, { namespace: ns, name: NAME }, { spec: { replicas: 4, podTemplate: { spec: { nodeSelector: { 'quorum.dev/none': 'x' } } } } });
    const { learner, state } = await eventually('a learner whose pod is Pending, reported as LearnerStarting', async () => {
      const s = await getCluster(env.client, ns, NAME);
      const l = s.members.find((m) => m.learner);
      if (!l || l.ready) return undefined;
      if ((await findPod(ns, l.name))?.status?.phase !== 'Pending') return undefined;
      const progressing = condition(s.cluster, 'Progressing');
      return progressing?.status === 'True' && progressing.reason === 'LearnerStarting' ? { learner: l.name, state: s } : undefined;
    }, { timeoutMs: 120_000, intervalMs: 500 });
    const progressing = condition(state.cluster, 'Progressing')!;
    assert.match(progressing.message, new RegExp(`${learner}.*Pending`), `Progressing names the learner and its Pending pod\n${describe(state)}`);

    await env.client.mergePatch(EtcdClusters, { namespace: ns, name: NAME }, { spec: { replicas: 3, podTemplate: null } });
    const done = await waitAvailable(env.client, ns, NAME, 3, 120_000);
    assert.ok(done.members.every((m) => !m.learner && m.name !== learner), `the learner is gone\n${describe(done)}`);
    await eventually(`the pod of ${learner} deleted`, async () => (await findPod(ns, learner)) === undefined, { timeoutMs: 60_000, intervalMs: 500 });
    const removed = (await events(ns, NAME)).filter((e) => e.reason === 'MemberRemoved');
    assert.ok(removed.some((e) => text(e).includes(`removed ${learner} `)), `a MemberRemoved event for ${learner}:\n${removed.map(text).join('\n')}`);
  } finally {
    await deleteCluster(ns, NAME);
  }
});

test('a member pod stuck Terminating on a stopped node: Available on a quorum, the node and the remedy named, and the member replaced past its bound', async () => {
  const ns = await env.namespace('stuck');
  const NAME = 'stuck';
  // The bound counts from the pod's deletionTimestamp; PodStuckTerminating is reported from 45 s on, so a
  // bound of 60 s leaves a 15 s window in which the message must show before the member is replaced.
  await applyCluster(env.client, ns, NAME, { replicas: 3, replaceStuckMemberAfterSeconds: 60 });
  let node: string | undefined;
  let stopped = false;
  try {
    await waitAvailable(env.client, ns, NAME, 3);
    const before = await eventually('a leader in status', async () => {
      const s = await getCluster(env.client, ns, NAME);
      return s.members.some((m) => m.leader) ? s : undefined;
    }, { timeoutMs: 30_000, intervalMs: 500 });
    const victim = before.members.find((m) => !m.leader)!.name;
    node = (await findPod(ns, victim))!.spec.nodeName!;

    // What status said while the node was down, recorded on every poll: the messages are short-lived.
    const seen: { servingDegraded?: string; stuck?: string; progressing: Set<string> } = { progressing: new Set() };
    const observe = async (): Promise<ClusterState> => {
      const s = await getCluster(env.client, ns, NAME);
      const available = condition(s.cluster, 'Available');
      const degraded = condition(s.cluster, 'Degraded');
      const progressing = condition(s.cluster, 'Progressing');
      if (progressing) seen.progressing.add(progressing.reason);
      if (available?.status === 'True' && available.message.includes('2/3 voting members serve') && degraded?.status === 'True' && degraded.reason === 'MembersUnhealthy' && degraded.message.includes(victim)) {
        seen.servingDegraded ??= `Available: ${available.message}; Degraded: ${degraded.message}`;
      }
      if (progressing?.reason === 'PodStuckTerminating') seen.stuck ??= progressing.message;
      return s;
    };

    await env.kube.stopNode(node);
    stopped = true;
    // The positive signal: Kubernetes evicts the pod (not-ready/unreachable tolerations are 10 s here).
    await eventually(`pod ${victim} on ${node} has a deletionTimestamp`, async () => {
      await observe();
      return (await findPod(ns, victim))?.metadata.deletionTimestamp !== undefined;
    }, { timeoutMs: 120_000, intervalMs: 500 });
    await eventually(`${victim} removed from the membership`, async () => {
      const s = await observe();
      return s.cluster.status?.members !== undefined && !s.members.some((m) => m.name === victim);
    }, { timeoutMs: 180_000, intervalMs: 500 });
    const progressingSeen = [...seen.progressing].join(', ');

    assert.ok(seen.servingDegraded, `while ${victim} was down: Available=True "2/3 voting members serve" and Degraded=True MembersUnhealthy naming it (Progressing reasons seen: ${progressingSeen})`);
    assert.ok(seen.stuck, `Progressing PodStuckTerminating was reported before the replacement (Progressing reasons seen: ${progressingSeen})`);
    assert.ok(seen.stuck.includes(victim) && seen.stuck.includes(node), `the message names the pod and the node: ${seen.stuck}`);
    assert.match(seen.stuck, /out-of-service/, `the message says what a person can do: ${seen.stuck}`);
    assert.match(seen.stuck, /\d+ s past its grace period/, `the message says for how long: ${seen.stuck}`);

    const replaced = await waitAvailable(env.client, ns, NAME, 3, 240_000);
    assert.ok(replaced.members.every((m) => m.name !== victim), `a new member replaced ${victim}\n${describe(replaced)}`);
    const removed = (await events(ns, NAME)).filter((e) => e.reason === 'MemberRemoved');
    assert.ok(removed.some((e) => text(e).includes(victim) && text(e).includes('PodStuckTerminating')), `a MemberRemoved event for ${victim} (PodStuckTerminating):\n${removed.map(text).join('\n')}`);

    // The node returns: its kubelet confirms the deletion, and the cluster keeps its 3 new-era members.
    await env.kube.startNode(node);
    stopped = false;
    await eventually(`node ${node} Ready`, () => nodeReady(node!), { timeoutMs: 120_000, intervalMs: 1000 });
    await eventually(`the old pod ${victim} gone`, async () => (await findPod(ns, victim)) === undefined, { timeoutMs: 120_000, intervalMs: 1000 });
    const final = await waitAvailable(env.client, ns, NAME, 3, 120_000);
    assert.ok(final.members.every((m) => m.name !== victim), `${victim} did not come back\n${describe(final)}`);
  } finally {
    if (node && stopped) {
      await env.kube.startNode(node);
      await eventually(`node ${node} Ready`, () => nodeReady(node!), { timeoutMs: 120_000, intervalMs: 1000 }).catch(() => undefined);
    }
    await deleteCluster(ns, NAME).catch(() => undefined);
  }
});
