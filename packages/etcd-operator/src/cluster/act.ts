// Taking the one step the planner chose. Each is idempotent and recorded where the next reconcile reads it
// (etcd's membership or Kubernetes), so the operator may die between any two calls. A step that is refused
// throws; the reconciler reports the refusal (progress.ts) and retries.
import {
  AlreadyExistsError,
  ApiError,
  NotFoundError,
  PersistentVolumeClaims,
  Pods,
  type Client,
  type KubeObject,
  type Result,
} from '@quorum/runtime';
import { EtcdError, EtcdUnavailableError, GrpcCode, LearnerNotReadyError, QuorumUnavailableError } from '../etcd/errors.ts';
import type { EtcdClient, EtcdStatus } from '../etcd/client.ts';
import type { DefragReason } from '../api/etcdcluster.ts';
import { changeMembership, MembershipRefusedError, type MemberEndpoint } from './membership.ts';
import { API_VERSION } from '../api/etcdcluster.ts';
import { BACKUP_KIND } from '../api/etcdbackup.ts';
import { EtcdBackups } from '../resources.ts';
import { FIELD_MANAGER, LABELS, memberHost, peerURL, PURPOSE_LABEL, pvcName } from './names.ts';
import { staleDisruptions, type BudgetStatus } from './disruption.ts';
import type { EtcdClients, EtcdView, PodObject } from './observe.ts';
import type { Action } from './plan/types.ts';
import { memberPod, memberPVC, type RestoreSource } from './resources.ts';
import type { DefaultedSpec, EtcdCluster } from './spec.ts';
import type { StepFailure } from './progress.ts';
import { clientEndpoint, operatorManaged, peerScheme, tlsSides, type CABundles, type ClientCredentials, type MemberEndpoint as ClientEndpoint, type TLSStage } from './tls.ts';
import type { Scheme } from './names.ts';
import { deleteMemberSecret, rotateCA, TLSNotReadyError, writeTLSSecrets } from './tls-secrets.ts';

export interface ActContext {
  client: Client;
  etcd: EtcdClients;
  cluster: EtcdCluster;
  spec: DefaultedSpec;
  pods: PodObject[];
  pvcs: KubeObject[];
  /** The cluster's PodDisruptionBudget as the cache holds it: why it refuses an eviction (disruption.ts). */
  pdb?: BudgetStatus;
  view: EtcdView;
  peerWaitImage?: string;
  /** The backup agent's image (the operator's own), for a restored member's fetch-snapshot init container. */
  agentImage?: string;
  signal: AbortSignal;
  event: (type: 'Normal' | 'Warning', reason: string, note: string) => void;
  wrote: (what: string) => Promise<void>;
  /** For a cluster with spec.tls: how the operator dials members, and what writing its Secrets needs. */
  tls?: { credentials?: ClientCredentials; clusterDomain: string; mayIssueCA: boolean; now: Date; caBundles?: CABundles };
  /** Each member's peer URL scheme as etcd (or, without a quorum, status) last said: what --initial-cluster must repeat. */
  peerSchemes?: ReadonlyMap<string, Scheme>;
  /** The TLS stage a member's new pod is made at (tls.ts memberTLSStages); unset: the spec's final stage. */
  tlsStage?: (member: string) => TLSStage;
  /** Told what a maintenance step did, for the next status (which is written before each step, so cannot know it). */
  maintained?: (result: MaintenanceResult) => void;
}

/** What a storage maintenance step did: status.maintenance records it on the next reconcile. */
export type MaintenanceResult =
  | { kind: 'compacted'; revision: string; at: Date }
  | { kind: 'defragmented'; member: string; reason: DefragReason; durationMs: number; dbSizeBefore: number; dbSizeAfter?: number; at: Date };

export async function act(a: Action, c: ActContext): Promise<Result> {
  const name = c.cluster.metadata.name!;
  const namespace = c.cluster.metadata.namespace!;
  const { signal } = c;

  const ensurePVC = async (member: string): Promise<void> => {
    if (c.spec.storage.emptyDir || c.pvcs.some((p) => p.metadata.name === pvcName(member))) return;
    try {
      await c.client.create(PersistentVolumeClaims, memberPVC(c.cluster, c.spec, member), { fieldManager: FIELD_MANAGER, signal });
      await c.wrote(`create pvc ${member}`);
    } catch (err) {
      if (!(err instanceof AlreadyExistsError)) throw err;
    }
  };

  /** Writes the TLS Secrets `members` need now (issued or renewed); an event names them. */
  const ensureTLS = async (members: string[]): Promise<{ name: string; reason: string }[]> => {
    if (!c.tls || !operatorManaged(tlsSides(c.spec))) return [];
    const written = await writeTLSSecrets({ client: c.client, cluster: c.cluster, clusterDomain: c.tls.clusterDomain, now: c.tls.now, signal, mayIssueCA: c.tls.mayIssueCA }, members);
    if (written.length > 0) {
      await c.wrote(`write secrets ${written.map((w) => w.name).join(' ')}`);
      c.event('Normal', 'CertificatesIssued', `issued ${written.map((w) => `${w.name} (${w.reason})`).join(', ')}`);
    }
    return written;
  };

  /** Creates a member's pod; false when it already existed (the cache had not caught up): no event then. */
  const createPod = async (member: string, state: 'new' | 'existing', initialMembers: string[], restore?: RestoreSource, forceNewCluster = false): Promise<boolean> => {
    await ensurePVC(member);
    // The member's certificates before its pod: etcd would not start without the files its flags name.
    await ensureTLS([member]);
    // etcd checks a joining member's --initial-cluster against its member list, URL by URL, scheme included.
    const initialCluster = initialMembers.map((m) => `${m}=${peerURL(name, namespace, m, c.peerSchemes?.get(m) ?? peerScheme(c.spec))}`);
    // Names etcd dials at start: every initial member whose pod exists (or is being created with it).
    // A member without a pod has no DNS record, and waiting for it could hold back a quorum's return.
    const withPods = new Set([member, ...c.pods.map((p) => p.metadata.labels?.[LABELS.member] ?? ''), ...(state === 'new' ? initialMembers : [])]);
    const waitForNames = initialMembers.filter((m) => withPods.has(m)).map((m) => memberHost(name, namespace, m));
    if (restore && !(c.agentImage && c.peerWaitImage)) throw new StepError('RestoreNotConfigured', 'restoring needs the agent and member init images (AGENT_IMAGE, PEER_WAIT_IMAGE), and the operator has none');
    const pod = memberPod(c.cluster, c.spec, {
      member,
      initialClusterState: state,
      initialCluster,
      waitForNames,
      peerWaitImage: c.peerWaitImage,
      ...(forceNewCluster ? { forceNewCluster } : {}),
      ...(restore && c.agentImage ? { restore: { source: restore, agentImage: c.agentImage } } : {}),
      ...(c.tls?.caBundles ? { caBundles: c.tls.caBundles } : {}),
      ...(c.tlsStage ? { tlsStage: c.tlsStage(member) } : {}),
    });
    try {
      await c.client.create(Pods, pod, { fieldManager: FIELD_MANAGER, signal });
      await c.wrote(`create pod ${member}`);
      return true;
    } catch (err) {
      if (!(err instanceof AlreadyExistsError)) throw err;
      const existing = await c.client.find(Pods, { namespace, name: member });
      if (existing && existing.metadata.labels?.[LABELS.instance] === name && existing.metadata.labels?.[LABELS.member] === member) return false;
      throw new StepError('PodNameTaken', `a pod named ${member} exists that this cluster does not manage; delete or rename it`);
    }
  };

  const dial = (p: PodObject): ClientEndpoint | undefined => clientEndpoint(p, name, namespace, c.tls?.credentials);
  // Voting members that have a pod IP, the leader first: membership changes go through each in turn.
  const votingEndpoints = (): MemberEndpoint[] => {
    const leader = c.view.membership?.leaderId;
    const voters = (c.view.membership?.members ?? []).filter((m) => !m.learner && m.started);
    const byMember = new Map(c.pods.filter((p) => p.status?.podIP && !p.metadata.deletionTimestamp).map((p) => [p.metadata.labels?.[LABELS.member] ?? '', dial(p)!]));
    return voters
      .sort((x, y) => Number(y.id === leader) - Number(x.id === leader))
      .flatMap((m) => (byMember.has(m.member) ? [{ member: m.member, endpoint: byMember.get(m.member)! }] : []));
  };
  const endpointOf = (member: string): ClientEndpoint | undefined => {
    const p = c.pods.find((x) => x.metadata.labels?.[LABELS.member] === member && x.status?.podIP && !x.metadata.deletionTimestamp);
    return p ? dial(p) : undefined;
  };
  /**
   * Every member runs `minor`: a downgrade to it that etcd still has enabled is over, and it would keep a new
   * member from joining (see the addMember action). 3.6 says in its status whether one is enabled; 3.5 does
   * not, and answers CANCEL with "no inflight downgrade job" when none is.
   */
  const endFinishedDowngrade = async (minor: string): Promise<void> => {
    // Through the first voting member that answers, the leader first (as the add itself goes).
    let client: EtcdClient | undefined;
    let status: EtcdStatus | undefined;
    let lastError: Error = new StepError('MemberUnreachable', 'no voting member has a pod to end a finished downgrade through');
    for (const { endpoint } of votingEndpoints()) {
      client = c.etcd.get(endpoint);
      status = await client.status({ signal }).catch((err: unknown) => void (lastError = err as Error));
      if (status) break;
    }
    if (!client || !status) throw lastError;
    if (status.downgrade && downgradeEnabledTo(status) !== minor) return;
    const noneEnabled = (err: unknown): boolean => /no inflight downgrade job/.test((err as Error).message);
    try {
      await client.downgrade('CANCEL', '', { signal });
    } catch (err) {
      if (noneEnabled(err)) return;
      // 3.5 applies a CANCEL but never answers it (the request times out): a second one says whether it took.
      // Any other failure may not have reached raft, and a second "none enabled" would not mean it ended one.
      const timedOut = err instanceof QuorumUnavailableError || (err instanceof EtcdUnavailableError && err.reason === 'timeout');
      if (!timedOut) throw err;
      try {
        await client.downgrade('CANCEL', '', { signal });
      } catch (again) {
        if (!noneEnabled(again)) throw again;
      }
    }
    await c.wrote(`etcd downgrade cancel (finished)`);
    c.event('Normal', 'DowngradeFinished', `etcd still had its downgrade to ${minor} enabled with every member on ${minor}: ended it before adding a member (a new member cannot join while it is enabled)`);
  };
  /** The eviction API, not a delete: it refuses when the PodDisruptionBudget does not allow it (a drain under way shares it). */
  const evict = async (member: string): Promise<void> => {
    try {
      await c.client.request('POST', `/api/v1/namespaces/${namespace}/pods/${member}/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: member, namespace } }, { signal });
    } catch (err) {
      if (err instanceof NotFoundError) return;
      // 429: the budget allows no disruption now (another member is down or being drained): a wait, retried.
      if (err instanceof ApiError && err.code === 429) {
        const why = staleDisruptions(c.pdb, c.pods);
        throw new StepError('DisruptionBudget', `the PodDisruptionBudget allows no eviction of ${member} now: ${err.status.message ?? err.message}${why ? `; ${why}` : ''}`);
      }
      throw err;
    }
    await c.wrote(`evict pod ${member}`);
  };
  const through = (r: { through: string; refusals: { member: string; error: string }[] }): string =>
    r.refusals.length ? ` through ${r.through}, after ${r.refusals.map((x) => `${x.member}: ${x.error}`).join('; ')}` : '';

  /** Every member pod and claim of the cluster, for a re-creation from a backup. */
  const clearCluster = async (): Promise<void> => {
    for (const p of c.pods.filter((x) => !x.metadata.deletionTimestamp)) {
      await c.client.delete(Pods, { namespace, name: p.metadata.name! }, { signal }).catch(ignoreNotFound);
      await c.wrote(`delete pod ${p.metadata.name}`);
    }
    for (const claim of c.pvcs.filter((x) => !x.metadata.deletionTimestamp)) {
      await c.client.delete(PersistentVolumeClaims, { namespace, name: claim.metadata.name! }, { signal }).catch(ignoreNotFound);
      await c.wrote(`delete pvc ${claim.metadata.name}`);
    }
  };

  /**
   * A rollback to an older minor is safe only while etcd's cluster version is still that minor: once it has
   * moved up, an older binary refuses to start ("server version is lower than determined cluster version").
   * Read again right before the member goes, since the plan's reading may be seconds old.
   */
  const checkClusterVersion = async (atMost: string): Promise<void> => {
    const endpoint = c.view.health.filter((h) => h.healthy).map((h) => endpointOf(h.member)).find(Boolean);
    if (!endpoint) throw new StepError('ClusterVersionUnknown', 'no member serves to read the cluster version from before a rollback');
    const version = (await c.etcd.get(endpoint).version({ signal })).cluster;
    if (!version) throw new StepError('ClusterVersionUnknown', 'etcd has not decided its cluster version yet; a rollback waits for it');
    const minor = (v: string): number => Number(v.split('.')[1]);
    if (minor(version) > minor(atMost)) {
      throw new StepError('ClusterVersionMoved', `etcd's cluster version moved to ${version}: members can no longer go back to ${atMost} binaries`);
    }
  };

  switch (a.type) {
    case 'bootstrap': {
      for (const m of a.members) await createPod(m, 'new', a.members, a.restore);
      c.event('Normal', 'ClusterBootstrapped', `started the initial members ${a.members.join(', ')}${a.restore ? `, restoring ${a.restore.key}` : ''}`);
      return { requeueAfter: 2000 };
    }
    case 'createPod': {
      if (await createPod(a.member, a.state, a.initialMembers, a.restore, a.forceNewCluster)) {
        c.event('Normal', a.reason === 'MemberAdded' ? 'MemberPodCreated' : 'MemberPodRecreated', `created pod ${a.member} (${a.reason})`);
      }
      return { requeueAfter: 2000 };
    }
    case 'deletePod': {
      const pod = c.pods.find((p) => p.metadata.labels?.[LABELS.member] === a.member);
      await c.client.delete(Pods, { namespace, name: a.member }, { preconditions: { uid: pod?.metadata.uid }, signal }).catch(ignoreNotFound);
      await c.wrote(`delete pod ${a.member}`);
      c.event(a.reason === 'PodFailed' ? 'Warning' : 'Normal', 'MemberPodDeleted', `deleted pod ${a.member} (${a.reason})`);
      return { requeueAfter: 1000 };
    }
    case 'deletePVC':
      await c.client.delete(PersistentVolumeClaims, { namespace, name: pvcName(a.member) }, { signal }).catch(ignoreNotFound);
      await c.wrote(`delete pvc ${a.member}`);
      c.event('Normal', 'MemberClaimDeleted', `deleted the claim of former member ${a.member} (reclaimPolicy Delete)`);
      return { requeueAfter: 1000 };
    case 'addMember': {
      if (a.endDowngradeTo) await endFinishedDowngrade(a.endDowngradeTo);
      const r = await changeMembership({ kind: 'add', peerURL: peerURL(name, namespace, a.member, a.peerScheme ?? 'http') }, votingEndpoints(), c.etcd, signal);
      await c.wrote(`etcd member add ${a.member}`);
      c.event('Normal', 'MemberAdded', `added ${a.member} as a learner${through(r)}`);
      return { requeueAfter: 500 };
    }
    case 'promoteMember': {
      const r = await changeMembership({ kind: 'promote', id: a.id }, votingEndpoints(), c.etcd, signal);
      await c.wrote(`etcd member promote ${a.member}`);
      c.event('Normal', 'MemberPromoted', `promoted ${a.member} to a voting member${through(r)}`);
      return { requeueAfter: 500 };
    }
    case 'removeMember': {
      const r = await changeMembership({ kind: 'remove', id: a.id }, votingEndpoints(), c.etcd, signal);
      await c.wrote(`etcd member remove ${a.member}`);
      c.event(a.reason === 'ScaleDown' ? 'Normal' : 'Warning', 'MemberRemoved', `removed ${a.member} from the cluster (${a.reason})${through(r)}`);
      return { requeueAfter: 500 };
    }
    case 'restartMember': {
      await evict(a.member);
      c.event('Warning', 'MemberRestarted', `evicted pod ${a.member} so that its peers reconnect to it: ${a.detail}`);
      return { requeueAfter: 2000 };
    }
    case 'startRollout':
      // Status records the rollout (written before this step): nothing else to do.
      c.event('Normal', 'RollingUpdateStarted', a.detail);
      return { requeueAfter: 100 };
    case 'updateMember': {
      // Status already names this member as the rollout's (a crash from here resumes with it).
      if (a.clusterVersionAtMost) await checkClusterVersion(a.clusterVersionAtMost);
      if (a.storageVersion) {
        const endpoint = endpointOf(a.member);
        const storage = endpoint ? (await c.etcd.get(endpoint).version({ signal })).storage : undefined;
        if (storage !== a.storageVersion) throw new StepError('StorageNotMigrated', `${a.member}'s data has storage version ${storage ?? 'unknown'}, not ${a.storageVersion}: an older etcd would not read it, so it does not go back yet`);
      }
      if (a.via === 'evict') {
        await evict(a.member);
        c.event('Normal', 'MemberUpdating', `evicted pod ${a.member}: it is recreated from the current spec on its volume, as the same member (${a.detail})`);
      } else {
        // emptyDir: deleting the pod loses the data, so the member is replaced by a new one made from the spec.
        const r = await changeMembership({ kind: 'remove', id: a.id }, votingEndpoints(), c.etcd, signal);
        await c.wrote(`etcd member remove ${a.member}`);
        c.event('Normal', 'MemberUpdating', `removed ${a.member} to replace it with a new member made from the current spec (its data is on emptyDir)${through(r)}`);
      }
      return { requeueAfter: 1000 };
    }
    case 'switchPeerURL': {
      const r = await changeMembership({ kind: 'update', id: a.id, peerURL: peerURL(name, namespace, a.member, 'https') }, votingEndpoints(), c.etcd, signal);
      await c.wrote(`etcd member update ${a.member}`);
      c.event('Normal', 'PeerURLSwitched', `changed ${a.member}'s peer URL to https${through(r)}; its pod is updated next to listen on it`);
      return { requeueAfter: 500 };
    }
    case 'rotateCA': {
      const wrote = await rotateCA(c.client, c.cluster, a.ca, a.step, c.tls?.now ?? new Date(), signal);
      if (wrote) {
        await c.wrote(`rotate ${a.ca} CA ${a.step}`);
        c.event('Normal', 'CARotation', a.detail);
      }
      return { requeueAfter: 1000 };
    }
    case 'moveLeader': {
      const endpoint = endpointOf(a.from);
      if (!endpoint) throw new StepError('LeaderUnreachable', `the leader ${a.from} has no running pod to send the leadership transfer to`);
      // It returns once the transfer is done: longer than an ordinary call.
      await c.etcd.get(endpoint).moveLeader(a.toId, { signal, timeoutMs: 10_000 });
      await c.wrote(`etcd move-leader ${a.to}`);
      c.event('Normal', 'LeaderMoved', `moved leadership from ${a.from} to the updated member ${a.to}, so that ${a.from} is updated last, as a follower`);
      return { requeueAfter: 500 };
    }
    case 'createBackup': {
      // No ownerReference: the backup must outlive the cluster it was taken of.
      try {
        await c.client.create(
          EtcdBackups,
          {
            apiVersion: API_VERSION,
            kind: BACKUP_KIND,
            metadata: { name: a.name, namespace, labels: { [PURPOSE_LABEL]: 'before-version-change', [LABELS.instance]: name } },
            spec: { clusterName: name, destination: a.destination },
          },
          { fieldManager: FIELD_MANAGER, signal },
        );
        await c.wrote(`create EtcdBackup ${a.name}`);
        c.event('Normal', 'BackupBeforeUpgrade', `created EtcdBackup ${a.name}; no member is updated until it succeeds`);
      } catch (err) {
        if (!(err instanceof AlreadyExistsError)) throw err;
      }
      return { requeueAfter: 2000 };
    }
    case 'downgrade': {
      const endpoint = endpointOf(a.via);
      if (!endpoint) throw new StepError('MemberUnreachable', `${a.via} has no running pod to call etcd's downgrade API through`);
      const client = c.etcd.get(endpoint);
      const enabledTo = async (): Promise<string | undefined> => downgradeEnabledTo(await client.status({ signal }));
      if (a.op === 'enable') {
        try {
          await client.downgrade('VALIDATE', a.target, { signal });
          await client.downgrade('ENABLE', a.target, { signal });
        } catch (err) {
          // An ENABLE whose answer was lost is refused when tried again (the cluster version moved): the status says.
          if ((await enabledTo().catch(() => undefined)) !== a.target) throw err;
        }
        await c.wrote(`etcd downgrade enable ${a.target}`);
        c.event('Normal', 'DowngradeEnabled', `etcd's downgrade to ${a.target} is enabled: its cluster version is now ${a.target}.0, and every member migrates its data to that storage version before any member goes back`);
      } else {
        await client.downgrade('CANCEL', '', { signal });
        // 3.6 answers a failed cancel with success: only the status tells.
        if ((await enabledTo()) !== undefined) throw new StepError('DowngradeNotCancelled', `etcd still reports its downgrade to ${a.target} enabled after CANCEL`);
        await c.wrote(`etcd downgrade cancel`);
        c.event('Normal', 'DowngradeCancelled', `etcd's downgrade to ${a.target} was cancelled: spec.version no longer goes there`);
      }
      return { requeueAfter: 1000 };
    }
    case 'haltRollout':
      // Status records the halt (written before this step); what remains is to say it.
      c.event('Warning', 'UpgradeFailed', `rolling update halted at ${a.member} (${a.reason}): ${a.message}`);
      return { requeueAfter: 30_000 };
    case 'startRecovery': {
      // Status already records the recovery (written before this step), so a crash from here resumes it.
      c.event('Warning', 'RecoveryStarted', `${a.detail}. Writes after revision ${a.revision}${a.dataTime ? ` (${a.dataTime})` : ''} are lost`);
      if (a.method === 'Backup') await clearCluster();
      else {
        await c.client.delete(Pods, { namespace, name: a.from }, { signal }).catch(ignoreNotFound);
        await c.wrote(`delete pod ${a.from}`);
      }
      return { requeueAfter: 1000 };
    }
    case 'clearForRestore':
      await clearCluster();
      return { requeueAfter: 2000 };
    case 'issueTLSSecrets': {
      // The cluster-wide Secrets and those of members that have pods; a new member's come with its pod.
      const members = c.pods.filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.labels?.[LABELS.member] ?? '').filter(Boolean);
      await ensureTLS(members);
      return { requeueAfter: 500 };
    }
    case 'deleteTLSSecret':
      await deleteMemberSecret(c.client, namespace, a.member, signal);
      await c.wrote(`delete secret ${a.member}-tls`);
      return { requeueAfter: 500 };
    case 'compact': {
      const endpoint = endpointOf(a.via);
      if (!endpoint) throw new StepError('MemberUnreachable', `${a.via} has no running pod to compact through`);
      try {
        // Physical: the answer comes once every member applied it, so the defragmentations that follow free its pages.
        await c.etcd.get(endpoint).compact(a.revision, { physical: true, signal, timeoutMs: 60_000 });
      } catch (err) {
        // Compacted already (an earlier attempt whose answer was lost, or auto-compaction got there first): done.
        if (!(err instanceof EtcdError && err.code === GrpcCode.OutOfRange)) throw err;
      }
      await c.wrote(`etcd compact ${a.revision}`);
      c.maintained?.({ kind: 'compacted', revision: a.revision, at: new Date() });
      c.event('Normal', 'Compacted', `compacted the keyspace to revision ${a.revision} (NOSPACE recovery); every member is defragmented next`);
      return { requeueAfter: 200 };
    }
    case 'defragment': {
      const endpoint = endpointOf(a.member);
      if (!endpoint) throw new StepError('MemberUnreachable', `${a.member} has no running pod to defragment`);
      const client = c.etcd.get(endpoint);
      // Timed around the call alone: this is how long the member served nobody.
      const started = performance.now();
      await client.defragment({ signal, timeoutMs: a.timeoutMs });
      const durationMs = Math.round(performance.now() - started);
      await c.wrote(`etcd defragment ${a.member}`);
      const after = await client.status({ signal }).then((st) => st.dbSize, () => undefined);
      c.maintained?.({ kind: 'defragmented', member: a.member, reason: a.reason, durationMs, dbSizeBefore: a.dbSize, ...(after !== undefined ? { dbSizeAfter: after } : {}), at: new Date() });
      const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(1)} MiB`;
      c.event('Normal', 'Defragmented', `defragmented ${a.member} (${a.reason}) in ${durationMs} ms: ${mib(a.dbSize)}${after !== undefined ? ` → ${mib(after)}` : ''}; it served no requests meanwhile`);
      return { requeueAfter: 500 };
    }
    case 'disarmAlarm': {
      const endpoint = endpointOf(a.via);
      if (!endpoint) throw new StepError('MemberUnreachable', `${a.via} has no running pod to disarm the alarm through`);
      for (const alarm of a.alarms) await c.etcd.get(endpoint).disarm({ memberId: alarm.memberId, alarm: alarm.alarm }, { signal });
      await c.wrote('etcd alarm disarm');
      c.event('Normal', 'AlarmDisarmed', `disarmed ${a.alarms.map((x) => `${x.alarm} (${x.member})`).join(', ')}: etcd accepts writes again`);
      return { requeueAfter: 500 };
    }
    case 'wait':
      return { requeueAfter: a.requeueAfterMs };
    case 'steady':
      return {};
  }
}

/** A refusal the operator itself finds (not etcd's nor the API server's), with its reason. */
export class StepError extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.name = 'StepError';
    this.reason = reason;
  }
}

/** A refused step as the report shows it: a reason for the metric, and the refusal in its own words. */
export function describeFailure(step: string, err: unknown): StepFailure {
  if (err instanceof MembershipRefusedError) return { step, reason: err.reason, message: err.detail, refusedEverywhere: err.everywhere };
  if (err instanceof LearnerNotReadyError) return { step, reason: 'LearnerNotCaughtUp', message: `etcd refused: ${err.etcdMessage}`, refusedEverywhere: false };
  if (err instanceof EtcdError) return { step, reason: 'EtcdRefused', message: `etcd refused: ${err.etcdMessage}`, refusedEverywhere: false };
  if (err instanceof EtcdUnavailableError) return { step, reason: 'EtcdUnavailable', message: err.message, refusedEverywhere: false };
  if (err instanceof ApiError) return { step, reason: err.reason || `HTTP${err.code}`, message: `Kubernetes refused: ${err.status.message ?? err.message}`, refusedEverywhere: false };
  if (err instanceof StepError || err instanceof TLSNotReadyError) return { step, reason: err.reason, message: err.message, refusedEverywhere: false };
  return { step, reason: 'Error', message: err instanceof Error ? err.message : String(err), refusedEverywhere: false };
}

function ignoreNotFound(err: unknown): void {
  if (!(err instanceof NotFoundError)) throw err;
}

/** The minor ("3.5") etcd has a downgrade enabled to, from a member's status; undefined when none is (or 3.5, which does not say). */
function downgradeEnabledTo(status: EtcdStatus): string | undefined {
  const d = status.downgrade;
  return d?.enabled && d.targetVersion ? d.targetVersion.split('.').slice(0, 2).join('.') : undefined;
}
