// What the integration files share, set up once per run on the suite's localkube: the etcd operator (its
// images built and loaded, installed with the suite's settings) and the object-store addons. A file that
// holds one of these locks alone may change what it guards; once it ends, the harness puts it back before
// the lock is free again, so every other file finds the suite's set-up.
import { TestEnv } from '@quorum/localkube/testing';
import { readFile } from 'node:fs/promises';
import { eventually, type LocalKube } from '@quorum/localkube';
import { installSuiteOperator, reinstallSuiteOperator, SUITE_OPERATOR_ENV } from '../../packages/etcd-operator/test/integration/support.ts';

export interface SuiteFixture {
  /** The lock that guards it. */
  lock: string;
  label: string;
  /** Sets it up; returns environment variables for the test files. */
  setUp(): Promise<Record<string, string>>;
  /**
   * Puts it back as setUp left it, after a file that held the lock alone (`fileFailed`: the file may have
   * ended before its own clean-up ran); says whether there was anything to do.
   */
  restore(fileFailed: boolean): Promise<boolean>;
}

const STORAGE_ADDONS = ['s3', 'gcs', 'azure'] as const;

interface NodeStatus {
  status?: { conditions?: { type: string; status: string }[] };
}

async function nodeReady(kube: LocalKube, node: string, withinMs: number): Promise<boolean> {
  const ready = async (): Promise<boolean> => (await kube.client.get<NodeStatus>(`/api/v1/nodes/${node}`)).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  return eventually(`node ${node} Ready`, ready, { timeoutMs: withinMs, intervalMs: 2000 }).catch(() => false);
}

/** Whether a namespace made now gets its `default` ServiceAccount (made by the controller manager) within `withinMs`. */
async function controllerManagerActs(kube: LocalKube, withinMs: number): Promise<boolean> {
  const name = `harness-probe-${Date.now().toString(36)}`;
  await kube.client.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  try {
    const made = (): Promise<boolean> => kube.client.get(`/api/v1/namespaces/${name}/serviceaccounts/default`).then(() => true, () => false);
    return await eventually(`the ServiceAccount ${name}/default`, made, { timeoutMs: withinMs, intervalMs: 250 }).catch(() => false);
  } finally {
    await kube.client.delete(`/api/v1/namespaces/${name}`).catch(() => undefined);
  }
}

/** The last lines of a host process's log, for the run's output. */
async function logTail(file: string, lines: number): Promise<string> {
  const text = await readFile(file, 'utf8').catch((err: Error) => `(no log: ${err.message})`);
  return text.trimEnd().split('\n').slice(-lines).map((l) => `    ${l}`).join('\n');
}

/** Starts what exited and restarts a controller manager that does not act; says whether there was anything to do. */
async function restoreControlPlane(kube: LocalKube, progress: (line: string) => void): Promise<boolean> {
  let changed = false;
  for (const { name, running } of await kube.controlPlane()) {
    if (running) continue;
    progress(`control plane: ${name} had exited; its log ends:\n${await logTail(kube.processLog(name), 20)}\n  starting it again`);
    await kube.restartComponent(name);
    changed = true;
  }
  if (await controllerManagerActs(kube, 30_000)) return changed;
  progress(`control plane: a new namespace got no ServiceAccount within 30 s; the controller manager's log ends:\n${await logTail(kube.processLog('kube-controller-manager'), 30)}\n  restarting it`);
  await kube.restartComponent('kube-controller-manager');
  if (!(await controllerManagerActs(kube, 60_000))) throw new Error('the controller manager does not act on new namespaces, even 60 s after a restart');
  return true;
}

export function suiteFixtures(stateDir: string, kube: LocalKube, progress: (line: string) => void): { fixtures: SuiteFixture[]; close: () => Promise<void> } {
  // TestEnv attaches to the cluster named by LOCALKUBE_STATE_DIR (the harness's own process sets it too).
  process.env['LOCALKUBE_STATE_DIR'] = stateDir;
  let env: TestEnv | undefined;
  const testEnv = async (): Promise<TestEnv> => (env ??= await TestEnv.start());
  const fixtures: SuiteFixture[] = [
    {
      lock: 'operator',
      label: 'the etcd operator: images built and loaded into every node, installed with the suite\'s settings',
      async setUp() {
        const installed = await installSuiteOperator(await testEnv());
        return { [SUITE_OPERATOR_ENV]: JSON.stringify(installed) };
      },
      async restore() {
        await reinstallSuiteOperator(await testEnv());
        return true;
      },
    },
    ...STORAGE_ADDONS.map((name): SuiteFixture => ({
      lock: `addons/${name}`,
      label: `the ${name} storage addon enabled`,
      async setUp() {
        await kube.enableAddon(name);
        return {};
      },
      async restore() {
        await kube.enableAddon(name);
        return true;
      },
    })),
    {
      lock: 'nodes',
      label: 'every node running, with its network',
      setUp: () => Promise.resolve({}),
      // A file that stops nodes or cuts their network puts them back itself, in its own clean-up; one that
      // failed or was stopped at its timeout may not have, and the files after it need every node.
      async restore(fileFailed) {
        if (!fileFailed) return false;
        for (const node of kube.nodes) {
          if (await nodeReady(kube, node, 60_000)) continue;
          await kube.restoreNetwork(node).catch(() => undefined);
          if (await nodeReady(kube, node, 60_000)) continue;
          await kube.startNode(node);
          if (!(await nodeReady(kube, node, 120_000))) throw new Error(`node ${node} is not Ready 2 minutes after it was started again`);
        }
        return true;
      },
    },
    {
      lock: 'control-plane',
      label: 'the control plane running and acting: a new namespace gets its ServiceAccount',
      setUp: () => Promise.resolve({}),
      // A file that restarts the API server, compacts its etcd or silences connections may leave a component
      // exited, or the controller manager not acting on new objects for a while (the run at 588c05a: the next
      // file's namespace got no `default` ServiceAccount within 60 s). Checked after every such file, and put
      // right by a restart of what does not act, said in the run's output.
      restore: () => restoreControlPlane(kube, progress),
    },
  ];
  // stop() would delete namespaces it made: it made none, so this only closes its connections.
  return { fixtures, close: async () => env?.stop() };
}
