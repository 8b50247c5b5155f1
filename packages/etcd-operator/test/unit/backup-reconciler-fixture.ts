// The EtcdBackup reconciler over in-memory stores and a client that records its writes: status patches land in the
// backups' store, creates and deletes are listed, the credentials Secret's metadata carries the labels given.
import { Writable } from 'node:stream';
import { applyMergePatch } from '@quorum/kit';
import { ConflictError, createLogger, Store, type Client, type EventInput, type KubeObject, type OpenObject, type Result } from '@quorum/runtime';
import type { EtcdBackup } from '../../src/api/etcdbackup.ts';
import type { EtcdCluster } from '../../src/api/etcdcluster.ts';
import { etcdBackupReconciler } from '../../src/backup/reconcile.ts';
import { EtcdClients } from '../../src/etcd/clients.ts';

export interface BackupReconcilerFixture {
  backups: Store<EtcdBackup>;
  jobs: Store<OpenObject>;
  pods: Store<OpenObject>;
  /** `create <kind>` and `delete <name>`, in order. */
  writes: string[];
  events: EventInput[];
  /** Reconciles `namespace/name` once. */
  reconcile(namespace: string, name: string): Promise<Result | void>;
}

/** `backup` and its cluster `<spec.clusterName>` (1 replica) in the stores; `now` fixes the reconciler's clock. */
/**
 * `stored`, when given, is the API server's copy, apart from the reconciler's cache (`backups`): a test makes the
 * cache stale by giving the two different versions.
 */
export function backupReconcilerFixture(backup: EtcdBackup, options: { credentialsLabels: Record<string, string>; now?: number; stored?: Store<EtcdBackup> }): BackupReconcilerFixture {
  const namespace = backup.metadata.namespace ?? '';
  const backups = new Store<EtcdBackup>();
  const clusters = new Store<EtcdCluster>();
  const jobs = new Store<OpenObject>();
  const pods = new Store<OpenObject>();
  backups.upsert(backup);
  clusters.upsert({ apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name: backup.spec.clusterName, namespace }, spec: { replicas: 1 } });
  const writes: string[] = [];
  const client = {
    request: (_m: string, path: string) => Promise.resolve({ kind: 'PartialObjectMetadata', metadata: { name: path.split('/').at(-1), labels: options.credentialsLabels } }),
    create: (_t: unknown, obj: KubeObject) => (writes.push(`create ${obj.kind}`), Promise.resolve(obj)),
    delete: (_t: unknown, key: { name: string }) => (writes.push(`delete ${key.name}`), Promise.resolve()),
    mergePatch(_t: unknown, key: { namespace: string; name: string }, patch: { metadata?: { resourceVersion?: string }; status: EtcdBackup['status'] }): Promise<KubeObject> {
      const current = (options.stored ?? backups).get(`${key.namespace}/${key.name}`)!;
      // As the API server does: a patch that names a resourceVersion applies only to that version.
      const expected = patch.metadata?.resourceVersion;
      if (expected !== undefined && expected !== current.metadata.resourceVersion) return Promise.reject(new ConflictError('PATCH', key.name, 409, { reason: 'Conflict', message: 'the object has been modified' }));
      const next = { ...current, metadata: { ...current.metadata, resourceVersion: String(Number(current.metadata.resourceVersion ?? '0') + 1) }, status: applyMergePatch(current.status, patch.status) as EtcdBackup['status'] };
      (options.stored ?? backups).upsert(next);
      if (options.stored) writes.push('patch status');
      return Promise.resolve(next);
    },
  } as unknown as Client;
  const events: EventInput[] = [];
  const reconciler = etcdBackupReconciler({
    client,
    backups: { store: backups },
    clusters: { store: clusters },
    pods: { store: pods },
    jobs: { store: jobs },
    etcd: new EtcdClients(),
    events: { record: (_o: KubeObject, e: EventInput) => void events.push(e) },
    agentImage: 'quorum:test',
    ...(options.now === undefined ? {} : { now: () => new Date(options.now!) }),
  });
  const log = createLogger({ level: 'warn', destination: new Writable({ write: (_c, _e, done) => done() }) });
  return { backups, jobs, pods, writes, events, reconcile: (ns, name) => reconciler({ namespace: ns, name }, { signal: new AbortController().signal, log, retries: 0 }) };
}
