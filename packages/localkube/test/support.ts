// Shared by localkube's integration tests: the suite's cluster (started once by scripts/test.ts and named
// by LOCALKUBE_STATE_DIR), a fresh namespace per test file, and polling helpers.
import { after, before } from 'node:test';
import { LocalKube, eventually as poll, type EventuallyOptions, type KubeObject } from '../src/index.ts';

/** The shared poll, with this suite's defaults (60 s, every 250 ms). */
export function eventually<T>(what: string, probe: () => Promise<T | undefined | false>, options: EventuallyOptions = {}): Promise<T> {
  return poll(what, probe, { timeoutMs: 60_000, intervalMs: 250, ...options });
}

export interface Suite {
  kube: LocalKube;
  namespace: string;
}

/** Attaches to the suite's cluster and creates a namespace for this file; both are cleaned up after. */
export function useCluster(prefix: string): Suite {
  const suite = {} as Suite;
  before(async () => {
    const stateDir = process.env['LOCALKUBE_STATE_DIR'];
    if (!stateDir) throw new Error('LOCALKUBE_STATE_DIR is not set: run integration tests through `npm test`');
    suite.kube = await LocalKube.attach(stateDir);
    suite.namespace = `${prefix}-${Date.now().toString(36)}`;
    await suite.kube.client.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: suite.namespace } });
    // Pods are refused until the namespace's `default` ServiceAccount exists, made by the controller manager a
    // moment later (a cold run's node-failure test created its pod first: 403, serviceaccount "default" not found).
    await eventually(`the ServiceAccount ${suite.namespace}/default`, () => suite.kube.client.get(`/api/v1/namespaces/${suite.namespace}/serviceaccounts/default`).then(() => true, () => false), { intervalMs: 100 });
  });
  after(async () => {
    await suite.kube.client.delete(`/api/v1/namespaces/${suite.namespace}`);
    suite.kube.client.close();
  });
  return suite;
}

export interface ContainerStatus {
  name: string;
  ready: boolean;
  restartCount: number;
  containerID?: string;
  state?: { waiting?: { reason?: string; message?: string }; running?: object; terminated?: { exitCode: number; reason?: string } };
  lastState?: { terminated?: { exitCode: number; reason?: string } };
}

export interface Pod extends KubeObject {
  spec: { nodeName?: string; [key: string]: unknown };
  status?: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    containerStatuses?: ContainerStatus[];
  };
}

export const podReady = (pod: Pod | undefined): boolean => pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** An etcd container serving clients on the pod IP: the workload every test here runs. */
export function etcdContainer(image: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'etcd',
    image,
    command: [
      '/usr/local/bin/etcd',
      '--name=$(POD_NAME)',
      '--data-dir=/var/etcd/data',
      '--listen-client-urls=http://0.0.0.0:2379',
      '--advertise-client-urls=http://$(POD_IP):2379',
    ],
    env: [
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
    ],
    ports: [{ name: 'client', containerPort: 2379 }],
    ...extra,
  };
}
