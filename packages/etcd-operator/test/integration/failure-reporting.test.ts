// Failures say what they are, on real clusters (issue 7, "no silent retries" and "status that tells the
// truth"): members that crash at start are Degraded MembersCrashLooping with etcd's own words; a learner
// whose pod can never be scheduled does not hold back a lower replicas. (A member stuck Terminating on a
// stopped node is in failure-reporting-faults.test.ts, which runs alone.)
// Every absence is asserted only after a positive signal (a condition, an event, a deletionTimestamp).
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
// @shared operator
// @timeout 15m: two clusters, each step bounded at 60-180 s
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestEnv } from '@quorum/localkube/testing';
import { EtcdClusters } from '../../src/resources.ts';
import { applyCluster, eventually, getCluster, PLAINTEXT, setUpOperator, waitAvailable } from './support.ts';
import { clusterEvents, condition, deleteCluster, describeState, eventText, findPod } from './failure-views.ts';

let env: TestEnv;

before(async () => {
  env = await setUpOperator();
});
after(async () => {
  await env.stop();
});

test('members that crash at start say why: Degraded MembersCrashLooping with exit code and etcd\'s words, lastError, a Warning event', async () => {
  const ns = await env.namespace('crashing');
  const NAME = 'shout';
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, etcd: { extraArgs: ['--log-level=shouting'] } });
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
      assert.match(lastError, /^exit code 2: /, `${m.name}: lastError has the exit code\n${describeState(state)}`);
      assert.match(lastError, /shouting/, `${m.name}: lastError has etcd's own words (panic: unrecognized level: "shouting")\n${describeState(state)}`);
      // The condition carries the same text: "<members>: exited with code 2: <etcd's last lines>".
      assert.ok(degraded.message.includes(`exited with code 2: ${lastError.replace(/^exit code 2: /, '')}`), `Degraded names ${m.name} with the same text as its lastError\n${describeState(state)}`);
    }
    assert.ok(state.members.every((m) => !m.ready), 'no member is ready');
    const available = condition(state.cluster, 'Available');
    assert.equal(available?.status, 'False', describeState(state));
    assert.ok(available.reason === 'Unreachable' || available.reason === 'QuorumLost', `Available reason: ${available.reason}`);

    // A Warning event per member, with the exit code and the last lines etcd printed.
    const warned = await eventually('a MembersCrashLooping Warning event for every member', async () => {
      const crashes = (await clusterEvents(env, ns, NAME)).filter((e) => e.reason === 'MembersCrashLooping' && e.type === 'Warning');
      return state.members.every((m) => crashes.some((e) => eventText(e).startsWith(`${m.name} keeps exiting (exit code 2)`))) ? crashes : undefined;
    }, { timeoutMs: 60_000, intervalMs: 1000 });
    for (const m of state.members) {
      assert.ok(warned.some((e) => eventText(e).startsWith(`${m.name} keeps exiting (exit code 2)`) && eventText(e).includes('shouting')), `an event names ${m.name} with etcd's words:\n${warned.map(eventText).join('\n')}`);
    }
  } finally {
    // Running members are not recreated for spec changes (no rollouts yet): the cluster goes instead.
    await deleteCluster(env, ns, NAME);
  }
});

test('a learner whose pod can never be scheduled does not hold back a lower replicas', async () => {
  const ns = await env.namespace('pending');
  const NAME = 'pend';
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3 });
  try {
    await waitAvailable(env.client, ns, NAME, 3);
    // Membership comes before a rolling update: the fourth member (made from the new template) is added first,
    // and its pod matches no node, so the learner never starts and no running member is touched.
    await env.client.mergePatch(EtcdClusters, { namespace: ns, name: NAME }, { spec: { replicas: 4, podTemplate: { spec: { nodeSelector: { 'quorum.dev/none': 'x' } } } } });
    const { learner, state } = await eventually('a learner whose pod is Pending, reported as LearnerStarting', async () => {
      const s = await getCluster(env.client, ns, NAME);
      const l = s.members.find((m) => m.learner);
      if (!l || l.ready) return undefined;
      if ((await findPod(env, ns, l.name))?.status?.phase !== 'Pending') return undefined;
      const progressing = condition(s.cluster, 'Progressing');
      return progressing?.status === 'True' && progressing.reason === 'LearnerStarting' ? { learner: l.name, state: s } : undefined;
    }, { timeoutMs: 120_000, intervalMs: 500 });
    const progressing = condition(state.cluster, 'Progressing')!;
    assert.match(progressing.message, new RegExp(`${learner}.*Pending`), `Progressing names the learner and its Pending pod\n${describeState(state)}`);

    await env.client.mergePatch(EtcdClusters, { namespace: ns, name: NAME }, { spec: { replicas: 3, podTemplate: null } });
    const done = await waitAvailable(env.client, ns, NAME, 3, 120_000);
    assert.ok(done.members.every((m) => !m.learner && m.name !== learner), `the learner is gone\n${describeState(done)}`);
    await eventually(`the pod of ${learner} deleted`, async () => (await findPod(env, ns, learner)) === undefined, { timeoutMs: 60_000, intervalMs: 500 });
    const removed = (await clusterEvents(env, ns, NAME)).filter((e) => e.reason === 'MemberRemoved');
    assert.ok(removed.some((e) => eventText(e).includes(`removed ${learner} `)), `a MemberRemoved event for ${learner}:\n${removed.map(eventText).join('\n')}`);
  } finally {
    await deleteCluster(env, ns, NAME);
  }
});

