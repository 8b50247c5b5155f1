// What the failure-reporting files read of a cluster: its conditions, pods and events, as a person would with
// kubectl. Shared by failure-reporting.test.ts (runs beside other files) and failure-reporting-faults.test.ts
// (stops a node, runs alone).
import { Pods } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import { EtcdClusters } from '../../src/resources.ts';
import type { EtcdCluster } from '../../src/api/etcdcluster.ts';
import { eventually, type ClusterState } from './support.ts';

export interface PodObj {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  spec: { nodeName?: string };
  status?: { phase?: string };
}

export interface CoreEvent {
  reason?: string;
  type?: string;
  message?: string;
  note?: string;
}

export interface ConditionView {
  status: string;
  reason: string;
  message: string;
}

export const condition = (cluster: EtcdCluster, type: string): ConditionView | undefined => cluster.status?.conditions?.find((c) => c.type === type);

export const describeState = (s: ClusterState): string => JSON.stringify({ conditions: s.cluster.status?.conditions?.map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`), members: s.members }, null, 2);

export const podsOf = async (env: TestEnv, ns: string, name: string): Promise<PodObj[]> =>
  ((await env.client.list(Pods, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${name}` })).items as unknown as PodObj[]);

export const findPod = async (env: TestEnv, ns: string, name: string): Promise<PodObj | undefined> => (await env.client.find(Pods, { namespace: ns, name })) as unknown as PodObj | undefined;

/** The cluster's events as the core API shows them (events.k8s.io `note` appears as `message`). */
export async function clusterEvents(env: TestEnv, ns: string, name: string): Promise<CoreEvent[]> {
  const out = await env.kube.kubectl(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${name}`, '-o', 'json']);
  return (JSON.parse(out) as { items: CoreEvent[] }).items;
}

export const eventText = (e: CoreEvent): string => e.message ?? e.note ?? '';

/** Deletes a cluster and waits until its pods are gone, so later tests and files have the nodes to themselves. */
export async function deleteCluster(env: TestEnv, ns: string, name: string): Promise<void> {
  await env.client.delete(EtcdClusters, { namespace: ns, name }).catch(() => undefined);
  await eventually(`the pods of ${ns}/${name} gone`, async () => (await podsOf(env, ns, name)).length === 0, { timeoutMs: 120_000, intervalMs: 1000 });
}
