// Observation: everything the planner decides from, as one Observed, built from the informer caches (pods,
// claims, Secrets, backups), etcd (asked through the members' pods: observe-members.ts) and the cluster's own
// status (what earlier reconciles recorded). Reads only: nothing here writes.
import type { Informer, KubeObject } from '@quorum/runtime';
import type { EtcdBackup } from '../api/etcdbackup.ts';
import { checkCredentials, type CredentialsRefusal } from '../backup/credentials.ts';
import type { MaintenanceStatus } from '../api/etcdcluster.ts';
import { clientCASecretName, peerCASecretName, TLS_KEYS } from '../tls/secrets.ts';
import { DEFAULT_CLUSTER_DOMAIN } from '../tls/issue.ts';
import { DEFAULT_REFUSED_RESTART_MS, type ReconcilerDeps } from './deps.ts';
import { maintenanceStatus, observeSpace } from './maintenance.ts';
import type { ReconcilerMemory } from './memory.ts';
import { LABELS, type Scheme } from '../names.ts';
import { observeEtcd, observeLocalRevisions, observePeerActivity, observePod, type EtcdView, type PodObject } from './observe-members.ts';
import type { BackupCandidate, Observed, ObservedPod } from './plan/types.ts';
import { madeWithTLS, type RestoreSource } from './resources.ts';
import { observePreUpgradeBackup, observeRollout, type RolloutObservation } from './rollout.ts';
import type { DefaultedSpec, EtcdCluster } from './spec.ts';
import type { StatusShape } from './status.ts';
import { memberTLSStages, peerScheme, schemeOf, servedClientStage, type TLSStage } from '../tls/members.ts';
import { membersNotServedBy, membersWithSecrets, observeTLS, secretContents, type TLSObservation } from '../tls/cluster-secrets.ts';

export interface ObserveInput {
  deps: ReconcilerDeps;
  memory: ReconcilerMemory;
  cluster: EtcdCluster;
  spec: DefaultedSpec;
  previous: StatusShape | undefined;
  now: Date;
  signal: AbortSignal;
}

/** The Observed the planner reads, and what the report and the step need of the same reading. */
export interface Observation {
  observed: Observed;
  pods: PodObject[];
  pvcs: KubeObject[];
  observedPods: ObservedPod[];
  view: EtcdView;
  tls: TLSObservation | undefined;
  /** Members that have an operator-managed `<member>-tls` Secret. */
  memberSecrets: string[];
  rolling: RolloutObservation;
  /** status.maintenance with the last maintenance steps' results folded in. */
  maintenance: MaintenanceStatus | undefined;
  /** The members etcd's NOSPACE alarm is raised for. */
  noSpace: string[];
  peerSchemes: Map<string, Scheme>;
  stageOf: (member: string) => TLSStage;
}

export async function observe(i: ObserveInput): Promise<Observation> {
  const { deps, cluster, spec, previous, now, signal } = i;
  const name = cluster.metadata.name!;
  const namespace = cluster.metadata.namespace!;
  const selector = (o: KubeObject): boolean => o.metadata.labels?.[LABELS.instance] === name && o.metadata.labels?.[LABELS.managedBy] === 'quorum';
  const pods: PodObject[] = deps.pods.store.byIndex('namespace', namespace).filter(selector);
  const pvcs = deps.pvcs.store.byIndex('namespace', namespace).filter(selector);
  // What the reconciler kept of pods no longer in the cache (a replaced crash-looping member) is dropped here.
  i.memory.keepPods(`${namespace}/${name}`, pods.map((p) => p.metadata.uid ?? ''));
  const crashSince = i.memory.crashSince(`${namespace}/${name}`);
  const observedPods = pods.map((p) => {
    const uid = p.metadata.uid ?? '';
    const o = observePod(p, now.getTime(), crashSince.get(uid), deps.peerWaitImage);
    if (o.crashLoopingSince !== undefined) crashSince.set(uid, o.crashLoopingSince);
    else crashSince.delete(uid);
    return o;
  });
  const managedSecrets = (deps.secrets?.store.byIndex('namespace', namespace) ?? []).filter(selector);
  const memberSecrets = membersWithSecrets(managedSecrets, name);
  const tls = await observeTLS({
    client: deps.client,
    cluster,
    spec,
    cached: (secretName) => managedSecrets.find((s) => s.metadata.name === secretName),
    podMembers: observedPods.filter((p) => !p.deleting).map((p) => p.member),
    memberSecrets,
    podsWithTLS: pods.some(madeWithTLS),
    clusterDomain: deps.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN,
    now,
  });
  if (tls) await observeCARotation(i, tls, managedSecrets, pods);
  const view = await observeEtcd(name, namespace, pods, deps.etcd, signal, tls?.credentials);
  // Each member's TLS stage: where plaintext to TLS in place stands for it (tls/members.ts desiredTLSStage).
  const peerSchemes = new Map<string, Scheme>(
    view.membership
      ? view.membership.members.map((m) => [m.member, m.peerScheme ?? peerScheme(spec)])
      : (previous?.members ?? []).map((m) => [m.name, schemeOf(m.peerURL)]),
  );
  const stageOf = memberTLSStages(spec, pods.map((p) => ({ member: p.metadata.labels?.[LABELS.member] ?? '', servedClient: servedClientStage(p), deleting: !!p.metadata.deletionTimestamp })), peerSchemes);
  const rolling = await observeRollout(cluster, spec, previous, pods, view, deps.etcd, signal, tls?.credentials, tls?.caBundles, stageOf);
  // status.maintenance with the last maintenance step's results folded in: what the plan must see as done.
  const noSpace = [...new Set(view.health.flatMap((h) => (h.alarms ?? []).filter((a) => a.alarm === 'NOSPACE').map((a) => view.membership?.members.find((m) => m.id === a.memberId)?.member ?? a.memberId)))];
  const maintenance = maintenanceStatus(previous?.maintenance, i.memory.takeMaintained(`${namespace}/${name}`), noSpace.length > 0, view.membership?.members.map((m) => m.member), now);
  const seen = { pods, pvcs, observedPods, view, tls, memberSecrets, rolling, maintenance, noSpace, peerSchemes, stageOf };
  return { ...seen, observed: await observedOf(i, seen) };
}

/**
 * A CA rotation past Reissue drops the old CA only once every member serves a certificate of the new one:
 * asked by a handshake with each, and only once the overlap has passed (not every resync of a week's overlap).
 */
async function observeCARotation(i: ObserveInput, tls: TLSObservation, managedSecrets: KubeObject[], pods: PodObject[]): Promise<void> {
  const rotation = tls.observed.caRotation;
  const overlapMs = i.deps.caRotationOverlapMs ?? 0;
  const overlapOver = rotation?.rotatedAt === undefined || i.now.getTime() - rotation.rotatedAt >= overlapMs;
  if (rotation?.phase !== 'Reissue' || !overlapOver) return;
  const name = i.cluster.metadata.name!;
  const newCA = secretContents(managedSecrets.find((s) => s.metadata.name === (rotation.ca === 'peer' ? peerCASecretName(name) : clientCASecretName(name))))?.[TLS_KEYS.certificate];
  const live = pods.filter((p) => !p.metadata.deletionTimestamp);
  if (newCA) rotation.notServedByNew = await membersNotServedBy(live, name, i.cluster.metadata.namespace!, rotation.ca, newCA, tls.credentials);
  tls.observed.caOverlapMs = overlapMs;
}

/** The planner's input, from the reading and the status earlier reconciles recorded. */
async function observedOf(i: ObserveInput, seen: Omit<Observation, 'observed'>): Promise<Observed> {
  const { deps, cluster, spec, previous, now, signal } = i;
  const { pods, view, rolling, tls } = seen;
  const name = cluster.metadata.name!;
  const namespace = cluster.metadata.namespace!;
  const policy = spec.disasterRecovery?.policy ?? 'Manual';
  const ongoing = previous?.recovery && !previous.recovery.completedAt ? previous.recovery : undefined;
  // A Backup recovery's recorded snapshot, with the SHA-256 its members check (newestBackupOf offers only backups
  // that recorded one); a source recorded without one, by an older operator, is not restored from.
  const recorded = ongoing?.source?.sha256 ? { ...ongoing.source, sha256: ongoing.source.sha256 } : undefined;
  // Survivors' own revisions matter only when the cluster has lost its quorum and may restore itself.
  const localRevisions = !view.membership && previous?.clusterID && policy === 'Restore' && !ongoing ? await observeLocalRevisions(name, namespace, pods, deps.etcd, signal, tls?.credentials) : undefined;
  const refusedSince = previous?.step?.refusedEverywhereSince;
  const createdAt = cluster.metadata.creationTimestamp ? Date.parse(cluster.metadata.creationTimestamp) : undefined;
  const preBackup = observePreUpgradeBackup(name, namespace, spec, rolling.rollout.record, deps.backups, view.health.map((h) => h.dbSize ?? 0));
  return {
    cluster: name,
    replicas: spec.replicas,
    persistent: !spec.storage.emptyDir,
    reclaimPolicy: spec.storage.reclaimPolicy,
    pods: seen.observedPods,
    pvcs: seen.pvcs.filter((c) => !c.metadata.deletionTimestamp).map((c) => c.metadata.labels?.[LABELS.member] ?? ''),
    membership: rolling.membership,
    unreachable: view.unreachable,
    lastKnownMembers: previous?.members?.map((m) => m.name) ?? [],
    bootstrapped: !!previous?.clusterID,
    bootstrapMembers: previous?.bootstrapMembers ?? [],
    nextMemberIndex: previous?.nextMemberIndex ?? 0,
    now: now.getTime(),
    crashLoopGraceMs: deps.crashLoopGraceMs,
    stuckTerminatingReplaceMs: spec.replaceStuckMemberAfterSeconds * 1000,
    refusedRestartMs: deps.refusedRestartMs ?? DEFAULT_REFUSED_RESTART_MS,
    // The snapshot new members restore: a recovery's backup, or spec.bootstrap's for a new cluster.
    ...(ongoing?.method === 'Backup' && recorded && !previous?.clusterID
      ? { restore: { ready: true as const, source: recorded } }
      : spec.bootstrap && !previous?.clusterID ? { restore: await withCredentials(restoreSource(spec.bootstrap.fromBackup, namespace, deps.backups), (d) => checkCredentials(deps.client, namespace, d, signal)) } : {}),
    disasterRecovery: policy,
    ...(localRevisions ? { localRevisions } : {}),
    ...(policy === 'Restore' ? newestBackupOf(name, namespace, deps.backups) : {}),
    ...(ongoing ? { recovery: { method: ongoing.method, from: ongoing.from, ...(recorded ? { source: recorded } : {}) } } : {}),
    // Peer views are read only while a change is being refused everywhere: they are what explains it.
    ...(refusedSince && view.membership
      ? { refused: { since: Date.parse(refusedSince), activePeers: await observePeerActivity(pods, view.membership, signal), restarts: previous?.step?.restarts ?? 0 } }
      : {}),
    rollout: { ...rolling.rollout, ...(preBackup ? { preBackup } : {}) },
    ...(tls ? { tls: tls.observed } : {}),
    space: observeSpace(spec, createdAt, view, seen.maintenance, now.getTime()),
  };
}

/** The newest Succeeded EtcdBackup of this cluster (by revision), as a Restore recovery would use it. */
function newestBackupOf(cluster: string, namespace: string, backups: Pick<Informer<EtcdBackup>, 'store'> | undefined): { newestBackup?: BackupCandidate } {
  const done = (backups?.store.byIndex('namespace', namespace) ?? []).filter((b) => b.spec.clusterName === cluster && b.status?.phase === 'Succeeded' && b.status.key && b.status.sha256);
  const newest = done.sort((a, b) => (b.status?.revision ?? 0) - (a.status?.revision ?? 0))[0];
  if (!newest?.status) return {};
  const s = newest.status;
  return { newestBackup: { name: newest.metadata.name!, revision: String(s.revision ?? 0), ...(s.completedAt ? { completedAt: s.completedAt } : {}), source: { destination: newest.spec.destination, key: s.key!, sha256: s.sha256! } } };
}

/** Why a snapshot source cannot be restored yet, or at all (plan/recovery.ts waits with the reason). */
export type RestoreSourceRefusal = { ready: false; reason: 'BackupNotReady' | 'SnapshotHashMissing' | CredentialsRefusal['reason']; why: string };

/**
 * A ready source whose credentials Secret the members' init containers may mount (the kit's label check: the
 * validating webhook also checks that its author may read the Secret, but webhooks fail open, and the operator's
 * identity is what mounts it); otherwise the refusal, which the cluster waits on with its reason.
 */
export async function withCredentials(
  restore: { ready: true; source: RestoreSource } | RestoreSourceRefusal,
  check: (destination: RestoreSource['destination']) => Promise<CredentialsRefusal | undefined>,
): Promise<{ ready: true; source: RestoreSource } | RestoreSourceRefusal> {
  if (!restore.ready) return restore;
  const refusal = await check(restore.source.destination);
  return refusal ? { ready: false, reason: refusal.reason, why: `spec.bootstrap.fromBackup: ${refusal.message}` } : restore;
}

/**
 * The snapshot spec.bootstrap.fromBackup names: given directly, or a Succeeded EtcdBackup's; always with the
 * SHA-256 the members check it against before etcd starts. A source without one is refused: the CRD refuses it
 * at once since issue 23, and a cluster written before (or a backup taken by an older operator) waits here.
 */
export function restoreSource(
  from: NonNullable<EtcdCluster['spec']['bootstrap']>['fromBackup'],
  namespace: string,
  backups: Pick<Informer<EtcdBackup>, 'store'> | undefined,
): { ready: true; source: RestoreSource } | RestoreSourceRefusal {
  if (from.destination && from.key) {
    if (!from.sha256) return { ready: false, reason: 'SnapshotHashMissing', why: 'spec.bootstrap.fromBackup names destination and key without sha256: no member restores a snapshot it cannot check; create the cluster again with sha256, or with backupName' };
    return { ready: true, source: { destination: from.destination, key: from.key, sha256: from.sha256 } };
  }
  const name = from.backupName ?? '';
  const backup = backups?.store.get(`${namespace}/${name}`);
  if (!backup) return { ready: false, reason: 'BackupNotReady', why: `EtcdBackup ${name} does not exist in namespace ${namespace}` };
  const s = backup.status;
  if (s?.phase === 'Failed') return { ready: false, reason: 'BackupNotReady', why: `EtcdBackup ${name} failed, so there is nothing to restore: ${s.conditions?.find((c) => c.type === 'Failed')?.message ?? ''}` };
  if (s?.phase !== 'Succeeded' || !s.key) return { ready: false, reason: 'BackupNotReady', why: `EtcdBackup ${name} has not succeeded yet (phase ${s?.phase ?? 'Pending'})` };
  if (!s.sha256) return { ready: false, reason: 'SnapshotHashMissing', why: `EtcdBackup ${name} succeeded without recording a sha256 (status.sha256): no member restores a snapshot it cannot check; restore from another backup` };
  return { ready: true, source: { destination: backup.spec.destination, key: s.key, sha256: s.sha256 } };
}
