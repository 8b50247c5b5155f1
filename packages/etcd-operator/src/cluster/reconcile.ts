// The EtcdCluster reconciler: observe (caches + etcd), decide the one next step (plan.ts), report it
// (status first, so a crash right after the step still left a record), take it (act.ts). A step that is
// refused is retried with a voice (progress.ts): status, events, a metric and a warn log say what and why.
import {
  ApiError,
  applyIfChanged,
  NotFoundError,
  PodDisruptionBudgets,
  Services,
  type Client,
  type EventRecorder,
  type Informer,
  type KubeObject,
  type Logger,
  type OpenObject,
  type Reconciler,
  type Result,
} from '@quorum/runtime';
import { EtcdClusters } from '../resources.ts';
import type { EtcdBackup } from '../api/etcdbackup.ts';
import type { TlsStatus } from '../api/etcdcluster.ts';
import type { RestoreSource } from './resources.ts';
import { act, describeFailure, type MaintenanceResult } from './act/index.ts';
import { maintenanceStatus, observeSpace } from './maintenance.ts';
import { applyDefaults, validateSpec, type DefaultedSpec, type EtcdCluster } from './spec.ts';
import { clientService, madeWithTLS, peerService, podDisruptionBudget } from './resources.ts';
import { FIELD_MANAGER, LABELS, memberIndex, pdbName, clientServiceName, peerServiceName, type Scheme } from './names.ts';
import { memberTLSStages, peerScheme, schemeOf, servedClientStage } from './tls.ts';
import { observeEtcd, observeLocalRevisions, observePeerActivity, observePod, type EtcdClients, type PodObject } from './observe.ts';
import { nextIndex, plan, type Action, type BackupCandidate, type Observed, type ObservedTLS, type PreUpgradeBackup, type RolloutRecord } from './plan/index.ts';
import { DEFAULT_STEP_DEADLINE_MS, nextStep, retryDelayMs, stepAgeMs, STEP_WARN_MS, formatAge, progressMessage, type StepFailure, type StepRecord } from './progress.ts';
import { observePreUpgradeBackup, observeRollout } from './rollout.ts';
import { membersNotServedBy, membersWithSecrets, observeTLS, secretContents } from './tls-secrets.ts';
import { clientCASecretName, peerCASecretName, TLS_KEYS } from '../tls/secrets.ts';
import { DEFAULT_CLUSTER_DOMAIN } from '../tls/issue.ts';
import { actionMessage, buildStatus, type StatusShape } from './status.ts';

/** Counts each retry of a step: `quorum_etcdcluster_step_retries_total{step,reason}`. */
export interface StepMetrics {
  stepRetried(step: string, reason: string): void;
  /** A member was defragmented: `quorum_etcdcluster_defrag_last_duration_seconds`, `quorum_etcdcluster_defrags_total`. */
  defragmented?(namespace: string, cluster: string, member: string, reason: string, seconds: number): void;
  /** Whether etcd's NOSPACE alarm is raised: `quorum_etcdcluster_alarm{alarm="NOSPACE"}` (1 or 0). */
  alarm?(namespace: string, cluster: string, alarm: string, raised: boolean): void;
}

export interface ReconcilerDeps {
  client: Client;
  clusters: Pick<Informer<EtcdCluster>, 'store'>;
  pods: Pick<Informer<OpenObject>, 'store'>;
  pvcs: Pick<Informer<OpenObject>, 'store'>;
  services: Pick<Informer<OpenObject>, 'store'>;
  pdbs: Pick<Informer<OpenObject>, 'store'>;
  /** The operator's own Secrets (label managed-by=quorum): a TLS cluster's CAs and certificates. */
  secrets?: Pick<Informer<OpenObject>, 'store'>;
  /** The cluster domain member certificates name (CLUSTER_DOMAIN, default cluster.local). */
  clusterDomain?: string;
  etcd: EtcdClients;
  events: Pick<EventRecorder, 'record'>;
  crashLoopGraceMs: number;
  /** How long the old CA stays trusted once a CA rotation signs with the new one (CA_ROTATION_OVERLAP_SECONDS). */
  caRotationOverlapMs?: number;
  /** The image of the init container that waits for peer names to resolve; none when empty. */
  peerWaitImage?: string;
  /** The backup agent's image (the operator's own): a restored member's pod downloads its snapshot with it. */
  agentImage?: string;
  /** EtcdBackups, to resolve spec.bootstrap.fromBackup.backupName. */
  backups?: Pick<Informer<EtcdBackup>, 'store'>;
  /** A step's bound: past it, Progressing=False (ProgressDeadlineExceeded) and Degraded=True. */
  stepDeadlineMs?: number;
  /** How long a membership change may be refused by every member before a stale peer is restarted. */
  refusedRestartMs?: number;
  metrics?: StepMetrics;
  /** The clock (tests move it forward to cross a step's bounds). */
  now?: () => Date;
  /** Test hook: called after every etcd or Kubernetes write the reconciler makes (failpoints). */
  afterWrite?: (what: string) => Promise<void> | void;
}

const STEADY_RESYNC_MS = 30_000;
/** How long a membership change may be refused by every member before a stale peer is restarted. */
const DEFAULT_REFUSED_RESTART_MS = 120_000;

export function etcdClusterReconciler(deps: ReconcilerDeps): Reconciler {
  const crashSince = new Map<string, number>();
  // Per pod UID, the crash already reported (its message): one Warning per distinct crash, forgotten with the crash.
  const crashReported = new Map<string, string>();
  // The refusal of each cluster's last attempt, reported by its next reconcile (then forgotten).
  const failures = new Map<string, StepFailure>();
  const lastWarnLog = new Map<string, number>();
  // What each cluster's last maintenance step did (act learns it after the status write): for its next status.
  const maintained = new Map<string, MaintenanceResult[]>();
  const stepDeadlineMs = deps.stepDeadlineMs ?? DEFAULT_STEP_DEADLINE_MS;

  return async ({ namespace, name }, { signal, log }): Promise<Result> => {
    const key = `${namespace}/${name}`;
    const cluster = deps.clusters.store.get(key);
    if (!cluster || cluster.metadata.deletionTimestamp) {
      // A cluster that is gone leaves nothing behind in the reconciler's memory.
      failures.delete(key);
      lastWarnLog.delete(key);
      maintained.delete(key);
      return {};
    }
    const previous = cluster.status as StatusShape | undefined;
    const now = deps.now?.() ?? new Date();
    const event = (type: 'Normal' | 'Warning', reason: string, note: string): void => deps.events.record(cluster, { type, reason, action: reason, note });
    const writeStatus = async (status: StatusShape): Promise<void> => {
      if (sameStatus(previous, status)) return;
      // A JSON merge patch merges objects key by key: a record that replaces another (a new step, a rollout
      // that is no longer halted) must remove the keys it no longer has, or the old ones would stay.
      const patch = {
        ...status,
        step: replacing(previous?.step, status.step),
        clusterID: status.clusterID ?? null,
        rollout: replacing(previous?.rollout, status.rollout),
        // NOSPACE cleared: maintenance.noSpace goes.
        ...(status.maintenance || previous?.maintenance ? { maintenance: replacing(previous?.maintenance, status.maintenance) } : {}),
        // A side's caRotation goes once its rotation is over: each side is replaced, not merged.
        ...(status.tls || previous?.tls ? { tls: status.tls ? { ...status.tls, peer: replacing(previous?.tls?.peer, status.tls.peer), client: replacing(previous?.tls?.client, status.tls.client) } : null } : {}),
      };
      await deps.client.mergePatch(EtcdClusters, { namespace, name }, { status: patch }, { subresource: 'status', fieldManager: FIELD_MANAGER, signal });
    };

    // Invalid specs (possible when the webhooks are off) are reported and change nothing.
    const errors = validateSpec(cluster.spec ?? {}, undefined).filter((e) => !e.warning);
    if (errors.length > 0) {
      const invalid = errors.map((e) => e.message).join('; ');
      await writeStatus(buildStatus({ ...base(cluster, previous, now), pods: [], etcd: { membership: undefined, health: [], unreachable: [] }, action: { type: 'steady' }, invalid }));
      log.warn({ invalid }, 'invalid spec: nothing changed');
      return {};
    }
    const spec = applyDefaults(cluster.spec ?? {});
    if (!spec.paused) await applyClusterObjects(deps, cluster, spec.replicas, signal);

    // ---- observe ----
    const selector = (o: KubeObject): boolean => o.metadata.labels?.[LABELS.instance] === name && o.metadata.labels?.[LABELS.managedBy] === 'quorum';
    const pods = deps.pods.store.byIndex('namespace', namespace).filter(selector) as PodObject[];
    const pvcs = deps.pvcs.store.byIndex('namespace', namespace).filter(selector);
    const observedPods = pods.map((p) => {
      const uid = p.metadata.uid ?? '';
      const o = observePod(p, now.getTime(), crashSince.get(uid), deps.peerWaitImage);
      if (o.crashLoopingSince !== undefined) crashSince.set(uid, o.crashLoopingSince);
      else crashSince.delete(uid);
      return o;
    });
    const domain = deps.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN;
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
      clusterDomain: domain,
      now,
    });
    const credentials = tls?.credentials;
    // A CA rotation past Reissue drops the old CA only once every member serves a certificate of the new one:
    // asked by a handshake with each, and only once the overlap has passed (not every resync of a week's overlap).
    const rotation = tls?.observed.caRotation;
    const overlapOver = rotation?.rotatedAt === undefined || now.getTime() - rotation.rotatedAt >= (deps.caRotationOverlapMs ?? 0);
    if (tls && rotation?.phase === 'Reissue' && overlapOver) {
      const newCA = secretContents(managedSecrets.find((s) => s.metadata.name === (rotation.ca === 'peer' ? peerCASecretName(name) : clientCASecretName(name))))?.[TLS_KEYS.certificate];
      const live = pods.filter((p) => !p.metadata.deletionTimestamp);
      if (newCA) rotation.notServedByNew = await membersNotServedBy(live, name, namespace, rotation.ca, newCA, credentials);
      tls.observed.caOverlapMs = deps.caRotationOverlapMs ?? 0;
    }
    const view = await observeEtcd(name, namespace, pods, deps.etcd, signal, credentials);
    // Each member's TLS stage: where plaintext to TLS in place stands for it (tls.ts desiredTLSStage).
    const peerSchemes = new Map<string, Scheme>(
      view.membership
        ? view.membership.members.map((m) => [m.member, m.peerScheme ?? peerScheme(spec)])
        : (previous?.members ?? []).map((m) => [m.name, schemeOf(m.peerURL)]),
    );
    const stageOf = memberTLSStages(spec, pods.map((p) => ({ member: p.metadata.labels?.[LABELS.member] ?? '', servedClient: servedClientStage(p), deleting: !!p.metadata.deletionTimestamp })), peerSchemes);
    const rolling = await observeRollout(cluster, spec, previous, pods, view, deps.etcd, signal, credentials, tls?.caBundles, stageOf);
    const refusedSince = previous?.step?.refusedEverywhereSince;
    const preBackupOf = (record: RolloutRecord | undefined): { preBackup?: PreUpgradeBackup } => preBackupOfCluster(name, namespace, spec, record, deps.backups, view.health.map((h) => h.dbSize ?? 0));
    const policy = spec.disasterRecovery?.policy ?? 'Manual';
    const ongoing = previous?.recovery && !previous.recovery.completedAt ? previous.recovery : undefined;
    // Survivors' own revisions matter only when the cluster has lost its quorum and may restore itself.
    const localRevisions = !view.membership && previous?.clusterID && policy === 'Restore' && !ongoing ? await observeLocalRevisions(name, namespace, pods, deps.etcd, signal, credentials) : undefined;
    // status.maintenance with the last maintenance step's results folded in: what the plan must see as done.
    const noSpace = [...new Set(view.health.flatMap((h) => (h.alarms ?? []).filter((a) => a.alarm === 'NOSPACE').map((a) => view.membership?.members.find((m) => m.id === a.memberId)?.member ?? a.memberId)))];
    const maintenance = maintenanceStatus(previous?.maintenance, maintained.get(key) ?? [], noSpace.length > 0, view.membership?.members.map((m) => m.member), now);
    maintained.delete(key);
    const createdAt = cluster.metadata.creationTimestamp ? Date.parse(cluster.metadata.creationTimestamp) : undefined;
    const observed: Observed = {
      cluster: name,
      replicas: spec.replicas,
      persistent: !spec.storage.emptyDir,
      reclaimPolicy: spec.storage.reclaimPolicy,
      pods: observedPods,
      pvcs: pvcs.filter((c) => !c.metadata.deletionTimestamp).map((c) => c.metadata.labels?.[LABELS.member] ?? ''),
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
      ...(ongoing?.method === 'Backup' && ongoing.source && !previous?.clusterID
        ? { restore: { ready: true as const, source: ongoing.source } }
        : spec.bootstrap && !previous?.clusterID ? { restore: restoreSource(spec.bootstrap.fromBackup, namespace, deps.backups) } : {}),
      disasterRecovery: policy,
      ...(localRevisions ? { localRevisions } : {}),
      ...(policy === 'Restore' ? newestBackupOf(name, namespace, deps.backups) : {}),
      ...(ongoing ? { recovery: { method: ongoing.method, from: ongoing.from, ...(ongoing.source ? { source: ongoing.source } : {}) } } : {}),
      // Peer views are read only while a change is being refused everywhere: they are what explains it.
      ...(refusedSince && view.membership
        ? { refused: { since: Date.parse(refusedSince), activePeers: await observePeerActivity(pods, view.membership, signal), restarts: previous?.step?.restarts ?? 0 } }
        : {}),
      rollout: { ...rolling.rollout, ...preBackupOf(rolling.rollout.record) },
      ...(tls ? { tls: tls.observed } : {}),
      space: observeSpace(spec, createdAt, view, maintenance, now.getTime()),
    };

    // ---- plan ----
    const action: Action = spec.paused ? { type: 'wait', reason: 'Paused', detail: 'spec.paused is true', requeueAfterMs: STEADY_RESYNC_MS } : plan(observed);
    const step = nextStep(previous?.step, action, failures.get(key), now);
    const failure = failures.get(key);
    failures.delete(key);

    // ---- report ----
    // The client scheme status advertises: https once every member serves it (plaintext to TLS in place).
    const servedClientScheme: Scheme = spec.tls?.client && pods.filter((p) => !p.metadata.deletionTimestamp).every((p) => servedClientStage(p) !== 'off') ? 'https' : 'http';
    const next = nextIndex(observed);
    // A wait about one member's gate has its own bound (the rollout's), longer than a step's default.
    const bound = action.type === 'wait' && action.boundMs !== undefined ? action.boundMs : stepDeadlineMs;
    // Before the status is built: the step's voice marks it (warned, stalled) in what status records.
    reportStep(key, log, event, previous?.step, step, action, failure, now, bound);
    const status = buildStatus({
      ...base(cluster, previous, now),
      pods: observedPods,
      etcd: view,
      action,
      nextMemberIndex: next,
      paused: spec.paused,
      ...(step ? { step } : {}),
      stepDeadlineMs: bound,
      outdated: rolling.rollout.outdated,
      ...(rolling.clusterVersion ? { clusterVersion: rolling.clusterVersion } : {}),
      ...(tls ? { tls: { status: withCARotation(tls.status, rotation, action, deps.caRotationOverlapMs ?? 0), clientScheme: servedClientScheme, peerScheme: tls.peerScheme, ...(tls.expiring ? { expiring: tls.expiring } : {}) } } : {}),
      ...(maintenance ? { maintenance } : {}),
      ...(noSpace.length > 0 ? { noSpace } : {}),
    });
    reportNoSpace(noSpace);
    if (action.type === 'startRecovery' && action.method === 'Backup') {
      // The old cluster ends here: a new one (new ID, new member names) is bootstrapped from the backup.
      delete status.clusterID;
      status.bootstrapMembers = [];
      status.members = [];
    }
    if (action.type === 'bootstrap') {
      status.bootstrapMembers = action.members;
      status.nextMemberIndex = Math.max(next, ...action.members.map((m) => (memberIndex(name, m) ?? 0) + 1));
    }
    reportCrashes(log, event, pods, observedPods);
    if (action.type === 'wait' && action.reason === 'QuorumLost' && previous?.step?.name !== step?.name) {
      event('Warning', 'QuorumLost', action.detail);
      log.warn({ cluster: name }, action.detail);
    }
    if (action.type === 'wait' && action.reason === 'TLSSecretInvalid') {
      const was = previous?.conditions?.find((c) => c.type === 'Degraded' && c.reason === 'TLSSecretInvalid');
      if (was?.status !== 'True' || was.message !== action.detail) {
        event('Warning', 'TLSSecretInvalid', action.detail);
        log.warn({ cluster: name }, action.detail);
      }
    }
    if (action.type === 'haltRollout') log.warn({ cluster: name, member: action.member, reason: action.reason }, `rolling update halted: ${action.message}`);
    if (previous?.rollout && !status.rollout) {
      event('Normal', 'RollingUpdateCompleted', `every member runs the spec (etcd ${status.currentVersion ?? spec.version}), each having passed its gate`);
    }
    const blocked = status.conditions?.find((c) => c.type === 'Degraded' && c.reason === 'UpgradeBlocked');
    const wasBlocked = previous?.conditions?.find((c) => c.type === 'Degraded' && c.reason === 'UpgradeBlocked');
    if (blocked && blocked.status === 'True' && blocked.message !== wasBlocked?.message) {
      event('Warning', 'UpgradeBlocked', blocked.message);
      log.warn({ cluster: name }, blocked.message);
    }
    if (status.recovery?.completedAt && !previous?.recovery?.completedAt) {
      const r = status.recovery;
      event('Normal', 'RecoveryCompleted', `serving again after recovering by ${r.method} from ${r.from}: data up to revision ${r.revision}${r.dataTime ? ` (${r.dataTime})` : ''}; writes after it were lost`);
    }
    await writeStatus(status);
    if (spec.paused) return { requeueAfter: STEADY_RESYNC_MS };

    // ---- act ----
    try {
      const result = await act(action, {
        client: deps.client, etcd: deps.etcd, cluster, spec, pods, pvcs, pdb: deps.pdbs.store.get(`${namespace}/${pdbName(name)}`), view, peerWaitImage: deps.peerWaitImage, agentImage: deps.agentImage, signal, event,
        wrote: async (what) => { await deps.afterWrite?.(what); },
        ...(tls ? { tls: { ...(credentials ? { credentials } : {}), clusterDomain: domain, mayIssueCA: memberSecrets.length === 0 && !pods.some(madeWithTLS), now, caBundles: tls.caBundles } } : {}),
        peerSchemes,
        tlsStage: stageOf,
        maintained: (r) => {
          maintained.set(key, [...(maintained.get(key) ?? []), r]);
          if (r.kind === 'defragmented') {
            deps.metrics?.defragmented?.(namespace, name, r.member, r.reason, r.durationMs / 1000);
            log.info({ member: r.member, reason: r.reason, durationMs: r.durationMs, dbSizeBefore: r.dbSizeBefore, dbSizeAfter: r.dbSizeAfter }, `defragmented ${r.member}`);
          }
        },
      });
      return action.type === 'steady' ? { requeueAfter: STEADY_RESYNC_MS } : { requeueAfter: retryDelayMs(step, now, result.requeueAfter ?? 1000) };
    } catch (err) {
      if (signal.aborted) throw err;
      const f = describeFailure(step?.name ?? action.type, err);
      failures.set(key, f);
      deps.metrics?.stepRetried(action.type, f.reason);
      // Kubernetes refusals (admission, quota) are news at once; etcd's are reported when they persist.
      if (err instanceof ApiError && failure?.message !== f.message) event('Warning', 'StepFailed', `${actionMessage(action)}: ${f.message}`);
      return { requeueAfter: retryDelayMs({ ...(step ?? { name: action.type, startedAt: now.toISOString() }), lastError: f.message }, now, 1000) };
    }

    // NOSPACE, raised or cleared: an event and a log line on the change only (Degraded says it while it lasts),
    // and the alarm's gauge every reconcile. Judged from the status record, which exists exactly while it is raised
    // (known only when a quorum answered: silence clears nothing).
    function reportNoSpace(raisedFor: string[]): void {
      if (!view.membership) return;
      deps.metrics?.alarm?.(namespace, name, 'NOSPACE', raisedFor.length > 0);
      const was = previous?.maintenance?.noSpace;
      if (raisedFor.length > 0 && !was) {
        const note = `etcd's NOSPACE alarm is raised (${raisedFor.join(', ')}): the cluster refuses writes; the operator compacts, defragments every member and disarms it`;
        event('Warning', 'NoSpace', note);
        log.warn({ cluster: name, members: raisedFor }, note);
      } else if (raisedFor.length === 0 && was) {
        const since = Date.parse(was.since);
        const note = `the NOSPACE alarm is no longer raised${Number.isFinite(since) ? ` (raised for ${formatAge(now.getTime() - since)})` : ''}: the cluster accepts writes again`;
        event('Normal', 'NoSpaceCleared', note);
        log.info({ cluster: name }, note);
      }
    }

    // A step's voice: info when it starts, then (while it repeats) a Warning event after STEP_WARN_MS and
    // past the bound, a warn log at most every STEP_WARN_MS, and a retry metric for every repeat.
    function reportStep(k: string, l: Logger, ev: typeof event, before: StepRecord | undefined, record: StepRecord | undefined, a: Action, f: StepFailure | undefined, at: Date, boundMs: number): void {
      if (!record) {
        lastWarnLog.delete(k);
        return;
      }
      const description = actionMessage(a);
      const fields = { step: record.name, ...(record.lastErrorReason ? { reason: record.lastErrorReason } : {}) };
      if (before?.name !== record.name) {
        if (a.type !== 'wait') l.info(fields, description);
        return;
      }
      if (!f && a.type === 'wait') deps.metrics?.stepRetried(a.type, a.reason);
      const age = stepAgeMs(record, at);
      const message = progressMessage(description, record, at);
      if (age >= STEP_WARN_MS && !record.warned) {
        record.warned = true;
        ev('Warning', 'StepRetrying', message);
      }
      if (age >= boundMs && !record.stalled) {
        record.stalled = true;
        ev('Warning', 'StepStalled', `no progress for ${formatAge(age)}: ${message}`);
      }
      if (age >= STEP_WARN_MS && at.getTime() - (lastWarnLog.get(k) ?? 0) >= STEP_WARN_MS) {
        lastWarnLog.set(k, at.getTime());
        l.warn({ ...fields, forSeconds: Math.round(age / 1000) }, message);
      }
    }

    function reportCrashes(l: Logger, ev: typeof event, raw: PodObject[], observedList: typeof observedPods): void {
      for (const [i, o] of observedList.entries()) {
        const uid = raw[i]!.metadata.uid ?? '';
        if (o.crashLoopingSince === undefined) {
          crashReported.delete(uid);
          continue;
        }
        const message = o.lastTermination?.message ?? '';
        if (crashReported.get(uid) === message) continue;
        crashReported.set(uid, message);
        const note = `${o.member} keeps exiting${o.lastTermination ? ` (exit code ${o.lastTermination.exitCode}): ${message}` : ''}`;
        ev('Warning', 'MembersCrashLooping', note);
        l.warn({ member: o.member, exitCode: o.lastTermination?.exitCode }, note);
      }
    }
  };
}

/** The rollout's backup before a version change, when spec.backup asks for one. */
function preBackupOfCluster(name: string, namespace: string, spec: DefaultedSpec, record: RolloutRecord | undefined, backups: Pick<Informer<EtcdBackup>, 'store'> | undefined, dbSizes: number[]): { preBackup?: PreUpgradeBackup } {
  const preBackup = observePreUpgradeBackup(name, namespace, spec, record, backups, dbSizes);
  return preBackup ? { preBackup } : {};
}

/** The newest Succeeded EtcdBackup of this cluster (by revision), as a Restore recovery would use it. */
function newestBackupOf(cluster: string, namespace: string, backups: Pick<Informer<EtcdBackup>, 'store'> | undefined): { newestBackup?: BackupCandidate } {
  const done = (backups?.store.byIndex('namespace', namespace) ?? []).filter((b) => b.spec.clusterName === cluster && b.status?.phase === 'Succeeded' && b.status.key && b.status.sha256);
  const newest = done.sort((a, b) => (b.status?.revision ?? 0) - (a.status?.revision ?? 0))[0];
  if (!newest?.status) return {};
  const s = newest.status;
  return { newestBackup: { name: newest.metadata.name!, revision: String(s.revision ?? 0), ...(s.completedAt ? { completedAt: s.completedAt } : {}), source: { destination: newest.spec.destination, key: s.key!, sha256: s.sha256! } } };
}

/** The snapshot spec.bootstrap.fromBackup names: given directly, or a Succeeded EtcdBackup's. */
export function restoreSource(
  from: NonNullable<EtcdCluster['spec']['bootstrap']>['fromBackup'],
  namespace: string,
  backups: Pick<Informer<EtcdBackup>, 'store'> | undefined,
): { ready: true; source: RestoreSource } | { ready: false; why: string } {
  if (from.destination && from.key) return { ready: true, source: { destination: from.destination, key: from.key, ...(from.sha256 ? { sha256: from.sha256 } : {}) } };
  const name = from.backupName ?? '';
  const backup = backups?.store.get(`${namespace}/${name}`);
  if (!backup) return { ready: false, why: `EtcdBackup ${name} does not exist in namespace ${namespace}` };
  const s = backup.status;
  if (s?.phase === 'Failed') return { ready: false, why: `EtcdBackup ${name} failed, so there is nothing to restore: ${s.conditions?.find((c) => c.type === 'Failed')?.message ?? ''}` };
  if (s?.phase !== 'Succeeded' || !s.key || !s.sha256) return { ready: false, why: `EtcdBackup ${name} has not succeeded yet (phase ${s?.phase ?? 'Pending'})` };
  return { ready: true, source: { destination: backup.spec.destination, key: s.key, sha256: s.sha256 } };
}

function base(cluster: EtcdCluster, previous: StatusShape | undefined, now: Date) {
  return {
    cluster: cluster.metadata.name!,
    namespace: cluster.metadata.namespace!,
    generation: cluster.metadata.generation ?? 0,
    replicas: cluster.spec?.replicas ?? 3,
    targetVersion: applyDefaultsSafe(cluster).version,
    previous,
    nextMemberIndex: previous?.nextMemberIndex ?? 0,
    paused: false,
    now,
  };
}

/** The Services and the PDB, applied whenever they differ from what the cache holds. Paused skips them too. */
async function applyClusterObjects(deps: ReconcilerDeps, cluster: EtcdCluster, replicas: number, signal: AbortSignal): Promise<void> {
  const namespace = cluster.metadata.namespace!;
  const name = cluster.metadata.name!;
  const apply = async (type: typeof Services, desired: KubeObject, cached: KubeObject | undefined): Promise<void> => {
    const { applied } = await applyIfChanged(deps.client, type, desired, cached, { fieldManager: FIELD_MANAGER, force: true, signal });
    if (applied) await deps.afterWrite?.(`apply ${desired.kind} ${desired.metadata.name}`);
  };
  await apply(Services, peerService(cluster), deps.services.store.get(`${namespace}/${peerServiceName(name)}`));
  await apply(Services, clientService(cluster), deps.services.store.get(`${namespace}/${clientServiceName(name)}`));
  const pdb = deps.pdbs.store.get(`${namespace}/${pdbName(name)}`);
  if (replicas >= 3) await apply(PodDisruptionBudgets, podDisruptionBudget(cluster), pdb);
  else if (pdb) await deps.client.delete(PodDisruptionBudgets, { namespace, name: pdbName(name) }).catch(ignoreNotFound);
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

/**
 * A status record as a JSON merge patch must send it to replace `before`: null when it is gone, and null for
 * each key it no longer has (a merge patch merges nested objects, and keeps what is not mentioned).
 */
function replacing<T extends object>(before: T | undefined, after: T | undefined): Record<string, unknown> | null {
  if (!after) return null;
  const removed = Object.keys(before ?? {}).filter((k) => !(k in after));
  return { ...Object.fromEntries(removed.map((k) => [k, null])), ...after };
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

/** status.tls with the CA rotation under way on its side, and what it waits for now. */
function withCARotation(status: TlsStatus, rotation: ObservedTLS['caRotation'], action: Action, overlapMs: number): TlsStatus {
  if (!rotation || rotation.phase === 'Start') return status;
  const side = status[rotation.ca];
  if (!side) return status;
  const since = rotation.rotatedAt !== undefined ? new Date(rotation.rotatedAt).toISOString() : undefined;
  const message =
    action.type === 'wait' && action.reason === 'CARotation' ? action.detail
      : rotation.phase === 'TrustNew' ? 'the members restart, one at a time, to trust the old and the new CA'
        : rotation.rotatedAt !== undefined && overlapMs > 0 ? `certificates are signed by the new CA; the old CA is trusted until ${new Date(rotation.rotatedAt + overlapMs).toISOString()}, then dropped`
          : 'certificates are signed by the new CA';
  return { ...status, [rotation.ca]: { ...side, caRotation: { phase: rotation.phase, ...(since && rotation.phase === 'Reissue' ? { since } : {}), message } } };
}
