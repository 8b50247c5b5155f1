// The processes of a local cluster: each started inside its cgroup (it joins before it execs, so nothing
// it forks escapes), logging to <state>/logs/<name>.log, its PID recorded for `down`.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, open, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hostFile } from '@quorum/images';
import { cgroupProcsFiles, createCgroup } from './cgroups.ts';

const SH = hostFile('/bin/sh', 'dash', 'starting each process inside its cgroup');

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  /** cgroup path (relative to each hierarchy's root) the process and all its children live in. */
  cgroup: string;
  env?: NodeJS.ProcessEnv;
}

export interface Running {
  spec: ProcessSpec;
  child: ChildProcess;
  exited: Promise<number | null>;
}

export class Processes {
  readonly #logs: string;
  readonly #pids: string;
  readonly #running = new Map<string, Running>();
  /** Called when a process exits that nobody asked to stop. */
  onUnexpectedExit: (name: string, code: number | null) => void = () => undefined;

  constructor(stateDir: string) {
    this.#logs = join(stateDir, 'logs');
    this.#pids = join(stateDir, 'pids');
  }

  logFile(name: string): string {
    return join(this.#logs, `${name}.log`);
  }

  async start(spec: ProcessSpec): Promise<Running> {
    if (this.#running.has(spec.name)) throw new Error(`process ${spec.name} is already running`);
    await mkdir(this.#logs, { recursive: true });
    await mkdir(this.#pids, { recursive: true });
    await createCgroup(spec.cgroup);
    const log = await open(this.logFile(spec.name), 'a');
    const procs = await cgroupProcsFiles(spec.cgroup);
    // The shell joins the cgroups and then becomes the command, so the recorded PID is the command's.
    const child = spawn(SH, ['-c', 'for f in $LOCALKUBE_CGROUP_PROCS; do echo $$ > "$f"; done; exec "$@"', spec.name, spec.command, ...spec.args], {
      env: { ...(spec.env ?? process.env), LOCALKUBE_CGROUP_PROCS: procs.join(' ') },
      stdio: ['ignore', log.fd, log.fd],
      detached: true,
    });
    await log.close();
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const running: Running = { spec, child, exited };
    this.#running.set(spec.name, running);
    if (child.pid) await writeFile(join(this.#pids, `${spec.name}.pid`), String(child.pid));
    void exited.then(async (code) => {
      if (this.#running.get(spec.name) === running) {
        this.#running.delete(spec.name);
        await rm(join(this.#pids, `${spec.name}.pid`), { force: true });
        this.onUnexpectedExit(spec.name, code);
      }
    });
    return running;
  }

  get(name: string): Running | undefined {
    return this.#running.get(name);
  }

  names(): string[] {
    return [...this.#running.keys()];
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(name: string, graceMs = 5000, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const running = this.#running.get(name);
    if (!running) return;
    this.#running.delete(name);
    await rm(join(this.#pids, `${name}.pid`), { force: true });
    if (running.child.exitCode !== null || running.child.signalCode !== null) return;
    running.child.kill(signal);
    const timer = setTimeout(() => running.child.kill('SIGKILL'), graceMs);
    await running.exited;
    clearTimeout(timer);
  }

  /** Forgets `name` without signalling it (its cgroup was killed as a whole). */
  async forget(name: string): Promise<void> {
    this.#running.delete(name);
    await rm(join(this.#pids, `${name}.pid`), { force: true });
  }
}

/** PIDs recorded by a supervisor that may have died, for `down` to clean up after it. */
export async function recordedPids(stateDir: string): Promise<number[]> {
  const dir = join(stateDir, 'pids');
  let files: string[];
  try {
    files = await readdir(dir);
  } catch {
    return [];
  }
  const pids = await Promise.all(files.map(async (f) => Number((await readFile(join(dir, f), 'utf8')).trim())));
  return pids.filter((p) => Number.isInteger(p) && p > 0);
}
