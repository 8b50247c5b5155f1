// The EtcdBackup reconciler: observe (the backup, its cluster's members as etcd reports them, its Job and the
// Job's pod), plan (plan.ts), report (status first: Running is recorded before the Job exists, so a crash in
// between resumes the same backup), act (create the Job). Failures speak: a Failed phase with the reason as a
// condition, a Warning event, a warn log and a metric; success sets the last-success metrics.
import { foreignJobOf } from '@quorum/kit';
import { AlreadyExistsError, isControlledBy, setCondition, type Client, type EventRecorder, type Informer, type Job, type Pod, type Reconciler, type Result, type Secret } from '@quorum/runtime';
import { BACKUP_KIND, type EtcdBackup, type EtcdBackupStatus } from '../api/etcdbackup.ts';
import type { EtcdCluster } from '../api/etcdcluster.ts';
import { LABELS, FIELD_MANAGER } from '../names.ts';
import type { EtcdClients } from '../etcd/clients.ts';
import { withEffectiveTLS } from '../tls/defaults.ts';
import { clientEndpoint, servedClientStage } from '../tls/members.ts';
import { clientCredentials, clientIdentitySecret } from '../tls/cluster-secrets.ts';
import { EtcdBackups, Jobs } from '../resources.ts';
import { checkCredentials } from './credentials.ts';
import { backupJob, backupJobName, observeJob, podsOfJob } from './job.ts';
import { planBackup, type BackupAction, type ObservedMember } from './plan.ts';

/** The last success (time, size, duration) is not here: the operator reads it from the EtcdBackup cache (operator/metrics.ts). */
export interface BackupMetrics {
  failed(labels: { namespace: string; cluster: string; reason: string }): void;
}

export interface BackupReconcilerDeps {
  client: Client;
  backups: Pick<Informer<EtcdBackup>, 'store'>;
  clusters: Pick<Informer<EtcdCluster>, 'store'>;
  pods: Pick<Informer<Pod>, 'store'>;
  jobs: Pick<Informer<Job>, 'store'>;
  /** The operator's own Secrets: a TLS cluster's client certificate, to read its members' status with. */
  secrets?: Pick<Informer<Secret>, 'store'>;
  etcd: EtcdClients;
  events: Pick<EventRecorder, 'record'>;
  /** The image the backup Job runs: the operator's own (it carries the agent). */
  agentImage: string;
  metrics?: BackupMetrics;
  now?: () => Date;
  /** How long a Job's pod may be unable to start (a missing Secret, an image that cannot be pulled) before the backup fails. */
  cannotStartGraceMs?: number;
  /** Test hook: called after every write (failpoints). */
  afterWrite?: (what: string) => Promise<void> | void;
}

const DEFAULT_CANNOT_START_GRACE_MS = 60_000;

export function etcdBackupReconciler(deps: BackupReconcilerDeps): Reconciler {
  return async ({ namespace, name }, { signal, log }): Promise<Result> => {
    const backup = deps.backups.store.get(`${namespace}/${name}`);
    if (!backup || backup.metadata.deletionTimestamp) return {};
    const status = backup.status ?? {};
    if (status.phase === 'Succeeded' || status.phase === 'Failed') return {};
    const now = deps.now?.() ?? new Date();
    const clusterName = backup.spec.clusterName;

    // ---- observe ----
    const cluster = deps.clusters.store.get(`${namespace}/${clusterName}`);
    const jobName = backupJobName(backup);
    // Only a Job this backup controls is its Job: one found by name alone may be anyone's (foreignJob).
    const found = deps.jobs.store.get(`${namespace}/${jobName}`);
    const job = found && isControlledBy(found, { kind: BACKUP_KIND, metadata: backup.metadata }) ? found : undefined;
    const foreignJob = found && !job ? foreignJobOf(found, now.getTime()) : undefined;
    const observedJob = job ? observeJob(job, podsOfJob(job, deps.pods.store.byIndex('namespace', namespace)), now.getTime()) : undefined;
    // Members are asked only when a member must be chosen: a running backup needs nothing from etcd.
    const members = !found && cluster ? await observeMembers(cluster, deps, signal) : [];
    // Its credentials Secret is looked at (metadata only) before a Job would mount it, never after.
    const credentials = job ? undefined : await checkCredentials(deps.client, namespace, backup.spec.destination, signal);

    // ---- plan ----
    const action = planBackup({
      phase: status.phase,
      ...(status.member ? { recordedMember: status.member } : {}),
      clusterExists: !!cluster,
      members,
      job: observedJob,
      now: now.getTime(),
      cannotStartGraceMs: deps.cannotStartGraceMs ?? DEFAULT_CANNOT_START_GRACE_MS,
      ...(credentials ? { credentials } : {}),
      ...(foreignJob ? { foreignJob } : {}),
    });

    // ---- report, then act ----
    // Every status write is made on the version this reconcile read: each carries the status read (`...status`)
    // with one step taken, so a reconcile on a stale cache would otherwise put an older status back (Running over
    // a finished backup, then a second Job) or finish the backup again, with another completedAt than the one
    // already reported and read by a recovery. The API server refuses a write on another version (Conflict): the
    // reconcile is retried once the cache has caught up, and sees the backup as it is.
    const writeStatus = async (next: EtcdBackupStatus, what: string): Promise<void> => {
      const version = backup.metadata.resourceVersion ? { metadata: { resourceVersion: backup.metadata.resourceVersion } } : {};
      await deps.client.mergePatch(EtcdBackups, { namespace, name }, { ...version, status: next }, { subresource: 'status', fieldManager: FIELD_MANAGER, signal });
      await deps.afterWrite?.(what);
    };
    const event = (type: 'Normal' | 'Warning', reason: string, note: string): void => deps.events.record(backup, { type, reason, action: reason, note });
    const conditions = (a: BackupAction): EtcdBackupStatus['conditions'] => {
      const base = status.conditions ?? [];
      const generation = backup.metadata.generation ?? 0;
      if (a.type === 'succeed') {
        return setCondition(setCondition(base, { type: 'Complete', status: 'True', reason: 'Stored', message: `snapshot stored at ${a.result.location}`, observedGeneration: generation }, now), { type: 'Failed', status: 'False', reason: 'Stored', message: 'the backup succeeded', observedGeneration: generation }, now);
      }
      if (a.type === 'fail') {
        return setCondition(setCondition(base, { type: 'Failed', status: 'True', reason: a.reason, message: a.message, observedGeneration: generation }, now), { type: 'Complete', status: 'False', reason: a.reason, message: a.message, observedGeneration: generation }, now);
      }
      if (a.type === 'wait') return setCondition(base, { type: 'Complete', status: 'False', reason: a.reason, message: a.message, observedGeneration: generation }, now);
      return setCondition(base, { type: 'Complete', status: 'False', reason: 'Starting', message: a.type === 'startJob' ? `taking the snapshot from ${a.member}` : 'starting', observedGeneration: generation }, now);
    };

    switch (action.type) {
      case 'done':
        return {};
      case 'wait': {
        const next = { ...status, conditions: conditions(action) };
        // Written when the reason changes, not the wording: a pod flapping between ErrImagePull and
        // ImagePullBackOff would otherwise write (and wake this reconciler) at every flap.
        const complete = (c: EtcdBackupStatus['conditions']): string => { const x = c?.find((y) => y.type === 'Complete'); return `${x?.status}/${x?.reason}`; };
        if (complete(next.conditions) !== complete(status.conditions)) {
          await writeStatus(next, 'status Running (waiting)');
          if (action.reason === 'JobCannotStart' || action.reason === 'JobNameTaken') {
            event('Warning', `Backup${action.reason}`, action.message);
            log.warn({ backup: name, cluster: clusterName, reason: action.reason }, action.message);
          }
        }
        return { requeueAfter: action.requeueAfterMs };
      }
      case 'startJob': {
        if (status.phase !== 'Running') {
          await writeStatus({ ...status, phase: 'Running', member: action.member, job: jobName, startedAt: now.toISOString(), observedGeneration: backup.metadata.generation ?? 0, conditions: conditions(action) }, 'status Running');
          event('Normal', 'BackupStarted', `taking a snapshot of ${clusterName} from member ${action.member} (Job ${jobName})`);
          log.info({ backup: name, cluster: clusterName, member: action.member }, 'backup started');
        }
        try {
          // The member is dialled the way its pod says it serves: plain http until client TLS reached it (a
          // cluster turning TLS on in place serves both, then https only).
          const memberPod = deps.pods.store.byIndex('namespace', namespace).find((p) => p.metadata.labels?.[LABELS.instance] === clusterName && p.metadata.labels?.[LABELS.member] === action.member);
          const clientTLSSecret = cluster && memberPod && servedClientStage(memberPod) === 'on' ? clientIdentitySecret(clusterTLS(cluster), clusterName) : undefined;
          await deps.client.create(Jobs, backupJob(backup, { member: action.member, dbSize: action.dbSize, agentImage: deps.agentImage, ...(clientTLSSecret ? { clientTLSSecret } : {}) }), { fieldManager: FIELD_MANAGER, signal });
          await deps.afterWrite?.(`create Job ${jobName}`);
        } catch (err) {
          if (!(err instanceof AlreadyExistsError)) throw err;
        }
        return { requeueAfter: 5000 };
      }
      case 'succeed': {
        const r = action.result;
        await writeStatus(
          {
            ...status,
            phase: 'Succeeded',
            location: r.location,
            key: r.key,
            sizeBytes: r.sizeBytes,
            sha256: r.sha256,
            revision: Number(r.revision),
            etcdVersion: r.etcdVersion,
            member: r.member || status.member,
            completedAt: now.toISOString(),
            conditions: conditions(action),
          },
          'status Succeeded',
        );
        event('Normal', 'BackupSucceeded', `stored ${r.sizeBytes} bytes at revision ${r.revision} from ${r.member} at ${r.location}`);
        log.info({ backup: name, cluster: clusterName, location: r.location, sizeBytes: r.sizeBytes, revision: r.revision }, 'backup succeeded');
        return {};
      }
      case 'fail': {
        await writeStatus({ ...status, phase: 'Failed', completedAt: now.toISOString(), conditions: conditions(action) }, 'status Failed');
        deps.metrics?.failed({ namespace, cluster: clusterName, reason: action.reason });
        event('Warning', 'BackupFailed', `${action.reason}: ${action.message}`);
        log.warn({ backup: name, cluster: clusterName, reason: action.reason }, `backup failed: ${action.message}`);
        return {};
      }
    }
  };
}

/** Each member pod's own status: health, leadership, applied index and size (the snapshot source is chosen from them). */
async function observeMembers(cluster: EtcdCluster, deps: BackupReconcilerDeps, signal: AbortSignal): Promise<ObservedMember[]> {
  const ns = cluster.metadata.namespace ?? '';
  const name = cluster.metadata.name ?? '';
  const pods = deps.pods.store
    .byIndex('namespace', ns)
    .filter((p) => p.metadata.labels?.[LABELS.instance] === name && p.metadata.labels?.[LABELS.managedBy] === 'quorum' && p.metadata.labels?.[LABELS.member] && !p.metadata.deletionTimestamp);
  const credentials = await clientCredentials(clusterTLS(cluster), name, ns, (secret) => deps.secrets?.store.get(`${ns}/${secret}`), deps.client);
  return Promise.all(
    pods.map(async (p): Promise<ObservedMember> => {
      const member = p.metadata.labels![LABELS.member]!;
      const endpoint = clientEndpoint(p, name, ns, credentials);
      if (!endpoint) return { name: member, healthy: false, leader: false, learner: false, hasLeader: false, appliedIndex: '0', dbSize: 0 };
      try {
        const s = await deps.etcd.get(endpoint).status({ signal });
        const hasLeader = s.leaderId !== '0' && s.leaderId !== '';
        return { name: member, healthy: true, leader: hasLeader && s.leaderId === s.memberId, learner: s.isLearner, hasLeader, appliedIndex: s.raftAppliedIndex ?? s.raftIndex, dbSize: s.dbSize };
      } catch {
        return { name: member, healthy: false, leader: false, learner: false, hasLeader: false, appliedIndex: '0', dbSize: 0 };
      }
    }),
  );
}

/**
 * The cluster's spec with the TLS it runs (tls/defaults.ts), not the TLS its spec names: a cluster created while
 * the defaulting webhook was off has no spec.tls but runs operator-managed TLS, and its backups must dial it so.
 */
function clusterTLS(cluster: EtcdCluster): EtcdCluster['spec'] {
  return withEffectiveTLS(cluster.spec ?? {}, { status: cluster.status });
}
