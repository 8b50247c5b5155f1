// "Available with N members", decided the same way for every peer, from what etcd and Kubernetes say rather
// than from any operator's own status: exactly N member pods (none terminating), all Ready; a linearizable
// member list (through the leader and a quorum) of exactly N started voting members whose names are those
// pods' names (every peer names a member after its pod); and every member answering /health true.
import { Pods, type Client, type KubeObject } from '@quorum/runtime';
import { EtcdClient, type Member } from '../../src/etcd/index.ts';

export interface PodView {
  name: string;
  uid: string;
  ready: boolean;
  terminating: boolean;
  ip?: string;
}

export interface Observation {
  pods: PodView[];
  /** The member list one member returned, or why none could be read. */
  members: Member[] | { error: string };
  /** Per pod name: /health's verdict, or why it could not be asked. */
  health: Record<string, boolean | { error: string }>;
}

export type Verdict = { available: true } | { available: false; reason: string };

/** The decision, on an observation (pure, for the unit tests). `absentUid`: a deleted pod that must be gone. */
export function availability(obs: Observation, n: number, absentUid?: string): Verdict {
  const no = (reason: string): Verdict => ({ available: false, reason });
  if (absentUid && obs.pods.some((p) => p.uid === absentUid)) return no('the deleted pod is still there');
  const live = obs.pods.filter((p) => !p.terminating);
  if (live.length !== n) return no(`${live.length} member pods, not ${n}`);
  const unready = live.filter((p) => !p.ready).map((p) => p.name);
  if (unready.length) return no(`pods not Ready: ${unready.join(', ')}`);
  if ('error' in obs.members) return no(`no member list: ${obs.members.error}`);
  const members = obs.members;
  if (members.length !== n) return no(`${members.length} members, not ${n}`);
  const unstarted = members.filter((m) => !m.name || m.clientURLs.length === 0);
  if (unstarted.length) return no(`${unstarted.length} member(s) not started`);
  const learners = members.filter((m) => m.isLearner).map((m) => m.name);
  if (learners.length) return no(`learners: ${learners.join(', ')}`);
  const podNames = new Set(live.map((p) => p.name));
  const strangers = members.map((m) => m.name).filter((name) => !podNames.has(name));
  if (strangers.length) return no(`members without a pod: ${strangers.join(', ')}`);
  for (const p of live) {
    const h = obs.health[p.name];
    if (h !== true) return no(`${p.name} not healthy: ${h === undefined ? 'not asked' : h === false ? '/health false' : h.error}`);
  }
  return { available: true };
}

type PodObject = KubeObject & { status?: { podIP?: string; conditions?: { type: string; status: string }[] } };

export function podView(p: PodObject): PodView {
  return {
    name: p.metadata.name ?? '',
    uid: p.metadata.uid ?? '',
    ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    terminating: Boolean(p.metadata.deletionTimestamp),
    ...(p.status?.podIP ? { ip: p.status.podIP } : {}),
  };
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Reads the pods (by `selector`) and asks each member's pod IP directly: no Service's endpoints to lag behind. */
export async function observe(client: Client, namespace: string, selector: string): Promise<Observation> {
  const pods = ((await client.list(Pods, { namespace, labelSelector: selector })).items as PodObject[]).map(podView);
  const reachable = pods.filter((p) => p.ip && !p.terminating);
  const health: Observation['health'] = {};
  let members: Observation['members'] = { error: 'no pod with an IP' };
  await Promise.all(reachable.map(async (p) => {
    const etcd = new EtcdClient({ endpoint: `http://${p.ip}:2379`, timeoutMs: 2000 });
    try {
      health[p.name] = await etcd.health();
    } catch (err) {
      health[p.name] = { error: errorText(err) };
    } finally {
      etcd.close();
    }
  }));
  // The member list from the first member that gives one; linearizable, so it is the committed membership.
  for (const p of reachable) {
    const etcd = new EtcdClient({ endpoint: `http://${p.ip}:2379`, timeoutMs: 3000 });
    try {
      members = await etcd.memberList({ linearizable: true });
      break;
    } catch (err) {
      members = { error: `${p.name}: ${errorText(err)}` };
    } finally {
      etcd.close();
    }
  }
  return { pods, members, health };
}

/** A follower's pod (not the leader's), the first by name: the member the pod_deleted scenario deletes. */
export async function followerPod(client: Client, namespace: string, selector: string): Promise<PodView> {
  const pods = ((await client.list(Pods, { namespace, labelSelector: selector })).items as PodObject[]).map(podView).filter((p) => p.ip && !p.terminating);
  for (const p of pods) {
    const etcd = new EtcdClient({ endpoint: `http://${p.ip}:2379`, timeoutMs: 3000 });
    try {
      const [status, members] = await Promise.all([etcd.status(), etcd.memberList({ linearizable: true })]);
      const leader = members.find((m) => m.id === status.leaderId)?.name;
      const follower = pods.filter((x) => x.name !== leader).sort((a, b) => a.name.localeCompare(b.name))[0];
      if (leader && follower) return follower;
    } catch {
      // Ask the next member.
    } finally {
      etcd.close();
    }
  }
  throw new Error(`no member of ${namespace} (${selector}) named its leader`);
}
