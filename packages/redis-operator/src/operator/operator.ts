// The operator process: a manager with the Redis controller. Instances and Sentinels are read over the Redis
// protocol (redis/readings.ts); the caches hold only the operator's own objects (label managed-by).
import { webhookServing } from '@quorum/kit';
import { ConfigMaps, Jobs, Manager, NetworkPolicies, Nodes, PersistentVolumeClaims, PodDisruptionBudgets, Pods, Services, annotationsChanged, generationChanged, labelsChanged, or, type KubeObject, type Logger, type ManagerOptions, type Node } from '@quorum/runtime';
import { redisBackupReconciler } from '../backup/reconcile.ts';
import { caRotationOverlapMs, OPERATOR_IMAGE } from './config.ts';
import { serverImage } from '../image/names.ts';
import { LABELS, MANAGED_BY } from '../names.ts';
import { failoverTo, reloadTLS, resetSentinel, sentinelFailover } from '../redis/commands.ts';
import { readInstance, readSentinel, replicaOf } from '../redis/readings.ts';
import { redisReconciler, type ReconcilerDeps } from '../reconcile/reconcile.ts';
import { RedisBackups, RedisBackupSchedules, Redises } from '../resources.ts';
import { InstanceLoad, registerBackupMetrics, registerRedisMetrics, registerScheduleMetrics } from './metrics.ts';
import { WEBHOOK_CERT_SECRET } from './config.ts';
import { credentialsWebhookDeps, validateCredentials, VALIDATING_WEBHOOK, VALIDATING_WEBHOOKS } from '../webhooks/credentials.ts';
import { validateSchedule } from '../webhooks/schedule.ts';
import { redisBackupScheduleReconciler } from '../schedule/reconcile.ts';
import { SCHEDULE_LABEL } from '../schedule/prune-job.ts';

export const MANAGED = `${LABELS.managedBy}=${MANAGED_BY}`;
/** Only cordoned Nodes are cached (kubectl cordon and drain set spec.unschedulable): a few objects, not every Node. */
export const CORDONED_NODES = { fieldSelector: 'spec.unschedulable=true' };
export const LEASE_NAME = 'quorum-redis-operator';

export interface RedisOperatorOptions {
  manager?: Partial<ManagerOptions>;
  logger?: Logger;
  /** The server image by engine and version (default: the images this repository assembles, serverImage). */
  image?: (engine: string, version: string) => string;
  stepDeadlineMs?: number;
  /** A CA rotation's overlap (default: CA_ROTATION_OVERLAP_SECONDS from the environment, else 7 days). */
  caRotationOverlapMs?: number;
  /** The image backup Jobs and restore init containers run: the operator's own, which carries the agent. */
  agentImage?: string;
  afterWrite?: ReconcilerDeps['afterWrite'];
  /** The namespace the operator's pods run in (POD_NAMESPACE): each Redis's NetworkPolicy admits them. Default quorum-system. */
  operatorNamespace?: string;
  /** Serve the admission webhook (the installed operator does; an operator run in a test process need not). */
  webhook?: WebhookOptions;
}

export interface WebhookOptions {
  /** The operator's namespace: its serving certificate's Secret and the Service are there. */
  namespace: string;
  service: string;
  certDir: string;
  port: number;
  /** How long it keeps answering after the stop signal (default 5 s: the endpoint's removal reaches kube-proxy). */
  drainMs?: number;
}

export async function createRedisOperator(options: RedisOperatorOptions = {}): Promise<Manager> {
  const manager = await Manager.create({ ...(options.logger ? { logger: options.logger } : {}), ...options.manager });
  const scope = { labelSelector: MANAGED };
  const redises = manager.informer(Redises);
  const load = new InstanceLoad();
  registerRedisMetrics(manager.metrics, redises, load);
  const backups = manager.informer(RedisBackups);
  registerBackupMetrics(manager.metrics, backups, redises);
  registerScheduleMetrics(manager.metrics, manager.informer(RedisBackupSchedules), backups);
  const deps: ReconcilerDeps = {
    client: manager.client,
    redises,
    pods: manager.informer(Pods, scope),
    claims: manager.informer(PersistentVolumeClaims, scope),
    services: manager.informer(Services, scope),
    configMaps: manager.informer(ConfigMaps, scope),
    networkPolicies: manager.informer(NetworkPolicies, scope),
    disruptionBudgets: manager.informer(PodDisruptionBudgets, scope),
    cordonedNodes: manager.informer(Nodes, CORDONED_NODES),
    // Each Redis's NetworkPolicy admits the operator's pods from its own namespace.
    ...(options.operatorNamespace !== undefined ? { network: { operatorNamespace: options.operatorNamespace } } : {}),
    events: manager.eventRecorder({ controller: 'redis.quorum.dev/operator', instance: process.env['POD_NAME'] ?? 'local' }),
    readers: { instance: readInstance, sentinel: readSentinel, replicaOf, sentinelFailover, failoverTo, resetSentinel, reloadTLS },
    image: options.image ?? serverImage,
    agentImage: options.agentImage ?? OPERATOR_IMAGE,
    backups,
    ...(options.stepDeadlineMs !== undefined ? { stepDeadlineMs: options.stepDeadlineMs } : {}),
    // The names TLS certificates carry end in the cluster's domain (`<svc>.<ns>.svc.<domain>`).
    ...(process.env['CLUSTER_DOMAIN'] ? { clusterDomain: process.env['CLUSTER_DOMAIN'] } : {}),
    caRotationOverlapMs: options.caRotationOverlapMs ?? caRotationOverlapMs(),
    ...(options.afterWrite ? { afterWrite: options.afterWrite } : {}),
    observed: (observed) => load.record(observed, Date.now()),
  };
  const byInstance = (obj: KubeObject): { namespace: string; name: string }[] => {
    const instance = obj.metadata.labels?.[LABELS.instance];
    return instance ? [{ namespace: obj.metadata.namespace ?? '', name: instance }] : [];
  };
  // A node cordoned (or uncordoned): the Redises with a pod on it.
  const onNode = (node: Node): { namespace: string; name: string }[] => {
    const on = deps.pods.store.list().filter((p) => (p as { spec?: { nodeName?: string } }).spec?.nodeName === node.metadata.name);
    return [...new Map(on.flatMap(byInstance).map((k) => [`${k.namespace}/${k.name}`, k])).values()];
  };
  const backupFailures = manager.metrics.counter('quorum_redis_backup_attempt_failures_total', 'Failed RedisBackup attempts (each retried up to its bound, the last one fails the backup), by reason', ['namespace', 'redis', 'reason']);
  const agentImage = options.agentImage ?? OPERATOR_IMAGE;
  manager
    .controller('redis-backup')
    .for(RedisBackups, { predicates: [or(generationChanged, labelsChanged, annotationsChanged)] })
    .owns(Jobs, scope)
    .complete(
      redisBackupReconciler({
        client: manager.client,
        backups,
        redises,
        jobs: manager.informer(Jobs, scope),
        pods: manager.informer(Pods, scope),
        events: deps.events,
        agentImage,
        metrics: { attemptFailed: (labels) => backupFailures.inc(labels) },
        ...(options.afterWrite ? { afterWrite: options.afterWrite } : {}),
      }),
    );
  // Schedules: their own RedisBackups (a finished backup lets the next one start and retention run) and the Jobs
  // deleting expired stored RDBs, mapped by label.
  const bySchedule = (obj: KubeObject): { namespace: string; name: string }[] => {
    const schedule = obj.metadata.labels?.[SCHEDULE_LABEL];
    return schedule ? [{ namespace: obj.metadata.namespace ?? '', name: schedule }] : [];
  };
  manager
    .controller('redis-backup-schedule')
    .for(RedisBackupSchedules, { predicates: [generationChanged] })
    .owns(RedisBackups)
    .watches(Jobs, bySchedule, scope)
    .complete(
      redisBackupScheduleReconciler({
        client: manager.client,
        schedules: manager.informer(RedisBackupSchedules),
        backups,
        jobs: manager.informer(Jobs, scope),
        pods: manager.informer(Pods, scope),
        events: deps.events,
        agentImage,
      }),
    );
  manager
    .controller('redis')
    // Our own status writes must not wake us: only spec, label or annotation changes (and creates/deletes).
    .for(Redises, { predicates: [or(generationChanged, labelsChanged, annotationsChanged)] })
    .owns(Pods, scope)
    .owns(Services, scope)
    .owns(ConfigMaps, scope)
    .owns(NetworkPolicies, scope)
    .owns(PodDisruptionBudgets, scope)
    .watches(Nodes, onNode, CORDONED_NODES)
    // Claims have no owner with reclaimPolicy Retain: map them by label.
    .watches(PersistentVolumeClaims, byInstance, scope)
    .complete(redisReconciler(deps));
  if (options.webhook) addWebhook(manager, options.webhook);
  return manager;
}

/**
 * The validating webhook on every replica (the kit's webhookServing: the serving certificate from its Secret, the
 * CA published into the configuration, renewed): may the requesting user get the credentials Secret a RedisBackup,
 * or a Redis's bootstrap backup, would have mounted, and is it labelled for backups (webhooks/credentials.ts)?
 */
function addWebhook(manager: Manager, options: WebhookOptions): void {
  const webhook = webhookServing({
    name: 'webhooks',
    client: manager.client,
    namespace: options.namespace,
    service: options.service,
    secretName: WEBHOOK_CERT_SECRET,
    secretLabels: { [LABELS.managedBy]: MANAGED_BY },
    certDir: options.certDir,
    port: options.port,
    configurations: { validating: [VALIDATING_WEBHOOK] },
    register: (server) => {
      const validate = validateCredentials(credentialsWebhookDeps(manager.client));
      server.registerValidating(VALIDATING_WEBHOOKS.redisbackups.path, validate);
      server.registerValidating(VALIDATING_WEBHOOKS.redises.path, validate);
      server.registerValidating(VALIDATING_WEBHOOKS.redisbackupschedules.path, validateSchedule(validate));
    },
    log: manager.log,
    metrics: manager.metrics,
    drainMs: options.drainMs ?? 5000,
  });
  // Not ready until it answers: the API server calls it for every RedisBackup and Redis created.
  manager.addReadyCheck('webhook', () => {
    const problem = webhook.problem();
    if (problem !== undefined) throw new Error(problem);
  });
  manager.add(webhook);
}
