// What the rolling-update files share (rolling-upgrade.test.ts, rolling-upgrade-paths.test.ts): views of a
// cluster's pods, claims and events, and the data checker, for the environment each file sets up.
import { PersistentVolumeClaims, Pods } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import type { EtcdCluster } from '../../src/api/etcdcluster.ts';
import { DataChecker } from '../../src/testing/data-checker.ts';
import { clientServiceEndpoint, type ClusterState, eventually } from './support.ts';

export interface PodObj {
  metadata: { name: string; uid: string; deletionTimestamp?: string; creationTimestamp?: string };
  spec: { containers: { name: string; image: string }[] };
  status?: { conditions?: { type: string; status: string }[] };
}
export interface CoreEvent {
  reason?: string;
  type?: string;
  message?: string;
  note?: string;
}

/** The views, for the environment `getEnv` returns once the file's before() has set it up; checkers started are pushed to `checkers`. */
export function upgradeViews(getEnv: () => TestEnv, checkers: DataChecker[]) {
  const condition = (cluster: EtcdCluster, type: string) => cluster.status?.conditions?.find((c) => c.type === type);
  const describe = (s: ClusterState): string => JSON.stringify({ conditions: s.cluster.status?.conditions?.map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`), rollout: s.cluster.status?.rollout, members: s.members }, null, 2);
  const pods = async (ns: string, name: string): Promise<PodObj[]> => ((await getEnv().client.list(Pods, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${name}` })).items as unknown as PodObj[]);
  const etcdImage = (p: PodObj): string => p.spec.containers.find((c) => c.name === 'etcd')?.image ?? '';
  const ready = (p: PodObj): boolean => !p.metadata.deletionTimestamp && (p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false);
  const ids = (s: ClusterState): string[] => s.members.map((m) => `${m.name}=${m.id}`).sort();

  async function claimUids(ns: string, name: string): Promise<string[]> {
    const list = await getEnv().client.list(PersistentVolumeClaims, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${name}` });
    return list.items.map((c) => `${c.metadata.name}=${c.metadata.uid}`).sort();
  }

  async function events(ns: string, name: string): Promise<CoreEvent[]> {
    const out = await getEnv().kube.kubectl(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${name}`, '-o', 'json']);
    return (JSON.parse(out) as { items: CoreEvent[] }).items;
  }
  const text = (e: CoreEvent): string => e.message ?? e.note ?? '';

  async function startChecker(ns: string, name: string): Promise<DataChecker> {
    const checker = new DataChecker({ endpoints: [await clientServiceEndpoint(getEnv().client, ns, name)], ratePerSecond: 20 });
    checkers.push(checker);
    checker.start();
    // The positive signal that it writes before anything changes.
    await eventually('the data checker writing', () => checker.stats().acknowledged >= 20, { timeoutMs: 30_000 });
    return checker;
  }
  return { condition, describe, pods, etcdImage, ready, ids, claimUids, events, text, startChecker };
}
