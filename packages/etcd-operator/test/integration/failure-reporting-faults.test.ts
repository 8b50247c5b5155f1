// Failures say what they are, on real clusters (issue 7): a member pod stuck Terminating on a stopped node is
// reported with its node and what a person can do, the cluster stays Available on a quorum meanwhile, and past
// spec.replaceStuckMemberAfterSeconds the member is replaced under a new name. (Failures that need no node to
// stop are in failure-reporting.test.ts.)
// Every absence is asserted only after a positive signal (a condition, an event, a deletionTimestamp).
// What this file needs, for the test harness (docs/testing.md):
// @exclusive nodes
// @shared operator
// @timeout 20m: a stopped node, a pod stuck terminating, bounds of 120-240 s
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestEnv } from '@quorum/localkube/testing';
import { applyCluster, type ClusterState, eventually, getCluster, PLAINTEXT, setUpOperator, waitAvailable } from './support.ts';
import { clusterEvents, condition, deleteCluster, describeState, eventText, findPod } from './failure-views.ts';

let env: TestEnv;

before(async () => {
  env = await setUpOperator();
});
after(async () => {
  await env.stop();
});

async function nodeReady(node: string): Promise<boolean> {
  const out = await env.kube.kubectl(['get', 'node', node, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']);
  return out.trim() === 'True';
}

test('a member pod stuck Terminating on a stopped node: Available on a quorum, the node and the remedy named, and the member replaced past its bound', async () => {
  const ns = await env.namespace('stuck');
  const NAME = 'stuck';
  // The bound counts from the pod's deletionTimestamp; PodStuckTerminating is reported from 45 s on, so a
  // bound of 60 s leaves a 15 s window in which the message must show before the member is replaced.
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, replaceStuckMemberAfterSeconds: 60 });
  let node: string | undefined;
  let stopped = false;
  try {
    await waitAvailable(env.client, ns, NAME, 3);
    const before = await eventually('a leader in status', async () => {
      const s = await getCluster(env.client, ns, NAME);
      return s.members.some((m) => m.leader) ? s : undefined;
    }, { timeoutMs: 30_000, intervalMs: 500 });
    const victim = before.members.find((m) => !m.leader)!.name;
    node = (await findPod(env, ns, victim))!.spec.nodeName!;

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
      return (await findPod(env, ns, victim))?.metadata.deletionTimestamp !== undefined;
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
    assert.ok(replaced.members.every((m) => m.name !== victim), `a new member replaced ${victim}\n${describeState(replaced)}`);
    const removed = (await clusterEvents(env, ns, NAME)).filter((e) => e.reason === 'MemberRemoved');
    assert.ok(removed.some((e) => eventText(e).includes(victim) && eventText(e).includes('PodStuckTerminating')), `a MemberRemoved event for ${victim} (PodStuckTerminating):\n${removed.map(eventText).join('\n')}`);

    // The node returns: its kubelet confirms the deletion, and the cluster keeps its 3 new-era members.
    await env.kube.startNode(node);
    stopped = false;
    await eventually(`node ${node} Ready`, () => nodeReady(node!), { timeoutMs: 120_000, intervalMs: 1000 });
    await eventually(`the old pod ${victim} gone`, async () => (await findPod(env, ns, victim)) === undefined, { timeoutMs: 120_000, intervalMs: 1000 });
    const final = await waitAvailable(env.client, ns, NAME, 3, 120_000);
    assert.ok(final.members.every((m) => m.name !== victim), `${victim} did not come back\n${describeState(final)}`);
  } finally {
    if (node && stopped) {
      await env.kube.startNode(node);
      await eventually(`node ${node} Ready`, () => nodeReady(node!), { timeoutMs: 120_000, intervalMs: 1000 }).catch(() => undefined);
    }
    await deleteCluster(env, ns, NAME).catch(() => undefined);
  }
});
