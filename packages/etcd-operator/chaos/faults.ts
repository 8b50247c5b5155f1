// How each fault of the chaos suite is injected on localkube, and the positive signal that it took effect
// (a restarted container, a pod's new uid, a node Ready again, NOSPACE raised): convergence is timed from
// that signal's start, never assumed from a status that has not yet noticed the fault.
import { setTimeout as sleep } from 'node:timers/promises';
import { Deployments, Leases, Nodes, Pods, Secrets, type Client, type KubeObject } from '@quorum/runtime';
import { eventually } from '@quorum/runtime/testing';
import type { LocalKube } from '@quorum/localkube';
import { EtcdClient } from '../src/etcd/client.ts';
import { EtcdError, EtcdUnavailableError, GrpcCode } from '../src/etcd/errors.ts';
import { LABELS, ROTATE_CERTIFICATES_ANNOTATION, clusterSelector, labelSelector } from '../src/names.ts';
import { OPERATOR_SELECTOR } from '../src/names.ts';
import { EtcdBackups, EtcdClusters } from '../src/resources.ts';
import { clientTLSSecretName, memberTLSSecretName } from '../src/tls/secrets.ts';
import type { EtcdCluster } from '../src/api/etcdcluster.ts';
import { choose, type FaultDraw } from './sequence.ts';

export interface ChaosContext {
  kube: LocalKube;
  client: Client;
  namespace: string;
  /** The EtcdClusters under load, by index. */
  clusters: readonly string[];
  /** The two etcd versions a version change moves between (spec.version toggles). */
  versions: readonly [string, string];
  /** The PVC backups go to. */
  backupClaim: string;
  /** The run's seed, to make the names of what faults create (backups, rotation tokens) unique and replayable. */
  seed: number;
  /** An etcd client for a cluster, over its client Service with the cluster's client certificate. */
  etcd: (cluster: string) => EtcdClient;
  log: (message: string) => void;
}

export interface Injected {
  /** What was hit: a member, a node, an operator pod, or the whole cluster. */
  target: string;
  detail?: string;
  /** performance.now() when healing could begin: the fault's injection, or the end of an outage. */
  healFrom: number;
  /** Extra condition for convergence beyond the clusters' health (the backup succeeded, the version rolled…); says what is missing. */
  done?: () => Promise<string | undefined>;
}

type PodLike = KubeObject & { status?: { containerStatuses?: { name: string; restartCount?: number }[]; conditions?: { type: string; status: string }[] } };
const OPERATOR_NAMESPACE = 'quorum-system';
const OPERATOR_LEASE = 'quorum-etcd-operator';
const OPERATOR_DEPLOYMENT = 'quorum-etcd-operator';
const EFFECT_TIMEOUT_MS = 180_000;
const MiB = 1024 * 1024;

async function memberPods(ctx: ChaosContext, cluster: string): Promise<PodLike[]> {
  // Member pods carry the member label; a backup Job's pod of the same cluster does not.
  return ((await ctx.client.list(Pods, { namespace: ctx.namespace, labelSelector: clusterSelector(cluster) })).items as PodLike[]).filter((p) => p.metadata.labels?.[LABELS.member]);
}

async function cluster(ctx: ChaosContext, name: string): Promise<EtcdCluster> {
  return ctx.client.get(EtcdClusters, { namespace: ctx.namespace, name });
}

const restarts = (p: PodLike | undefined): number => p?.status?.containerStatuses?.find((c) => c.name === 'etcd')?.restartCount ?? 0;

/** Waits until nodes are all Ready again after an outage. */
async function nodesReady(ctx: ChaosContext): Promise<void> {
  await eventually('every node Ready', async () => {
    const nodes = (await ctx.client.list(Nodes)).items as (KubeObject & { status?: { conditions?: { type: string; status: string }[] } })[];
    return nodes.every((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
  }, { timeoutMs: EFFECT_TIMEOUT_MS, intervalMs: 1000 });
}

async function outage(ctx: ChaosContext, draw: FaultDraw, what: string, start: () => Promise<void>, end: () => Promise<void>): Promise<number> {
  ctx.log(`  ${what} for ${draw.outageSeconds} s`);
  await start();
  try {
    await sleep(draw.outageSeconds * 1000);
  } finally {
    await end();
  }
  return performance.now();
}

const injectors: Record<FaultDraw['kind'], (ctx: ChaosContext, draw: FaultDraw, name: string) => Promise<Injected>> = {
  async 'kill-member-container'(ctx, draw, name) {
    const pods = await memberPods(ctx, name);
    const victim = choose(pods.map((p) => p.metadata.name!), draw.pick);
    const pod = pods.find((p) => p.metadata.name === victim);
    const before = restarts(pod);
    const healFrom = performance.now();
    await ctx.kube.killContainer(ctx.namespace, victim, 'etcd');
    // The kill took effect once the kubelet counted the restart, or once the operator replaced the pod (a member it
    // judged crash-looping, past its grace, while the kubelet backed off): convergence then says the rest.
    await eventually(`${victim}'s etcd restarted by the kubelet, or its pod replaced`, async () => {
      const now = (await memberPods(ctx, name)).find((p) => p.metadata.name === victim);
      return now === undefined || now.metadata.uid !== pod?.metadata.uid || restarts(now) > before;
    }, { timeoutMs: EFFECT_TIMEOUT_MS, intervalMs: 500 });
    return { target: `${name}/${victim}`, healFrom };
  },

  async 'delete-member-pod'(ctx, draw, name) {
    const pods = await memberPods(ctx, name);
    return deletePod(ctx, name, pods, choose(pods.map((p) => p.metadata.name!), draw.pick));
  },

  async 'delete-leader-pod'(ctx, _draw, name) {
    const leader = (await cluster(ctx, name)).status?.members?.find((m) => m.leader)?.name;
    if (!leader) throw new Error(`${name} reports no leader to delete`);
    return deletePod(ctx, name, await memberPods(ctx, name), leader, 'the leader');
  },

  async 'stop-node'(ctx, draw) {
    const node = choose(ctx.kube.nodes, draw.pick);
    const healFrom = await outage(ctx, draw, `${node} stopped`, () => ctx.kube.stopNode(node), () => ctx.kube.startNode(node));
    await nodesReady(ctx);
    return { target: node, detail: `${draw.outageSeconds} s`, healFrom };
  },

  async 'cut-node-network'(ctx, draw) {
    const node = choose(ctx.kube.nodes, draw.pick);
    const healFrom = await outage(ctx, draw, `${node}'s pod network cut`, () => ctx.kube.cutNetwork(node), () => ctx.kube.restoreNetwork(node));
    await nodesReady(ctx);
    return { target: node, detail: `${draw.outageSeconds} s`, healFrom };
  },

  async 'kill-operator-pod'(ctx, draw) {
    const pods = (await ctx.client.list(Pods, { namespace: OPERATOR_NAMESPACE, labelSelector: labelSelector(OPERATOR_SELECTOR) })).items.filter((p) => !p.metadata.deletionTimestamp);
    const holder = (await ctx.client.find(Leases, { namespace: OPERATOR_NAMESPACE, name: OPERATOR_LEASE }))?.spec?.holderIdentity;
    // Half the draws kill the leader (the one acting), half a standby (which must not disturb anything).
    const leader = pods.find((p) => p.metadata.name === holder)?.metadata.name;
    const standbys = pods.map((p) => p.metadata.name!).filter((n) => n !== leader);
    const victim = draw.pick < 0.5 && leader ? leader : standbys.length > 0 ? choose(standbys, draw.pick) : leader;
    if (!victim) throw new Error('no operator pod to kill');
    const healFrom = performance.now();
    await ctx.client.delete(Pods, { namespace: OPERATOR_NAMESPACE, name: victim }, { gracePeriodSeconds: 0 });
    // The Deployment's status lags the deletion: count Ready pods other than the victim instead.
    await eventually('a replacement operator pod Ready', async () => {
      const d = (await ctx.client.get(Deployments, { namespace: OPERATOR_NAMESPACE, name: OPERATOR_DEPLOYMENT })) as KubeObject & { spec?: { replicas?: number } };
      const now = (await ctx.client.list(Pods, { namespace: OPERATOR_NAMESPACE, labelSelector: labelSelector(OPERATOR_SELECTOR) })).items as PodLike[];
      const ready = now.filter((p) => p.metadata.name !== victim && !p.metadata.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      return ready.length >= (d.spec?.replicas ?? 1);
    }, { timeoutMs: EFFECT_TIMEOUT_MS, intervalMs: 500 });
    return { target: victim, detail: victim === leader ? 'the leader' : 'a standby', healFrom };
  },

  async 'restart-apiserver'(ctx) {
    const healFrom = performance.now();
    await ctx.kube.restartApiserver();
    await eventually('the API server ready again', async () => (await ctx.client.request<string>('GET', '/readyz')) !== undefined, { timeoutMs: EFFECT_TIMEOUT_MS, intervalMs: 500 });
    return { target: 'kube-apiserver', healFrom };
  },

  async 'dns-outage'(ctx, draw) {
    const pods = (await ctx.client.list(Pods, { namespace: 'kube-system', labelSelector: 'k8s-app=kube-dns' })).items.map((p) => p.metadata.name!);
    // Every CoreDNS pod drops DNS queries (UDP and TCP 53) in its own network namespace: names stop resolving
    // cluster-wide, as in a real DNS outage, while CoreDNS itself keeps running.
    const rule = (op: '-I' | '-D', proto: string): string[] => ['iptables', '-w', op, 'INPUT', '-p', proto, '--dport', '53', '-j', 'DROP'];
    const each = async (op: '-I' | '-D'): Promise<void> => {
      for (const pod of pods) for (const proto of ['udp', 'tcp']) await ctx.kube.inPodNetwork('kube-system', pod, rule(op, proto));
    };
    const healFrom = await outage(ctx, draw, `DNS down (${pods.length} CoreDNS pods drop port 53)`, () => each('-I'), () => each('-D'));
    return { target: 'coredns', detail: `${draw.outageSeconds} s`, healFrom };
  },

  async 'wipe-member-volume'(ctx, draw, name) {
    const members = (await cluster(ctx, name)).status?.members?.map((m) => m.name) ?? [];
    const victim = choose(members, draw.pick);
    const before = restarts((await memberPods(ctx, name)).find((p) => p.metadata.name === victim));
    const healFrom = performance.now();
    await ctx.kube.wipeVolume(ctx.namespace, `data-${victim}`);
    // etcd only notices when it restarts on the empty directory.
    await ctx.kube.killContainer(ctx.namespace, victim, 'etcd');
    const injected: Injected = {
      target: `${name}/${victim}`, healFrom,
      done: async () => {
        const member = (await cluster(ctx, name)).status?.members?.find((m) => m.name === victim);
        if (!member) return undefined;
        // etcd may let the member rejoin as itself on its empty directory: its check that the member started
        // before asks its peers, and passes when none answers (their names did not resolve at that moment).
        // The leader then sends it a snapshot. The clusters' convergence and the final read say whether that
        // was safe; the record says it happened.
        const pod = (await memberPods(ctx, name)).find((p) => p.metadata.name === victim);
        if (member.ready && restarts(pod) > before) {
          injected.detail = 'etcd let it rejoin as itself, on a snapshot from its leader';
          return undefined;
        }
        return `${victim}, whose data was wiped, not replaced yet`;
      },
    };
    return injected;
  },

  async 'fill-to-nospace'(ctx, draw, name) {
    const etcd = ctx.etcd(name);
    const value = 'x'.repeat(MiB);
    let writes = 0;
    const refusals: string[] = [];
    let refusedSince: number | undefined;
    try {
      // Overwrites of one key: its old revisions fill the quota, and compaction (the recovery) frees them.
      for (;;) {
        if (writes > 4096) throw new Error(`${name}: etcd never raised NOSPACE after ${writes} writes of 1 MiB`);
        try {
          await etcd.put(`/chaos/nospace/${draw.index}`, `${writes}:${value}`, { timeoutMs: 30_000 });
          writes++;
          refusedSince = undefined;
        } catch (err) {
          if (err instanceof EtcdError && err.code === GrpcCode.ResourceExhausted) break;
          // A connection refused or timed out is retried for 30 s, as the checkers' application client
          // retries; it is said in the record's detail. Seed 7's fault 279 met one 3.6 s after c0 had
          // converged (a write through the same Service had just been accepted), and the run stopped there.
          if (!(err instanceof EtcdUnavailableError)) throw err;
          refusedSince ??= performance.now();
          if (performance.now() - refusedSince > 30_000) throw err;
          refusals.push(err.message);
          await sleep(1000);
        }
      }
    } finally {
      etcd.close();
    }
    const refused = refusals.length ? `; ${refusals.length} write(s) refused first, the first: ${refusals[0]}` : '';
    return { target: name, detail: `NOSPACE after ${writes} writes of 1 MiB${refused}`, healFrom: performance.now() };
  },

  async scale(ctx, _draw, name) {
    const from = (await cluster(ctx, name)).spec.replicas ?? 3;
    const to = from === 3 ? 5 : 3;
    const healFrom = performance.now();
    await ctx.client.mergePatch(EtcdClusters, { namespace: ctx.namespace, name }, { spec: { replicas: to } });
    return { target: name, detail: `${from} → ${to}`, healFrom };
  },

  async 'change-version'(ctx, _draw, name) {
    const from = (await cluster(ctx, name)).spec.version;
    const to = from === ctx.versions[1] ? ctx.versions[0] : ctx.versions[1];
    const healFrom = performance.now();
    await ctx.client.mergePatch(EtcdClusters, { namespace: ctx.namespace, name }, { spec: { version: to } });
    return {
      target: name, detail: `${from} → ${to}`, healFrom,
      done: async () => {
        const s = (await cluster(ctx, name)).status;
        return s?.currentVersion === to && !s.rollout ? undefined : `version ${s?.currentVersion ?? '?'} (rollout ${s?.rollout ? 'under way' : 'none'}), want ${to}`;
      },
    };
  },

  async 'take-backup'(ctx, draw, name) {
    const backup = `${name}-chaos-${ctx.seed}-${draw.index}`;
    const healFrom = performance.now();
    await ctx.client.create(EtcdBackups, {
      apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdBackup', metadata: { name: backup, namespace: ctx.namespace },
      spec: { clusterName: name, destination: { pvc: { claimName: ctx.backupClaim, path: backup } } },
    });
    return {
      target: `${name} → ${backup}`, healFrom,
      done: async () => {
        const phase = (await ctx.client.get(EtcdBackups, { namespace: ctx.namespace, name: backup })).status?.phase;
        return phase === 'Succeeded' ? undefined : `backup ${backup} ${phase ?? 'Pending'}`;
      },
    };
  },

  async 'rotate-certificates'(ctx, draw, name) {
    const token = `chaos-${ctx.seed}-${draw.index}`;
    const healFrom = performance.now();
    await ctx.client.mergePatch(EtcdClusters, { namespace: ctx.namespace, name }, { metadata: { annotations: { [ROTATE_CERTIFICATES_ANNOTATION]: token } } });
    return {
      target: name, detail: `token ${token}`, healFrom,
      // Each leaf Secret records the request it was issued under: the rotation is done when the client
      // Secret and every current member's carry it.
      done: async () => {
        const members = (await cluster(ctx, name)).status?.members?.map((m) => memberTLSSecretName(m.name)) ?? [];
        const secrets = (await ctx.client.list(Secrets, { namespace: ctx.namespace, labelSelector: clusterSelector(name) })).items;
        const behind = [clientTLSSecretName(name), ...members].filter((n) => secrets.find((s) => s.metadata.name === n)?.metadata.annotations?.[ROTATE_CERTIFICATES_ANNOTATION] !== token);
        return behind.length === 0 ? undefined : `certificates not yet reissued: ${behind.join(', ')}`;
      },
    };
  },
};

async function deletePod(ctx: ChaosContext, name: string, pods: PodLike[], victim: string, what?: string): Promise<Injected> {
  const uid = pods.find((p) => p.metadata.name === victim)?.metadata.uid;
  const healFrom = performance.now();
  await ctx.client.delete(Pods, { namespace: ctx.namespace, name: victim });
  await eventually(`${victim} (uid ${uid}) gone`, async () => (await memberPods(ctx, name)).every((p) => p.metadata.uid !== uid), { timeoutMs: EFFECT_TIMEOUT_MS, intervalMs: 500 });
  return { target: `${name}/${victim}`, ...(what ? { detail: what } : {}), healFrom };
}

/** Injects one drawn fault and waits for its effect; returns what it hit. */
export function inject(ctx: ChaosContext, draw: FaultDraw): Promise<Injected> {
  return injectors[draw.kind](ctx, draw, ctx.clusters[draw.cluster]!);
}
