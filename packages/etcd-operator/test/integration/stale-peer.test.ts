// etcd-io/etcd#14523, reproduced on purpose: the leader keeps a healthy follower "inactive" while the
// streams to it are up, and then refuses every learner add ("unhealthy cluster"), which once stalled a
// scale-up for more than 6 minutes. The recipe, in the leader's own network namespace: drop its DNS answers
// (so a pipeline send to the follower hangs in a lookup), reset the follower's stream connections for a moment
// (so the leader falls back to the pipeline), let the follower redial (the streams come back, the peer is
// active again), and then the pending pipeline sends fail on DNS and mark the peer inactive for good.
// With that state confirmed from the leader's metrics, a 3 → 5 scale-up must still finish within 60 s.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
// @shared operator
// @quiet: races etcd's own timers to leave a stale peer view, and bounds a scale-up at 60 s
// @timeout 45m: up to five tries of about 7 minutes
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Pods } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import { EtcdClient } from '../../src/etcd/client.ts';
import { UnhealthyClusterError } from '../../src/etcd/errors.ts';
import { activePeers } from '../../src/etcd/metrics.ts';
import { memberIdFromHex } from '../../src/etcd/ids.ts';
import { EtcdClusters } from '../../src/resources.ts';
import { applyCluster, eventually, getCluster, PLAINTEXT, setUpOperator, waitAvailable } from './support.ts';

let env: TestEnv;
let ns: string;
const NAME = 'stale';

before(async () => {
  env = await setUpOperator();
  ns = await env.namespace('stale-peer');
});
after(async () => {
  await env.stop();
});

const podIP = async (name: string): Promise<string> => ((await env.client.get(Pods, { namespace: ns, name })) as unknown as { status: { podIP: string } }).status.podIP;

interface StaleView { leaderName: string; leaderIP: string; followerId: string; rounds: string[] }

/** etcd's own account of the leader's view of one peer, in order: "active" / "inactive" transitions. */
async function peerTransitions(pod: string, peerHex: string, since: string): Promise<string[]> {
  const logs = await env.kube.kubectl(['logs', '-n', ns, pod, '-c', 'etcd', `--since-time=${since}`]);
  const seen: string[] = [];
  for (const line of logs.split('\n')) {
    if (!line.includes(`"peer-id":"${peerHex}"`)) continue;
    if (line.includes('"peer became active"')) seen.push('active');
    else if (line.includes('"peer became inactive')) seen.push('inactive');
  }
  return seen;
}

/** The transitions once none has been logged for `quietMs` (or at `timeoutMs`). */
async function quietTransitions(read: () => Promise<string[]>, quietMs: number, timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let last = await read();
  let changedAt = Date.now();
  while (Date.now() - changedAt < quietMs && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
    const now = await read();
    if (now.length !== last.length) changedAt = Date.now();
    last = now;
  }
  return last;
}

/**
 * One try of the recipe. It races etcd's own timers (the follower's stream read timeout against the
 * leader's DNS lookups), so a try can end in an ordinary state: the caller tries again, a bounded number
 * of times, and says why each try did not count.
 */
async function tryStaleView(): Promise<StaleView | string> {
  const { members } = await waitAvailable(env.client, ns, NAME, 3);
  const leader = members.find((m) => m.leader)!;
  const follower = members.find((m) => !m.leader)!;
  const followerId = memberIdFromHex(follower.id!);
  const followerHex = BigInt(followerId).toString(16);
  const [leaderIP, followerIP] = [await podIP(leader.name), await podIP(follower.name)];
  const leaderMetrics = `http://${leaderIP}:2381`;
  const net = (...argv: string[]): Promise<string> => env.kube.inPodNetwork(ns, leader.name, ['iptables', '-w', ...argv]);
  // Answers are dropped, not queries: a dropped query fails at once (EPERM), a lost answer makes the
  // lookup hang until the dial times out, which is what keeps a pipeline send pending across the redial.
  const dnsRules = [['INPUT', '-p', 'udp', '--sport', '53', '-j', 'DROP'], ['INPUT', '-p', 'tcp', '--sport', '53', '-j', 'DROP']];
  // The leader's end of the follower's stream connections (the follower dialed the leader's peer port):
  // reset locally, so the leader's stream writes fail at once and it falls back to the pipeline.
  const resetRule = ['OUTPUT', '-d', followerIP, '-p', 'tcp', '--sport', '2380', '-j', 'REJECT', '--reject-with', 'tcp-reset'];
  const active = async (): Promise<boolean> => (await activePeers(leaderMetrics)).includes(followerId);

  const since = new Date(Date.now() - 1000).toISOString();
  const transitions = async (): Promise<string[]> => peerTransitions(leader.name, followerHex, since);
  const rounds: string[] = [];
  let stale = false;
  for (const r of dnsRules) await net('-I', ...r);
  try {
    // Whether the pending pipeline sends fail after both of the follower's streams (msgapp and message)
    // have re-attached, or between the two, is a race of etcd's own timers. A round that ends with the
    // peer active is repeated within the same DNS outage, up to 3 times.
    for (let round = 1; round <= 3 && !stale; round++) {
      const from = (await transitions()).length;
      await net('-I', ...resetRule);
      // Seen once in CI: the leader did not mark the follower inactive within 20 s (its stream writes kept
      // succeeding, or leadership had moved). That is a try that did not count, not a failure of the operator.
      const marked = await eventually('the leader marks the follower inactive', async () => !(await active()), { timeoutMs: 20_000, intervalMs: 100 }).then(() => true, () => false);
      await net('-D', ...resetRule);
      if (!marked) {
        const { members: now } = await getCluster(env.client, ns, NAME);
        rounds.push(`round ${round}: the leader never marked the follower inactive within 20 s of the reset (leader now: ${now.find((m) => m.leader)?.name ?? 'none'}, was ${leader.name})`);
        break;
      }
      // The follower's stream readers time out and redial: the streams come back and the peer is active
      // again, while the pipeline sends queued until then are still stuck in a DNS lookup. When those fail,
      // the leader marks the follower inactive once more, with its streams up: the stale view. etcd logs
      // each transition, so its log (not a poll that can miss a short "active") is the evidence: first an
      // "active" after the reset, then the log left quiet for longer than a redial and a dial timeout.
      const back = await eventually('the follower redials the leader', async () => (await transitions()).slice(from).includes('active'), { timeoutMs: 90_000, intervalMs: 500 }).catch(() => false);
      const seen = (await quietTransitions(transitions, 8000, 45_000)).slice(from);
      rounds.push(`round ${round}: [${seen.join(', ')}]${back ? '' : ' (no redial within 90 s)'}`);
      if (!back) break;
      stale = seen.at(-1) === 'inactive' && !(await active());
    }
  } finally {
    await net('-D', ...resetRule).catch(() => undefined);
    for (const r of dnsRules) await net('-D', ...r);
  }
  if (!stale) return `no stale flip; the leader logged, for the follower, ${rounds.join('; ')}`;
  // The stale state: DNS works again, the follower serves and its streams are up, and yet the leader
  // still counts it inactive (and would refuse a member add for as long as that lasts).
  await eventually('every member serves again', async () => {
    const { members: now } = await getCluster(env.client, ns, NAME);
    return now.length === 3 && now.every((m) => m.ready);
  }, { timeoutMs: 60_000, intervalMs: 500 });
  const { members: now } = await getCluster(env.client, ns, NAME);
  if (!now.find((m) => m.name === leader.name)?.leader) return `leadership moved during the recipe (to ${now.find((m) => m.leader)?.name ?? 'nobody'})`;
  if (await active()) return 'the leader counted the follower active again once DNS answered';
  return { leaderName: leader.name, leaderIP, followerId, rounds };
}

test('a leader with a stale inactive view of a follower does not stall a scale-up: 3 → 5 within 60 s', async (t) => {
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3 });
  let view: StaleView | undefined;
  const misses: string[] = [];
  for (let attempt = 1; attempt <= 5 && !view; attempt++) {
    const outcome = await tryStaleView();
    if (typeof outcome === 'string') {
      misses.push(`try ${attempt}: ${outcome}`);
      t.diagnostic(`try ${attempt} did not leave a stale view: ${outcome}`);
    } else view = outcome;
  }
  // The recipe races etcd's own timers, and on a loaded machine (seen with a load average of 5-10 on 2 cores)
  // no try may leave the state at all. Without the state there is nothing to test the operator against: the
  // test says so as a skip with every try's reason, rather than failing on etcd's timing or passing silently.
  // The planner's handling of it is also covered without the race (plan.test.ts).
  if (!view) {
    t.skip(`environment: this machine's timing left no stale view in ${misses.length} tries: ${misses.join(' | ')}`);
    return;
  }
  const { leaderIP, followerId } = view;
  t.diagnostic(`the leader's log, for the follower: ${view.rounds.join('; ')}`);
  assert.ok(!(await activePeers(`http://${leaderIP}:2381`)).includes(followerId), 'the leader still counts the follower inactive');
  // The refusal the issue saw, from the leader itself (a probe URL nothing will ever answer on).
  const probe = 'http://stale-probe.invalid:2380';
  await assert.rejects(new EtcdClient({ endpoint: `http://${leaderIP}:2379` }).memberAdd([probe], { learner: true }), UnhealthyClusterError, 'the leader refuses a learner add');

  const t0 = performance.now();
  await env.client.mergePatch(EtcdClusters, { namespace: ns, name: NAME }, { spec: { replicas: 5 } });
  await waitAvailable(env.client, ns, NAME, 5, 60_000);
  const seconds = (performance.now() - t0) / 1000;
  const events = await env.kube.kubectl(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${NAME}`, '-o', 'jsonpath={range .items[*]}{.reason}: {.note}{.message}{"\\n"}{end}']);
  assert.match(events, /MemberAdded: added stale-3 as a learner through/, `the add went through another member:\n${events}`);
  assert.ok(seconds < 60, `3 → 5 took ${seconds} s`);
  t.diagnostic(`3 → 5 with a stale leader view: ${seconds.toFixed(1)} s`);
  for (const line of events.split('\n').filter((l) => /MemberAdded|MemberPromoted/.test(l))) t.diagnostic(line);
});
