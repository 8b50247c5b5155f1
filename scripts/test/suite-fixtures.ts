// What the integration files share, set up once per run on the suite's localkube: the etcd operator (its
// images built and loaded, installed with the suite's settings) and the object-store addons. A file that
// holds one of these locks alone may change what it guards; once it ends, the harness puts it back before
// the lock is free again, so every other file finds the suite's set-up.
import { TestEnv } from '@quorum/localkube/testing';
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

export function suiteFixtures(stateDir: string, kube: LocalKube): { fixtures: SuiteFixture[]; close: () => Promise<void> } {
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
  ];
  // stop() would delete namespaces it made: it made none, so this only closes its connections.
  return { fixtures, close: async () => env?.stop() };
}
