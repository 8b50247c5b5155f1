// Two managers, one Lease: exactly one reconciles; killing the leader hands over within a lease duration
// plus a retry period; a partitioned leader stops reconciling before another starts (no split brain); a
// leader stopped (SIGTERM) keeps the Lease while its controllers drain and hands over at once after.
// Each candidate runs in its own process and cgroup, so a partition is a real one: iptables drops
// everything it sends.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
// @quiet: a handover within 5.6 s
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, rmdir } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { ConfigMaps } from '../../src/index.ts';
import { eventually, TestEnv } from '@quorum/localkube/testing';
import { run } from '../../../localkube/src/exec.ts';

const LEASE_MS = 4000;
const RETRY_MS = 500;
const UNIFIED = '/sys/fs/cgroup/unified';

interface Report {
  event: string;
  id: string;
  t: number;
}

class Candidate {
  readonly id: string;
  readonly cgroup: string;
  readonly reports: Report[] = [];
  readonly child: ChildProcess;

  constructor(id: string, env: NodeJS.ProcessEnv) {
    this.id = id;
    this.cgroup = `quorum-test-${id}-${process.pid}`;
    const script = new URL('./fixtures/leader-candidate.ts', import.meta.url).pathname;
    // The shell joins the cgroup before it becomes node, so every socket of the candidate is in it.
    this.child = spawn('/bin/sh', ['-c', `echo $$ > ${UNIFIED}/${this.cgroup}/cgroup.procs && exec "$0" "$@"`, process.execPath, script], {
      env: { ...env, IDENTITY: id },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let buffered = '';
    this.child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      buffered += d;
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) if (line.trim()) this.reports.push(JSON.parse(line) as Report);
    });
  }

  static async spawn(id: string, env: NodeJS.ProcessEnv): Promise<Candidate> {
    await mkdir(`${UNIFIED}/quorum-test-${id}-${process.pid}`, { recursive: true });
    return new Candidate(id, env);
  }

  last(event: string): Report | undefined {
    return this.reports.filter((r) => r.event === event).at(-1);
  }

  alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  leading(): boolean {
    const lead = this.last('leading');
    const stop = this.last('stopped');
    return lead !== undefined && (stop === undefined || stop.t < lead.t);
  }

  partitionRule(): string[] {
    return ['OUTPUT', '-m', 'cgroup', '--path', this.cgroup, '-j', 'DROP'];
  }

  /** SIGTERM: a graceful stop. Resolves once the process has exited. */
  async terminate(): Promise<void> {
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    await exited;
  }

  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((r) => this.child.once('exit', r));
      this.child.kill('SIGKILL');
      await exited;
    }
    await run('iptables', ['-w', '-D', ...this.partitionRule()], { allowFailure: true });
    await rmdir(`${UNIFIED}/${this.cgroup}`).catch(() => undefined);
  }
}

let env: TestEnv;
let ns: string;
let childEnv: NodeJS.ProcessEnv;
const candidates: Candidate[] = [];

before(async () => {
  env = await TestEnv.start();
  ns = await env.namespace('leader');
  childEnv = { ...process.env, KUBECONFIG: env.kubeconfig, NAMESPACE: ns };
  await env.client.create(ConfigMaps, { metadata: { name: 'tick', namespace: ns, labels: { role: 'tick' } } });
});
after(async () => {
  for (const c of candidates) await c.kill();
  await env.stop();
});

const leaderOf = (): Candidate | undefined => {
  const leaders = candidates.filter((c) => c.alive() && c.leading());
  assert.ok(leaders.length <= 1, `two leaders at once: ${leaders.map((c) => c.id).join(', ')}`);
  return leaders[0];
};

test('of two managers on one Lease exactly one reconciles', async () => {
  candidates.push(await Candidate.spawn('a', childEnv), await Candidate.spawn('b', childEnv));
  const leader = await eventually('a leader', () => leaderOf(), { timeoutMs: 30_000 });
  await eventually('reconciles', () => leader.reports.some((r) => r.event === 'reconcile'), { timeoutMs: 10_000 });
  const from = Date.now();
  await new Promise((r) => setTimeout(r, 3000));
  const reconcilers = new Set(candidates.flatMap((c) => c.reports.filter((r) => r.event === 'reconcile' && r.t >= from).map((r) => r.id)));
  assert.deepEqual([...reconcilers], [leader.id], JSON.stringify(candidates.map((c) => c.reports.filter((r) => r.event !== 'reconcile' || r.t >= from - 500))));
});

test('killing the leader hands over within lease duration + retry period', async () => {
  const leader = leaderOf()!;
  const follower = candidates.find((c) => c !== leader)!;
  const killedAt = Date.now();
  await leader.kill();
  const took = await eventually('the follower leads', () => (follower.leading() ? follower.last('leading')!.t - killedAt : undefined), { timeoutMs: 20_000 });
  process.stderr.write(`handover took ${took} ms (lease ${LEASE_MS} ms, retry ${RETRY_MS} ms)\n`);
  // A retry period with its 20% jitter, plus the time a reconcile-free process needs to notice.
  assert.ok(took <= LEASE_MS + RETRY_MS * 1.2 + 1000, `handover took ${took} ms`);
  assert.ok(follower.reports.some((r) => r.event === 'reconcile' && r.t > killedAt) || (await eventually('follower reconciles', () => follower.reports.some((r) => r.event === 'reconcile' && r.t > killedAt), { timeoutMs: 5000 })));
});

test('a partitioned leader stops reconciling before another starts', async () => {
  const leader = leaderOf()!;
  const standby = await Candidate.spawn('c', childEnv);
  candidates.push(standby);
  await new Promise((r) => setTimeout(r, 2000));
  assert.equal(leaderOf(), leader, 'the leader keeps its lease while healthy');
  await run('iptables', ['-w', '-I', ...leader.partitionRule()]);
  const partitionedAt = Date.now();
  await eventually('the standby leads', () => standby.leading(), { timeoutMs: 20_000 });
  const stopped = leader.last('stopped');
  const started = standby.last('leading')!;
  assert.ok(stopped, 'the partitioned leader noticed it lost the lease');
  const lastReconcile = leader.reports.filter((r) => r.event === 'reconcile').at(-1)!;
  process.stderr.write(`partitioned at 0 ms; old leader stopped at ${stopped.t - partitionedAt} ms, last reconciled at ${lastReconcile.t - partitionedAt} ms; new leader started at ${started.t - partitionedAt} ms\n`);
  assert.ok(stopped.t < started.t, 'the old leader stopped before the new one started');
  assert.ok(lastReconcile.t < started.t, 'no reconcile of the old leader overlaps the new leader');
});

test('a leader stopped gracefully keeps the lease while it drains, longer than a lease duration, then releases it: the next leads at once after, never before', async () => {
  // The current leader drains at once; its successor, d, for longer than a lease duration.
  const first = leaderOf()!;
  const draining = await Candidate.spawn('d', { ...childEnv, DRAIN_MS: String(LEASE_MS + 1000) });
  candidates.push(draining);
  await first.terminate();
  await eventually('d leads', () => draining.leading(), { timeoutMs: 20_000 });
  const standby = await Candidate.spawn('e', childEnv);
  candidates.push(standby);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(leaderOf(), draining, 'the leader keeps its lease while healthy');
  await draining.terminate();
  await eventually('e leads', () => standby.leading(), { timeoutMs: 20_000 });
  const stopped = draining.last('stopped')!.t;
  const drained = draining.last('drained')!.t;
  const took = standby.last('leading')!.t - drained;
  process.stderr.write(`graceful handover: drained ${drained - stopped} ms after the stop; the successor led ${took} ms after that\n`);
  assert.ok(drained - stopped >= LEASE_MS, 'the drain outlasted a lease duration');
  assert.ok(took >= 0, 'no successor before the old leader drained');
  assert.ok(took <= RETRY_MS * 1.2 + 1000, `released, not expired: the successor led ${took} ms after the drain`);
});
