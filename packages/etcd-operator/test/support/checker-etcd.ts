// A tiny launcher for real etcd clusters on loopback, just for the data-checker tests. Members listen on
// 127.0.0.1 only, keep their data in a temporary directory, and are SIGKILLed by `destroy()` (or, as a
// last resort, when the test process exits).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

export const ETCD_BIN = join(homedir(), '.cache/quorum/bin/etcd-3.6.16/etcd');

export interface CheckerMember {
  name: string;
  clientUrl: string;
  /** Whether the process is still running. */
  readonly alive: boolean;
  /** SIGKILLs the process and waits for it to exit. */
  kill(): Promise<void>;
}

export interface CheckerCluster {
  members: CheckerMember[];
  clientUrls: string[];
  /** Kills every member and removes the data directory. */
  destroy(): Promise<void>;
}

const children = new Set<ChildProcess>();
// Last resort if a test crashes past its `after` hook: never leave etcd processes behind.
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

// Ports already handed out in this process, so clusters started in parallel never share one.
const usedPorts = new Set<number>();

async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        const port = typeof address === 'object' && address !== null ? address.port : 0;
        server.close(() => resolve(port));
      });
    });
    if (port !== 0 && !usedPorts.has(port)) {
      usedPorts.add(port);
      return port;
    }
  }
}

async function healthy(clientUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(1000) });
    const body = (await res.json()) as { health?: unknown };
    return body.health === 'true';
  } catch {
    return false;
  }
}

/** Starts a `size`-member cluster and waits until every member reports healthy. */
export async function startCluster(size = 3, startTimeoutMs = 20_000): Promise<CheckerCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'quorum-checker-etcd-'));
  const specs: { name: string; client: number; peer: number }[] = [];
  for (let i = 0; i < size; i++) specs.push({ name: `m${i}`, client: await freePort(), peer: await freePort() });
  const initialCluster = specs.map((s) => `${s.name}=http://127.0.0.1:${s.peer}`).join(',');
  const token = `checker-${process.pid}-${specs[0]?.client ?? 0}`;

  const members = specs.map((s) => {
    const args = [
      `--name=${s.name}`,
      `--data-dir=${join(dir, s.name)}`,
      `--listen-client-urls=http://127.0.0.1:${s.client}`,
      `--advertise-client-urls=http://127.0.0.1:${s.client}`,
      `--listen-peer-urls=http://127.0.0.1:${s.peer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${s.peer}`,
      `--initial-cluster=${initialCluster}`,
      '--initial-cluster-state=new',
      `--initial-cluster-token=${token}`,
      // Faster elections keep the member-loss tests short.
      '--heartbeat-interval=50',
      '--election-timeout=500',
      '--log-level=error',
    ];
    const child = spawn(ETCD_BIN, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    children.add(child);
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => {
      stderr = (stderr + c.toString('utf8')).slice(-4000);
    });
    const exited = new Promise<void>((resolve) => {
      child.once('exit', () => {
        children.delete(child);
        resolve();
      });
    });
    let alive = true;
    void exited.then(() => {
      alive = false;
    });
    const member: CheckerMember & { stderr(): string } = {
      name: s.name,
      clientUrl: `http://127.0.0.1:${s.client}`,
      get alive() {
        return alive;
      },
      async kill() {
        if (alive) child.kill('SIGKILL');
        await exited;
      },
      stderr: () => stderr,
    };
    return member;
  });

  const destroy = async (): Promise<void> => {
    await Promise.all(members.map((m) => m.kill()));
    await rm(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    const dead = members.find((m) => !m.alive);
    if (dead) {
      await destroy();
      throw new Error(`etcd member ${dead.name} exited during start-up: ${dead.stderr()}`);
    }
    if ((await Promise.all(members.map((m) => healthy(m.clientUrl)))).every(Boolean)) break;
    if (Date.now() > deadline) {
      const logs = members.map((m) => `${m.name}: ${m.stderr()}`).join('\n');
      await destroy();
      throw new Error(`etcd cluster not healthy within ${startTimeoutMs} ms\n${logs}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { members, clientUrls: members.map((m) => m.clientUrl), destroy };
}
