// The operator process: a manager with the EtcdCluster, EtcdBackup, EtcdBackupSchedule and EtcdRestore
// controllers and the admission webhooks.
import type { V1Pod } from '@kubernetes/client-node';
import { webhookServing } from '@quorum/kit';
import {
  Manager,
  NetworkPolicies,
  PersistentVolumeClaims,
  PodDisruptionBudgets,
  Secrets,
  Pods,
  Services,
  annotationsChanged,
  generationChanged,
  labelsChanged,
  or,
  type KubeObject,
  type Logger,
  type ManagerOptions,
} from '@quorum/runtime';
import { etcdClusterReconciler, type ReconcilerDeps, type StepMetrics } from '../cluster/reconcile.ts';
import { EtcdClients } from '../etcd/clients.ts';
import { LABELS } from '../names.ts';
import { EtcdBackupSchedules, EtcdBackups, EtcdClusters, EtcdRestores, Jobs } from '../resources.ts';
import { etcdBackupReconciler, type BackupMetrics } from '../backup/reconcile.ts';
import { BACKUP_LABEL } from '../backup/job.ts';
import { etcdBackupScheduleReconciler } from '../schedule/reconcile.ts';
import type { ScheduleMetrics } from '../schedule/metrics.ts';
import { SCHEDULE_LABEL } from '../schedule/prune-job.ts';
import { etcdRestoreReconciler, RESTORE_LABEL, type RestoreMetrics } from '../restore/reconcile.ts';
import { defaultEtcdCluster, validateEtcdCluster } from '../webhooks/etcdcluster.ts';
import { validateEtcdBackup } from '../webhooks/etcdbackup.ts';
import { validateEtcdBackupSchedule } from '../webhooks/etcdbackupschedule.ts';
import { validateEtcdRestore } from '../webhooks/etcdrestore.ts';
import { secretAccessReviews, withCredentialsAccess } from '../webhooks/credentials.ts';
import { CERT_SECRET, MUTATING_WEBHOOK, VALIDATING_WEBHOOK, VALIDATING_WEBHOOKS } from '../deploy/constants.ts';
import type { OperatorConfig } from './config.ts';
import { registerResourceMetrics } from './metrics.ts';

export const MANAGED = `${LABELS.managedBy}=quorum`;

export interface OperatorOptions {
  config: OperatorConfig;
  manager?: Partial<ManagerOptions>;
  logger?: Logger;
  afterWrite?: ReconcilerDeps['afterWrite'];
}

/** `quorum_etcdcluster_step_retries_total{step,reason}`: every retry of a step, with why. */
function stepMetrics(manager: Manager): StepMetrics {
  const retries = manager.metrics.counter('quorum_etcdcluster_step_retries_total', 'Retries of a reconcile step (a wait that repeats or a refused action), by step and reason', ['step', 'reason']);
  const defragSeconds = manager.metrics.gauge('quorum_etcdcluster_defrag_last_duration_seconds', "How long a member's last defragmentation took: the time it served no requests", ['namespace', 'cluster', 'member']);
  const defrags = manager.metrics.counter('quorum_etcdcluster_defrags_total', 'Member defragmentations, by reason (Threshold, Schedule, NoSpace)', ['namespace', 'cluster', 'reason']);
  const alarms = manager.metrics.gauge('quorum_etcdcluster_alarm', "1 while etcd's alarm is raised in the cluster, else 0", ['namespace', 'cluster', 'alarm']);
  return {
    stepRetried: (step, reason) => retries.inc({ step, reason }),
    defragmented: (namespace, cluster, member, reason, seconds) => {
      defragSeconds.set({ namespace, cluster, member }, seconds);
      defrags.inc({ namespace, cluster, reason });
    },
    alarm: (namespace, cluster, alarm, raised) => alarms.set({ namespace, cluster, alarm }, raised ? 1 : 0),
  };
}

/**
 * Backup failures by reason, counted as they happen. The last success (time, size, duration) is read from
 * the EtcdBackup cache at scrape time (operator/metrics.ts).
 */
function backupMetrics(manager: Manager): BackupMetrics {
  const failures = manager.metrics.counter('quorum_backup_failures_total', 'Backups that failed, by reason', ['namespace', 'cluster', 'reason']);
  return { failed: (labels) => failures.inc(labels) };
}

/**
 * Schedule metrics, per schedule: the times its status reports (a time that does not exist has no series, it
 * is not 0), and the scheduled times that passed without a backup, by reason.
 */
function scheduleMetrics(manager: Manager): ScheduleMetrics {
  const names = ['namespace', 'schedule', 'cluster'] as const;
  const last = manager.metrics.gauge('quorum_backup_schedule_last_schedule_timestamp_seconds', 'Unix time of the scheduled time of the newest backup a schedule created', names);
  const success = manager.metrics.gauge('quorum_backup_schedule_last_success_timestamp_seconds', 'Unix time the newest successful backup of a schedule completed', names);
  const next = manager.metrics.gauge('quorum_backup_schedule_next_schedule_timestamp_seconds', 'Unix time of the next scheduled time of a schedule; no series while it is suspended or invalid', names);
  const skipped = manager.metrics.counter('quorum_backup_schedule_skipped_total', 'Scheduled times that passed without a backup: Forbid (a backup was still running), Suspended, Missed (taken by a later time instead)', [...names, 'reason']);
  const gauges = [
    [last, 'lastScheduleTime'],
    [success, 'lastSuccessfulTime'],
    [next, 'nextScheduleTime'],
  ] as const;
  return {
    times: (labels, times) => {
      for (const [gauge, field] of gauges) {
        const value = times[field];
        if (value === undefined) gauge.remove(labels);
        else gauge.set(labels, value);
      }
    },
    skipped: (labels, reason, count) => skipped.inc({ ...labels, reason }, count),
    forget: (labels) => {
      for (const [gauge] of gauges) gauge.remove(labels);
    },
  };
}

/**
 * Restore metrics: a restore waiting for its backup (seconds waited, by reason, and its bound), and failed
 * restores by reason. A wait's series goes when it ends, so the gauge lists only restores waiting now.
 */
function restoreMetrics(manager: Manager): RestoreMetrics {
  const waited = manager.metrics.gauge('quorum_restore_backup_wait_seconds', 'How long an EtcdRestore has waited for its EtcdBackup to exist and succeed, by reason (BackupNotFound, BackupNotReady)', ['namespace', 'restore', 'reason']);
  const bound = manager.metrics.gauge('quorum_restore_backup_wait_limit_seconds', 'How long an EtcdRestore waiting for its backup may wait (spec.backupWaitSeconds) before it fails', ['namespace', 'restore']);
  const failures = manager.metrics.counter('quorum_restore_failures_total', 'EtcdRestores that failed, by reason', ['namespace', 'cluster', 'reason']);
  // The reason each waiting restore's series was set under, so that a new reason replaces it.
  const reasons = new Map<string, string>();
  const clear = (key: string, labels: { namespace: string; restore: string }): void => {
    const reason = reasons.get(key);
    if (reason !== undefined) waited.remove({ ...labels, reason });
    reasons.delete(key);
  };
  return {
    waiting: (labels, w) => {
      const key = `${labels.namespace}/${labels.restore}`;
      if (reasons.get(key) !== w.reason) clear(key, labels);
      reasons.set(key, w.reason);
      waited.set({ ...labels, reason: w.reason }, w.seconds);
      bound.set(labels, w.boundSeconds);
    },
    notWaiting: (labels) => {
      clear(`${labels.namespace}/${labels.restore}`, labels);
      bound.remove(labels);
    },
    failed: (labels) => failures.inc(labels),
  };
}

export async function createOperator(options: OperatorOptions): Promise<Manager> {
  const { config } = options;
  const manager = await Manager.create({
    // The tenant namespaces, each watched on its own (a Role in each grants no watch of every namespace).
    ...(config.watchNamespaces.length > 0 ? { namespaces: config.watchNamespaces } : {}),
    probePort: config.probePort,
    ...(config.secureMetrics ? { secureMetrics: { port: config.metricsPort } } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(config.leaderElection ? { leaderElection: { name: 'quorum-etcd-operator', namespace: config.namespace, identity: config.podName } } : {}),
    ...options.manager,
  });
  const scope = { labelSelector: MANAGED };
  const backups = manager.informer(EtcdBackups);
  const deps: ReconcilerDeps = {
    client: manager.client,
    clusters: manager.informer(EtcdClusters),
    pods: manager.informer(Pods, scope),
    pvcs: manager.informer(PersistentVolumeClaims, scope),
    services: manager.informer(Services, scope),
    pdbs: manager.informer(PodDisruptionBudgets, scope),
    networkPolicies: manager.informer(NetworkPolicies, scope),
    network: { operatorNamespace: config.namespace, metricsNamespaces: config.metricsNamespaces },
    // Only the operator's own Secrets (a TLS cluster's CAs and certificates): a user's Secret is read when needed.
    secrets: manager.informer(Secrets, scope),
    clusterDomain: config.clusterDomain,
    etcd: new EtcdClients(),
    events: manager.eventRecorder({ controller: 'etcd.quorum.dev/operator', instance: config.podName }),
    crashLoopGraceMs: config.crashLoopGraceMs,
    caRotationOverlapMs: config.caRotationOverlapMs,
    stepDeadlineMs: config.stepDeadlineMs,
    metrics: stepMetrics(manager),
    peerWaitImage: config.peerWaitImage,
    agentImage: config.agentImage,
    backups,
    afterWrite: options.afterWrite,
  };
  const byInstance = (obj: KubeObject): { namespace: string; name: string }[] => {
    const instance = obj.metadata.labels?.[LABELS.instance];
    return instance ? [{ namespace: obj.metadata.namespace ?? '', name: instance }] : [];
  };
  manager
    .controller('etcdcluster')
    // Our own status writes must not wake us: only spec, label or annotation changes (and creates/deletes).
    .for(EtcdClusters, { predicates: [or(generationChanged, labelsChanged, annotationsChanged)] })
    .owns(Pods, scope)
    .owns(Services, scope)
    .owns(PodDisruptionBudgets, scope)
    .owns(NetworkPolicies, scope)
    .owns(Secrets, scope)
    // PVCs may have no owner (reclaimPolicy Retain): map them by label.
    .watches(PersistentVolumeClaims, byInstance, scope)
    .withOptions({ maxConcurrentReconciles: config.maxConcurrentReconciles })
    .complete(etcdClusterReconciler(deps));

  const byBackup = (obj: KubeObject): { namespace: string; name: string }[] => {
    const backup = obj.metadata.labels?.[BACKUP_LABEL];
    return backup ? [{ namespace: obj.metadata.namespace ?? '', name: backup }] : [];
  };
  const jobs = manager.informer(Jobs, scope);
  manager
    .controller('etcdbackup')
    .for(EtcdBackups, { predicates: [generationChanged] })
    .owns(Jobs, scope)
    // The Job's pod carries the agent's result (its termination message) before the Job says Complete.
    .watches(Pods, byBackup, scope)
    .complete(
      etcdBackupReconciler({
        client: manager.client,
        backups,
        clusters: deps.clusters,
        pods: deps.pods,
        jobs,
        ...(deps.secrets ? { secrets: deps.secrets } : {}),
        etcd: deps.etcd,
        events: deps.events,
        agentImage: config.agentImage,
        metrics: backupMetrics(manager),
        ...(options.afterWrite ? { afterWrite: options.afterWrite } : {}),
      }),
    );

  // Schedules: their own EtcdBackups (every status change: a finished backup lets the next one start and
  // retention run) and the Jobs deleting expired stored backups, mapped by label.
  const schedules = manager.informer(EtcdBackupSchedules);
  const bySchedule = (obj: KubeObject): { namespace: string; name: string }[] => {
    const schedule = obj.metadata.labels?.[SCHEDULE_LABEL];
    return schedule ? [{ namespace: obj.metadata.namespace ?? '', name: schedule }] : [];
  };
  manager
    .controller('etcdbackupschedule')
    .for(EtcdBackupSchedules, { predicates: [generationChanged] })
    .owns(EtcdBackups)
    .watches(Jobs, bySchedule, scope)
    .watches(Pods, bySchedule, scope)
    .complete(
      etcdBackupScheduleReconciler({
        client: manager.client,
        schedules,
        backups,
        jobs,
        pods: deps.pods,
        events: deps.events,
        agentImage: config.agentImage,
        metrics: scheduleMetrics(manager),
        ...(options.afterWrite ? { afterWrite: options.afterWrite } : {}),
      }),
    );

  // Restores: the cluster they create (by label, or by name while it does not exist yet) and their backup.
  const restores = manager.informer(EtcdRestores);

  registerResourceMetrics(manager.metrics, {
    clusters: deps.clusters,
    // The pods informer holds open objects; member pods are core/v1 Pods.
    pods: { store: { list: () => deps.pods.store.list() as V1Pod[] } },
    backups,
    schedules,
    addClusterHandler: (handler) => manager.informer(EtcdClusters).addHandler(handler),
  });
  const restoresWhere = (namespace: string, matches: (spec: { clusterName: string; backupName?: string }) => boolean): { namespace: string; name: string }[] =>
    restores.store
      .byIndex('namespace', namespace)
      .filter((r) => matches(r.spec))
      .map((r) => ({ namespace, name: r.metadata.name ?? '' }));
  manager
    .controller('etcdrestore')
    .for(EtcdRestores, { predicates: [generationChanged] })
    .watches(EtcdClusters, (c) => {
      const ns = c.metadata.namespace ?? '';
      const byLabel = c.metadata.labels?.[RESTORE_LABEL];
      return [...(byLabel ? [{ namespace: ns, name: byLabel }] : []), ...restoresWhere(ns, (spec) => spec.clusterName === c.metadata.name)];
    })
    .watches(EtcdBackups, (b) => restoresWhere(b.metadata.namespace ?? '', (spec) => spec.backupName === b.metadata.name))
    .complete(
      etcdRestoreReconciler({
        client: manager.client,
        restores,
        clusters: deps.clusters,
        backups,
        events: deps.events,
        metrics: restoreMetrics(manager),
        ...(options.afterWrite ? { afterWrite: options.afterWrite } : {}),
      }),
    );

  if (config.webhooks) {
    const webhooks = webhookServing({
      name: 'webhooks',
      client: manager.client,
      namespace: config.namespace,
      service: config.webhookServiceName,
      secretName: CERT_SECRET,
      secretLabels: { 'app.kubernetes.io/name': 'quorum' },
      certDir: config.certDir,
      port: config.webhookPort,
      configurations: { validating: [VALIDATING_WEBHOOK], mutating: [MUTATING_WEBHOOK] },
      register: (server) => {
        server.registerMutating('/default-etcdcluster', defaultEtcdCluster);
        // Every kind that names a storage credentials Secret: may the requesting user get it (webhooks/credentials.ts)?
        const access = secretAccessReviews(manager.client);
        server.registerValidating(VALIDATING_WEBHOOKS.etcdclusters.path, withCredentialsAccess(validateEtcdCluster, access));
        server.registerValidating(VALIDATING_WEBHOOKS.etcdbackups.path, withCredentialsAccess(validateEtcdBackup, access));
        server.registerValidating(VALIDATING_WEBHOOKS.etcdbackupschedules.path, withCredentialsAccess(validateEtcdBackupSchedule, access));
        server.registerValidating(VALIDATING_WEBHOOKS.etcdrestores.path, withCredentialsAccess(validateEtcdRestore, access));
      },
      log: manager.log,
      metrics: manager.metrics,
      // Keep answering while the endpoint removal reaches every kube-proxy, then stop.
      drainMs: config.webhookDrainMs,
    });
    // Not ready until the webhook answers: the API server calls it for every EtcdCluster write.
    manager.addReadyCheck('webhook', () => {
      const problem = webhooks.problem();
      if (problem !== undefined) throw new Error(problem);
    });
    manager.add(webhooks);
  }
  return manager;
}

