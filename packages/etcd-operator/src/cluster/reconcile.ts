// The EtcdCluster reconciler: observe (caches + etcd), decide the one next step (plan.ts), take it, and
// record status. Every step is idempotent and each is recorded where the next reconcile reads it (in
// etcd's membership or in Kubernetes), so the operator may die between any two calls.
import {
  AlreadyExistsError,
  applyIfChanged,
  NotFoundError,
  PersistentVolumeClaims,
  PodDisruptionBudgets,
  Pods,
  Services,
  type Client,
  type EventRecorder,
  type Informer,
  type KubeObject,
  type OpenObject,
  type Reconciler,
  type Result,
} from '@quorum/runtime';
import { EtcdClusters } from '../resources.ts';
import { LearnerNotReadyError, UnhealthyClusterError } from '../etcd/errors.ts';
import { applyDefaults, validateSpec, type EtcdCluster } from './spec.ts';
import { clientService, memberPVC, memberPod, peerService, podDisruptionBudget } from './resources.ts';
import { FIELD_MANAGER, LABELS, memberIndex, pdbName, peerURL, pvcName, clientServiceName, peerServiceName } from './names.ts';
import { observeEtcd, observePod, type EtcdClients, type PodObject } from './observe.ts';
import { nextIndex, plan, type Action, type Observed } from './plan.ts';
import { actionMessage, buildStatus, type StatusShape } from './status.ts';

export interface ReconcilerDeps {
  client: Client;
  clusters: Informer<EtcdCluster>;
  pods: Informer<OpenObject>;
  pvcs: Informer<OpenObject>;
  services: Informer<OpenObject>;
  pdbs: Informer<OpenObject>;
  etcd: EtcdClients;
  events: EventRecorder;
  crashLoopGraceMs: number;
  /** Test hook: called after every etcd or Kubernetes write the reconciler makes (failpoints). */
  afterWrite?: (what: string) => Promise<void> | void;
}

const STEADY_RESYNC_MS = 30_000;

export function etcdClusterReconciler(deps: ReconcilerDeps): Reconciler {
  const crashSince = new Map<string, number>();
  const wrote = async (what: string): Promise<void> => {
    await deps.afterWrite?.(what);
  };

  return async ({ namespace, name }, { signal, log }): Promise<Result> => {
    const cluster = deps.clusters.store.get(`${namespace}/${name}`);
    if (!cluster || cluster.metadata.deletionTimestamp) return {};
    const previous = cluster.status as StatusShape | undefined;
    const now = new Date();
    const selector = (o: KubeObject): boolean => o.metadata.labels?.[LABELS.instance] === name && o.metadata.labels?.[LABELS.managedBy] === 'quorum';
    const pods = deps.pods.store.byIndex('namespace', namespace).filter(selector) as PodObject[];
    const pvcs = deps.pvcs.store.byIndex('namespace', namespace).filter(selector);

    const writeStatus = async (status: StatusShape): Promise<void> => {
      if (sameStatus(previous, status)) return;
      await deps.client.mergePatch(EtcdClusters, { namespace, name }, { status }, { subresource: 'status', fieldManager: FIELD_MANAGER, signal });
    };

    // Invalid specs (possible when the webhooks are off) are reported and change nothing.
    const errors = validateSpec(cluster.spec ?? {}, undefined).filter((e) => !e.warning);
    if (errors.length > 0) {
      const invalid = errors.map((e) => e.message).join('; ');
      await writeStatus(buildStatus({ ...base(), pods: [], etcd: { membership: undefined, health: [] }, action: { type: 'steady' }, invalid }));
      log.warn({ invalid }, 'invalid spec: nothing changed');
      return {};
    }
    const spec = applyDefaults(cluster.spec ?? {});

    // The Services and the PDB are applied whenever they differ from what the cache holds.
    const apply = async (type: typeof Services, desired: KubeObject, cached: KubeObject | undefined): Promise<void> => {
      const { applied } = await applyIfChanged(deps.client, type, desired, cached, { fieldManager: FIELD_MANAGER, force: true, signal });
      if (applied) await wrote(`apply ${desired.kind} ${desired.metadata.name}`);
    };
    // Paused means no change at all, to these objects too.
    if (!spec.paused) {
      await apply(Services, peerService(cluster), deps.services.store.get(`${namespace}/${peerServiceName(name)}`));
      await apply(Services, clientService(cluster), deps.services.store.get(`${namespace}/${clientServiceName(name)}`));
      const pdb = deps.pdbs.store.get(`${namespace}/${pdbName(name)}`);
      if (spec.replicas >= 3) await apply(PodDisruptionBudgets, podDisruptionBudget(cluster), pdb);
      else if (pdb) await deps.client.delete(PodDisruptionBudgets, { namespace, name: pdbName(name) }).catch(ignoreNotFound);
    }

    const observedPods = pods.map((p) => {
      const o = observePod(p, now.getTime(), crashSince.get(p.metadata.uid ?? ''));
      if (o.crashLoopingSince !== undefined) crashSince.set(p.metadata.uid ?? '', o.crashLoopingSince);
      else crashSince.delete(p.metadata.uid ?? '');
      return o;
    });
    const etcdView = await observeEtcd(name, namespace, pods, deps.etcd, signal);

    const observed: Observed = {
      cluster: name,
      replicas: spec.replicas,
      persistent: !spec.storage.emptyDir,
      reclaimPolicy: spec.storage.reclaimPolicy,
      pods: observedPods,
      pvcs: pvcs.filter((c) => !c.metadata.deletionTimestamp).map((c) => c.metadata.labels?.[LABELS.member] ?? ''),
      membership: etcdView.membership,
      lastKnownMembers: previous?.members?.map((m) => m.name) ?? [],
      bootstrapped: !!previous?.clusterID,
      bootstrapMembers: previous?.bootstrapMembers ?? [],
      nextMemberIndex: previous?.nextMemberIndex ?? 0,
      now: now.getTime(),
      crashLoopGraceMs: deps.crashLoopGraceMs,
    };
    const action: Action = spec.paused ? { type: 'wait', reason: 'Paused', detail: 'spec.paused is true', requeueAfterMs: STEADY_RESYNC_MS } : plan(observed);
    // Indexes already used, as observed; a member added below shows up in etcd's list from then on.
    const next = nextIndex(observed);
    // Status first: it says what is about to happen, so a crash right after the step still left a record.
    const status = buildStatus({ ...base(), pods: observedPods, etcd: etcdView, action, nextMemberIndex: next, paused: spec.paused });
    if (action.type === 'bootstrap') {
      status.bootstrapMembers = action.members;
      status.nextMemberIndex = Math.max(next, ...action.members.map((m) => (memberIndex(name, m) ?? 0) + 1));
    }
    await writeStatus(status);
    if (spec.paused) return { requeueAfter: STEADY_RESYNC_MS };
    if (action.type !== 'steady' && action.type !== 'wait') log.info({ step: action.type, member: 'member' in action ? action.member : undefined }, actionMessage(action));
    return execute(action);

    function base() {
      return {
        cluster: name,
        namespace,
        generation: cluster!.metadata.generation ?? 0,
        replicas: cluster!.spec?.replicas ?? 3,
        targetVersion: applyDefaultsSafe(cluster!).version,
        previous,
        nextMemberIndex: previous?.nextMemberIndex ?? 0,
        paused: false,
        now,
      };
    }

    async function ensurePVC(member: string): Promise<void> {
      if (spec.storage.emptyDir || pvcs.some((c) => c.metadata.name === pvcName(member))) return;
      try {
        await deps.client.create(PersistentVolumeClaims, memberPVC(cluster!, spec, member), { fieldManager: FIELD_MANAGER, signal });
        await wrote(`create pvc ${member}`);
      } catch (err) {
        if (!(err instanceof AlreadyExistsError)) throw err;
      }
    }

    async function createPod(member: string, state: 'new' | 'existing', initialMembers: string[]): Promise<void> {
      await ensurePVC(member);
      const initialCluster = initialMembers.map((m) => `${m}=${peerURL(name, namespace, m)}`);
      try {
        await deps.client.create(Pods, memberPod(cluster!, spec, { member, initialClusterState: state, initialCluster }), { fieldManager: FIELD_MANAGER, signal });
        await wrote(`create pod ${member}`);
      } catch (err) {
        if (!(err instanceof AlreadyExistsError)) throw err;
      }
    }

    function event(type: 'Normal' | 'Warning', reason: string, note: string): void {
      deps.events.record(cluster!, { type, reason, action: reason, note });
    }

    async function execute(a: Action): Promise<Result> {
      try {
        return await step(a);
      } catch (err) {
        // etcd refuses membership changes until every voter has been connected for a few seconds.
        if (err instanceof UnhealthyClusterError) return { requeueAfter: 1000 };
        throw err;
      }
    }

    async function step(a: Action): Promise<Result> {
      const leader = etcdView.leaderEndpoint ?? etcdView.endpoint;
      switch (a.type) {
        case 'bootstrap':
          for (const m of a.members) await createPod(m, 'new', a.members);
          event('Normal', 'ClusterBootstrapped', `started the initial members ${a.members.join(', ')}`);
          return { requeueAfter: 2000 };
        case 'createPod':
          await createPod(a.member, a.state, a.initialMembers);
          event('Normal', a.reason === 'MemberAdded' ? 'MemberPodCreated' : 'MemberPodRecreated', `created pod ${a.member} (${a.reason})`);
          return { requeueAfter: 2000 };
        case 'deletePod': {
          const pod = pods.find((p) => p.metadata.labels?.[LABELS.member] === a.member);
          await deps.client.delete(Pods, { namespace, name: a.member }, { preconditions: { uid: pod?.metadata.uid }, signal }).catch(ignoreNotFound);
          await wrote(`delete pod ${a.member}`);
          event(a.reason === 'PodFailed' ? 'Warning' : 'Normal', 'MemberPodDeleted', `deleted pod ${a.member} (${a.reason})`);
          return { requeueAfter: 1000 };
        }
        case 'deletePVC':
          await deps.client.delete(PersistentVolumeClaims, { namespace, name: pvcName(a.member) }, { signal }).catch(ignoreNotFound);
          await wrote(`delete pvc ${a.member}`);
          event('Normal', 'MemberClaimDeleted', `deleted the claim of former member ${a.member} (reclaimPolicy Delete)`);
          return { requeueAfter: 1000 };
        case 'addMember': {
          await deps.etcd.get(leader!).memberAdd([peerURL(name, namespace, a.member)], { learner: true, signal });
          await wrote(`etcd member add ${a.member}`);
          event('Normal', 'MemberAdded', `added ${a.member} as a learner`);
          return { requeueAfter: 500 };
        }
        case 'promoteMember':
          try {
            await deps.etcd.get(leader!).memberPromote(a.id, { signal });
          } catch (err) {
            if (err instanceof LearnerNotReadyError) return { requeueAfter: 1000 };
            throw err;
          }
          await wrote(`etcd member promote ${a.member}`);
          event('Normal', 'MemberPromoted', `promoted ${a.member} to a voting member`);
          return { requeueAfter: 500 };
        case 'removeMember':
          await deps.etcd.get(leader!).memberRemove(a.id, { signal });
          await wrote(`etcd member remove ${a.member}`);
          event(a.reason === 'ScaleDown' ? 'Normal' : 'Warning', 'MemberRemoved', `removed ${a.member} from the cluster (${a.reason})`);
          return { requeueAfter: 500 };
        case 'moveLeader':
          await deps.etcd.get(leader!).moveLeader(a.toId, { signal });
          await wrote(`etcd move leader ${a.toMember}`);
          event('Normal', 'LeaderMoved', `moved leadership to ${a.toMember}`);
          return { requeueAfter: 500 };
        case 'wait':
          return { requeueAfter: a.requeueAfterMs };
        case 'steady':
          return { requeueAfter: STEADY_RESYNC_MS };
      }
    }
  };
}

function applyDefaultsSafe(cluster: EtcdCluster): { version: string } {
  try {
    return applyDefaults(cluster.spec ?? {});
  } catch {
    return { version: cluster.spec?.version ?? '' };
  }
}

function ignoreNotFound(err: unknown): void {
  if (!(err instanceof NotFoundError)) throw err;
}

/** Status equality that ignores what setCondition keeps stable anyway (so unchanged status means no write). */
function sameStatus(a: StatusShape | undefined, b: StatusShape): boolean {
  return JSON.stringify(normalize(a)) === JSON.stringify(normalize(b));
}

function normalize(s: StatusShape | undefined): unknown {
  if (!s) return undefined;
  const sorted = (o: unknown): unknown =>
    Array.isArray(o) ? o.map(sorted) : o && typeof o === 'object' ? Object.fromEntries(Object.entries(o as Record<string, unknown>).sort(([x], [y]) => x.localeCompare(y)).map(([k, v]) => [k, sorted(v)])) : o;
  return sorted({ ...s, conditions: [...(s.conditions ?? [])].sort((x, y) => x.type.localeCompare(y.type)) });
}

