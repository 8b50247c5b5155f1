// Real etcd processes for unit tests (the etcd client's and the data checker's): an N-member static
// cluster on 127.0.0.1 (loopback only), free ports, data under one mkdtemp dir. Everything it starts is
// killed by stop(), and by a process-exit backstop.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePorts } from '@quorum/storage/testing';
import { EtcdClient } from '../../src/etcd/client.ts';

// One reservation of ports per process, shared with the object-store servers that tests start beside etcd.
export { freePorts };

export const ETCD_VERSIONS = ['3.6.16', '3.5.35'] as const;

export function etcdBinary(version: string): string {
  return join(homedir(), '.cache', 'quorum', 'bin', `etcd-${version}`, 'etcd');
}

export interface LocalEtcdOptions {
  /** Default 3. */
  members?: number;
  /** Default 3.6.16. */
  version?: string;
  /** Default 30 s. */
  readyTimeoutMs?: number;
  /**
   * etcd's --election-timeout, default 500 ms (the heartbeat is a tenth of it). A long one keeps a member
   * cut off from its peers naming its old leader for that long: the window a test of it needs.
   */
  electionTimeoutMs?: number;
  /** Further etcd flags for every member, e.g. a tiny --quota-backend-bytes. */
  extraArgs?: string[];
}

/** Ports and URLs for a member, reserved before it is added and started. */
export interface MemberSlot {
  name: string;
  peerURL: string;
  clientURL: string;
}

export interface LocalMember extends MemberSlot {
  dataDir: string;
  logFile: string;
  readonly running: boolean;
  /** SIGTERM, then SIGKILL after 5 s; `graceful: false` SIGKILLs at once (a crash). Safe to call twice. */
  stop(graceful?: boolean): Promise<void>;
  /** The tail of the member's log, for failure messages. */
  logTail(lines?: number): string;
}

/** A member as memberList/memberAdd report it: enough to build --initial-cluster. */
export interface PeerEntry {
  name: string;
  peerURLs: string[];
}

export interface LocalEtcdCluster {
  dir: string;
  version: string;
  members: LocalMember[];
  /** Client URLs of the initial members. */
  endpoints: string[];
  member(name: string): LocalMember;
  /** Reserves free ports for a member that is about to be added with memberAdd. */
  reserve(name: string): Promise<MemberSlot>;
  /**
   * Starts an added member (`--initial-cluster-state existing`). `peers` is memberAdd's `members`:
   * the one with no name yet and the slot's peer URL is the new member. `version`: its etcd binary (the
   * cluster's own by default).
   */
  startAdded(slot: MemberSlot, peers: PeerEntry[], version?: string): Promise<LocalMember>;
  /**
   * Stops a member gracefully and starts it again on its data directory, with the etcd binary of `version`
   * (the cluster's own by default): what a rolling update does to one member. Resolves once it serves;
   * rejects with its log when it exits instead (e.g. an older binary refused by a newer cluster version).
   */
  restart(name: string, version?: string): Promise<LocalMember>;
  /** Kills every process (no graceful shutdown: the data is thrown away) and removes the data dir. */
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
let backstopInstalled = false;

// If the test process dies without running `after`, do not leave etcd processes behind.
function installBackstop(): void {
  if (backstopInstalled) return;
  backstopInstalled = true;
  process.on('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}

/** Waits until /health says true, or (for a member still joining, e.g. a learner) until status answers. */
async function waitReady(member: LocalMember, check: 'health' | 'status', timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const client = new EtcdClient({ endpoint: member.clientURL, timeoutMs: 2000 });
  let last = '';
  try {
    while (Date.now() < deadline) {
      if (!member.running) throw new Error(`etcd ${member.name} exited while starting:\n${member.logTail()}`);
      try {
        if (check === 'status') {
          await client.status();
          return;
        }
        const health = await client.healthCheck();
        if (health.healthy) {
          // A restarted member can pass /health before its v3 API is enabled: until it has its cluster version,
          // etcd answers every v3 call "not capable" (a unit test's first status() after restart saw that).
          await client.status();
          return;
        }
        last = `unhealthy: ${health.reason}`;
      } catch (err) {
        last = err instanceof Error ? err.message : String(err);
      }
      await sleep(100);
    }
  } finally {
    client.close();
  }
  throw new Error(`etcd ${member.name} not ready after ${timeoutMs} ms (last: ${last}):\n${member.logTail()}`);
}

function launch(binary: string, dir: string, slot: MemberSlot, initialCluster: string, state: 'new' | 'existing', token: string, electionTimeoutMs: number, extraArgs: readonly string[] = []): LocalMember {
  const dataDir = join(dir, slot.name);
  const logFile = join(dir, `${slot.name}.log`);
  const fd = openSync(logFile, 'a');
  const args = [
    `--name=${slot.name}`,
    `--data-dir=${dataDir}`,
    `--listen-client-urls=${slot.clientURL}`,
    `--advertise-client-urls=${slot.clientURL}`,
    `--listen-peer-urls=${slot.peerURL}`,
    `--initial-advertise-peer-urls=${slot.peerURL}`,
    `--initial-cluster=${initialCluster}`,
    `--initial-cluster-state=${state}`,
    `--initial-cluster-token=${token}`,
    // Faster elections and no fsync: test data is thrown away.
    `--heartbeat-interval=${Math.round(electionTimeoutMs / 10)}`,
    `--election-timeout=${electionTimeoutMs}`,
    '--unsafe-no-fsync',
    ...extraArgs,
  ];
  let child: ChildProcess;
  try {
    // A minimal environment: stray ETCD_* variables would override the flags.
    child = spawn(binary, args, { stdio: ['ignore', fd, fd], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  } finally {
    closeSync(fd);
  }
  installBackstop();
  live.add(child);
  let exited = child.exitCode !== null;
  let spawnError = '';
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      live.delete(child);
      resolve();
    });
    child.once('error', (err) => {
      spawnError = err.message;
      exited = true;
      live.delete(child);
      resolve();
    });
  });
  return {
    ...slot,
    dataDir,
    logFile,
    get running() {
      return !exited;
    },
    async stop(graceful = true) {
      if (exited) return;
      if (!graceful) {
        child.kill('SIGKILL');
        await exit;
        return;
      }
      child.kill('SIGTERM');
      const killed = await Promise.race([exit.then(() => true), sleep(5000).then(() => false)]);
      if (!killed) {
        child.kill('SIGKILL');
        await exit;
      }
    },
    logTail(lines = 30) {
      if (spawnError) return `spawn ${binary}: ${spawnError}`;
      try {
        return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
      } catch {
        return '(no log)';
      }
    },
  };
}

export async function startLocalEtcd(options: LocalEtcdOptions = {}): Promise<LocalEtcdCluster> {
  const n = options.members ?? 3;
  const version = options.version ?? '3.6.16';
  const readyTimeoutMs = options.readyTimeoutMs ?? 30_000;
  const electionTimeoutMs = options.electionTimeoutMs ?? 500;
  const extraArgs = options.extraArgs ?? [];
  const binary = etcdBinary(version);
  const dir = await mkdtemp(join(tmpdir(), 'quorum-etcd-'));
  const token = `quorum-test-${process.pid}-${Date.now()}`;
  const members: LocalMember[] = [];

  const stop = async (): Promise<void> => {
    // A leader shutting down gracefully waits for a leadership transfer its stopping peers cannot take.
    await Promise.all(members.map((m) => m.stop(false)));
    await rm(dir, { recursive: true, force: true });
  };

  const reserve = async (name: string): Promise<MemberSlot> => {
    const [peer, client] = await freePorts(2);
    return { name, peerURL: `http://127.0.0.1:${peer}`, clientURL: `http://127.0.0.1:${client}` };
  };

  try {
    const ports = await freePorts(2 * n);
    const slots: MemberSlot[] = [];
    for (let i = 0; i < n; i++) {
      slots.push({ name: `m${i}`, peerURL: `http://127.0.0.1:${ports[2 * i]}`, clientURL: `http://127.0.0.1:${ports[2 * i + 1]}` });
    }
    const initialCluster = slots.map((s) => `${s.name}=${s.peerURL}`).join(',');
    for (const slot of slots) members.push(launch(binary, dir, slot, initialCluster, 'new', token, electionTimeoutMs, extraArgs));
    await Promise.all(members.map((m) => waitReady(m, 'health', readyTimeoutMs)));
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    dir,
    version,
    members,
    endpoints: members.map((m) => m.clientURL),
    member(name) {
      const found = members.find((m) => m.name === name);
      if (!found) throw new Error(`no local etcd member ${name}`);
      return found;
    },
    reserve,
    async startAdded(slot, peers, memberVersion = version) {
      const initialCluster = peers
        .flatMap((p) => {
          const name = p.name === '' && p.peerURLs.includes(slot.peerURL) ? slot.name : p.name;
          return p.peerURLs.map((url) => `${name}=${url}`);
        })
        .join(',');
      const member = launch(etcdBinary(memberVersion), dir, slot, initialCluster, 'existing', token, electionTimeoutMs, extraArgs);
      members.push(member);
      await waitReady(member, 'status', readyTimeoutMs);
      return member;
    },
    async restart(name, memberVersion = version) {
      const index = members.findIndex((m) => m.name === name);
      const old = members[index];
      if (!old) throw new Error(`no local etcd member ${name}`);
      await old.stop();
      // The data directory exists, so etcd ignores the initial-cluster flags: it rejoins as the same member.
      const member = launch(etcdBinary(memberVersion), dir, { name: old.name, peerURL: old.peerURL, clientURL: old.clientURL }, `${old.name}=${old.peerURL}`, 'existing', token, electionTimeoutMs, extraArgs);
      members[index] = member;
      await waitReady(member, 'health', readyTimeoutMs);
      return member;
    },
    stop,
  };
}
