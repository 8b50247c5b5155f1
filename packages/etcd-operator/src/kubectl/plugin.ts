// `kubectl quorum`: the kubectl plugin (an executable named kubectl-quorum on PATH). It reads and creates the
// operator's objects with the caller's own kubeconfig, as kubectl would, and talks to nothing but the API
// server. kubectlQuorum(argv, io) is the whole command, run in the kit's frame (runCommand), and resolves with its
// exit code: 0 done, 1 failed (a missing object, a backup or restore that Failed, a wait that ran out), 2 a wrong
// command line.
import { EXIT_DONE, EXIT_FAILED, runCommand, type CommandIO } from '@quorum/kit';
import { AlreadyExistsError, ApiError, Client, kubeconfigNamespace, NotFoundError, sleep, type KubeObject, type ResourceType } from '@quorum/runtime';
import type { Destination } from '../api/destination.ts';
import { BACKUP_API_VERSION, BACKUP_KIND, type EtcdBackup } from '../api/etcdbackup.ts';
import type { EtcdCluster } from '../api/etcdcluster.ts';
import { RESTORE_API_VERSION, RESTORE_KIND, type EtcdRestore } from '../api/etcdrestore.ts';
import { EtcdBackups, EtcdBackupSchedules, EtcdClusters, EtcdRestores } from '../resources.ts';
import { KUBECTL_QUORUM_USAGE, parsePluginArgs, type CommandArgs, type ConnectionArgs, type DestinationChoice } from './args.ts';
import { backupSummary, clusterDetail, conditionLine, destinationText, failure, membersTable, restoreSummary, schedulesOf, statusTable } from './format.ts';

export interface PluginIO extends CommandIO {
  /** The clock the ages are counted from; tests fix it. */
  now?: () => number;
  /** How often --wait reads the object again (default 2 s). */
  pollIntervalMs?: number;
}

/** A failure whose message is the whole story: it names the object or setting that is wrong. */
export class PluginError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PluginError';
  }
}

/** The field manager the API server records for what the plugin creates. */
export const FIELD_MANAGER = 'kubectl-quorum';

export function kubectlQuorum(argv: readonly string[], io: PluginIO = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  return runCommand({ program: 'kubectl quorum', usage: KUBECTL_QUORUM_USAGE, parse: () => parsePluginArgs(argv), act: (args) => connected(args, io) }, io);
}

/** Runs the command with a client of the caller's kubeconfig, closed when it ends. */
async function connected(args: CommandArgs, io: PluginIO): Promise<number> {
  const namespace = args.namespace ?? contextNamespace(args);
  const client = await Client.connect({ kubeconfig: args.kubeconfig, context: args.context });
  try {
    return await dispatch({ client, namespace, io, now: io.now ?? Date.now, pollIntervalMs: io.pollIntervalMs ?? 2000 }, args);
  } finally {
    client.close();
  }
}

function dispatch(s: Session, args: CommandArgs): Promise<number> {
  switch (args.verb) {
    case 'status':
      return status(s, args.name, args.allNamespaces);
    case 'members':
      return members(s, args.name);
    case 'backup':
      return backup(s, args);
    case 'restore':
      return restore(s, args);
  }
}

interface Session {
  client: Client;
  namespace: string;
  io: PluginIO;
  now: () => number;
  pollIntervalMs: number;
}

/** The namespace kubectl would use: the context's, else default. A --context the kubeconfig lacks is an error, not a silent default. */
function contextNamespace(args: ConnectionArgs): string {
  return kubeconfigNamespace({ kubeconfig: args.kubeconfig, context: args.context }) ?? 'default';
}

/**
 * A GET that says which object is missing. A 404 naming no object means the API server does not serve the
 * kind at all: the operator's CRDs are not installed.
 */
async function getNamed<T extends KubeObject>(s: Session, type: ResourceType<T>, name: string): Promise<T | undefined> {
  try {
    return await s.client.get(type, { namespace: s.namespace, name });
  } catch (err) {
    if (err instanceof NotFoundError) {
      if (err.status.details?.name === name) return undefined;
      throw new PluginError(`the API server does not serve ${type.kind} (${type.apiVersion}): is the Quorum operator installed? (quorum install; docs/install.md)`);
    }
    throw explain(err, `read ${type.kind} ${s.namespace}/${name}`);
  }
}

async function mustGet<T extends KubeObject>(s: Session, type: ResourceType<T>, name: string): Promise<T> {
  const found = await getNamed(s, type, name);
  if (!found) throw new PluginError(`${type.kind} ${s.namespace}/${name} not found`);
  return found;
}

/** An API refusal in the API server's own words, with what the plugin tried. */
function explain(err: unknown, what: string): Error {
  if (err instanceof ApiError) return new PluginError(`cannot ${what}: ${err.status.message ?? err.message}`);
  return err instanceof Error ? err : new Error(String(err));
}

async function listAll<T extends KubeObject>(s: Session, type: ResourceType<T>, namespace: string | undefined): Promise<T[]> {
  try {
    return (await s.client.list(type, namespace !== undefined ? { namespace } : {})).items;
  } catch (err) {
    if (err instanceof NotFoundError) throw new PluginError(`the API server does not serve ${type.kind} (${type.apiVersion}): is the Quorum operator installed? (quorum install; docs/install.md)`);
    throw explain(err, `list ${type.kind}s${namespace !== undefined ? ` in namespace ${namespace}` : ''}`);
  }
}

async function status(s: Session, name: string | undefined, allNamespaces: boolean): Promise<number> {
  const namespace = allNamespaces ? undefined : s.namespace;
  const clusters = name !== undefined ? [await mustGet(s, EtcdClusters, name)] : await listAll(s, EtcdClusters, namespace);
  if (clusters.length === 0) {
    s.io.stderr.write(`No EtcdClusters found${namespace !== undefined ? ` in namespace ${namespace}` : ''}.\n`);
    return EXIT_DONE;
  }
  // Backups and schedules are read only where they help; one who may not list them still sees the clusters.
  const backups = await listAll(s, EtcdBackups, namespace).catch((err: unknown) => noteUnreadable(s, err));
  if (name !== undefined) {
    const schedules = await listAll(s, EtcdBackupSchedules, namespace).catch((err: unknown) => noteUnreadable(s, err));
    s.io.stdout.write(clusterDetail(clusters[0]!, backups, schedules, s.now()));
    return EXIT_DONE;
  }
  clusters.sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
  s.io.stdout.write(statusTable(clusters, backups, s.now(), { withNamespace: allNamespaces }));
  return EXIT_DONE;
}

function noteUnreadable(s: Session, err: unknown): never[] {
  s.io.stderr.write(`kubectl quorum: ${err instanceof Error ? err.message : String(err)} (shown without them)\n`);
  return [];
}

async function members(s: Session, name: string): Promise<number> {
  const cluster = await mustGet(s, EtcdClusters, name);
  if (!cluster.status?.members?.length) {
    s.io.stderr.write(`EtcdCluster ${s.namespace}/${name} has no members in its status yet (phase ${cluster.status?.phase ?? 'Pending'})\n`);
    return EXIT_DONE;
  }
  s.io.stdout.write(membersTable(cluster));
  return EXIT_DONE;
}

/** The destination a new backup goes to, and where it came from (printed, so that no one guesses). */
async function resolveDestination(s: Session, cluster: EtcdCluster, choice: DestinationChoice): Promise<{ destination: Destination; source: string }> {
  switch (choice.from) {
    case 'pvc':
      return { destination: { pvc: { claimName: choice.claimName, ...(choice.path !== undefined ? { path: choice.path } : {}) } }, source: '--pvc' };
    case 's3': {
      const { from: _from, ...s3 } = choice;
      return { destination: { s3 }, source: '--s3-bucket' };
    }
    case 'like': {
      const backup = choice.kind !== 'EtcdBackupSchedule' ? await getNamed(s, EtcdBackups, choice.name) : undefined;
      const schedule = choice.kind !== 'EtcdBackup' ? await getNamed(s, EtcdBackupSchedules, choice.name) : undefined;
      if (backup && schedule) throw new PluginError(`--like ${choice.name}: both an EtcdBackup and an EtcdBackupSchedule ${s.namespace}/${choice.name} exist; say which: --like etcdbackup/${choice.name} or --like etcdbackupschedule/${choice.name}`);
      if (backup) return { destination: backup.spec.destination, source: `EtcdBackup ${choice.name}` };
      if (schedule) return { destination: schedule.spec.destination, source: `EtcdBackupSchedule ${choice.name}` };
      const kinds = choice.kind ?? 'EtcdBackup or EtcdBackupSchedule';
      throw new PluginError(`--like ${choice.kind ? `${choice.kind.toLowerCase()}/` : ''}${choice.name}: ${kinds} ${s.namespace}/${choice.name} not found`);
    }
    case 'default': {
      if (cluster.spec.backup?.destination) return { destination: cluster.spec.backup.destination, source: 'spec.backup.destination' };
      const schedules = schedulesOf(cluster, await listAll(s, EtcdBackupSchedules, s.namespace));
      if (schedules.length === 1) return { destination: schedules[0]!.spec.destination, source: `EtcdBackupSchedule ${schedules[0]!.metadata.name}` };
      const why = schedules.length === 0 ? 'no spec.backup.destination and no EtcdBackupSchedule' : `no spec.backup.destination and ${schedules.length} EtcdBackupSchedules (${schedules.map((x) => x.metadata.name).join(', ')})`;
      throw new PluginError(`EtcdCluster ${s.namespace}/${cluster.metadata.name} has ${why}: say where with --like BACKUP_OR_SCHEDULE, --pvc CLAIM or --s3-bucket B --s3-secret S`);
    }
  }
}

async function backup(s: Session, args: Extract<CommandArgs, { verb: 'backup' }>): Promise<number> {
  const cluster = await mustGet(s, EtcdClusters, args.cluster);
  const { destination, source } = await resolveDestination(s, cluster, args.destination);
  const metadata = args.backupName !== undefined ? { name: args.backupName, namespace: s.namespace } : { generateName: `${args.cluster}-`, namespace: s.namespace };
  let created: EtcdBackup;
  try {
    created = await s.client.create(EtcdBackups, { apiVersion: BACKUP_API_VERSION, kind: BACKUP_KIND, metadata, spec: { clusterName: args.cluster, destination } }, { fieldManager: FIELD_MANAGER });
  } catch (err) {
    if (err instanceof AlreadyExistsError) throw new PluginError(`EtcdBackup ${s.namespace}/${args.backupName} already exists: an EtcdBackup is one snapshot; choose another --name`);
    throw explain(err, `create an EtcdBackup of ${s.namespace}/${args.cluster}`);
  }
  const name = created.metadata.name!;
  s.io.stdout.write(`etcdbackup.etcd.quorum.dev/${name} created (cluster ${args.cluster}, to ${destinationText(destination)} from ${source})\n`);
  if (!args.wait) return EXIT_DONE;
  const done = await follow(s, EtcdBackups, name, args.timeoutMs, (b: EtcdBackup) => {
    const st = b.status;
    const phase = st?.phase ?? 'Pending';
    const detail = phase === 'Running' ? [st?.member && `from member ${st.member}`, st?.job && `job ${st.job}`].filter(Boolean).join(', ') : '';
    return { line: `${phase}${detail ? ` (${detail})` : ''}`, done: phase === 'Succeeded' || phase === 'Failed' };
  });
  s.io.stdout.write(backupSummary(done));
  return done.status?.phase === 'Succeeded' ? EXIT_DONE : EXIT_FAILED;
}

async function restore(s: Session, args: Extract<CommandArgs, { verb: 'restore' }>): Promise<number> {
  const source = await mustGet(s, EtcdBackups, args.backup);
  if (source.status?.phase === 'Failed') {
    const f = failure(source.status.conditions);
    throw new PluginError(`EtcdBackup ${s.namespace}/${args.backup} Failed${f ? ` (${f.reason}: ${f.message})` : ''}: there is no snapshot to restore`);
  }
  // The operator would refuse too (ClusterExists), but only after the EtcdRestore exists; say it first.
  if (await getNamed(s, EtcdClusters, args.to)) throw new PluginError(`EtcdCluster ${s.namespace}/${args.to} already exists: a restore creates a new cluster; choose another --to`);
  const restoreName = args.restoreName ?? args.to;
  const clusterSpec = { ...(args.replicas !== undefined ? { replicas: args.replicas } : {}), ...(args.version !== undefined ? { version: args.version } : {}) };
  const body: EtcdRestore = {
    apiVersion: RESTORE_API_VERSION,
    kind: RESTORE_KIND,
    metadata: { name: restoreName, namespace: s.namespace },
    spec: { clusterName: args.to, backupName: args.backup, ...(Object.keys(clusterSpec).length > 0 ? { clusterSpec } : {}) },
  };
  try {
    await s.client.create(EtcdRestores, body, { fieldManager: FIELD_MANAGER });
  } catch (err) {
    if (err instanceof AlreadyExistsError) throw new PluginError(`EtcdRestore ${s.namespace}/${restoreName} already exists: choose another --name (or look at it: kubectl get etcdrestore -n ${s.namespace} ${restoreName} -o yaml)`);
    throw explain(err, `create EtcdRestore ${s.namespace}/${restoreName}`);
  }
  const waitsFor = source.status?.phase === 'Succeeded' ? '' : ` (EtcdBackup ${args.backup} is ${source.status?.phase ?? 'Pending'}: the restore waits for it)`;
  s.io.stdout.write(`etcdrestore.etcd.quorum.dev/${restoreName} created (new EtcdCluster ${args.to} from EtcdBackup ${args.backup})${waitsFor}\n`);
  if (!args.wait) return EXIT_DONE;
  const done = await follow(s, EtcdRestores, restoreName, args.timeoutMs, (r: EtcdRestore) => {
    const phase = r.status?.phase ?? 'Pending';
    const complete = r.status?.conditions?.find((c) => c.type === 'Complete');
    // ClusterExists is a wait to the operator (someone may delete that cluster); to a person at a terminal it is the answer.
    const refused = complete?.reason === 'ClusterExists';
    return { line: `${phase}${complete && complete.status !== 'True' ? ` (${conditionLine(complete)})` : ''}`, done: phase === 'Succeeded' || phase === 'Failed' || refused };
  });
  const cluster = await getNamed(s, EtcdClusters, args.to);
  s.io.stdout.write(restoreSummary(done, cluster));
  return done.status?.phase === 'Succeeded' ? EXIT_DONE : EXIT_FAILED;
}

/**
 * Reads the object every poll interval until `view` says it is done, printing each new state line to
 * stderr (so that stdout carries only the result). Polling, not a watch: one GET per interval is cheap and
 * a dropped connection costs nothing but one interval.
 */
async function follow<T extends KubeObject>(
  s: Session,
  type: ResourceType<T>,
  name: string,
  timeoutMs: number,
  view: (obj: T) => { line: string; done: boolean },
): Promise<T> {
  const deadline = s.now() + timeoutMs;
  let last = '';
  for (;;) {
    const obj = await getNamed(s, type, name);
    if (!obj) throw new PluginError(`${type.kind} ${s.namespace}/${name} was deleted while waiting for it`);
    const { line, done } = view(obj);
    if (line !== last) s.io.stderr.write(`${type.kind} ${s.namespace}/${name}: ${line}\n`);
    last = line;
    if (done) return obj;
    if (s.now() >= deadline) throw new PluginError(`${type.kind} ${s.namespace}/${name} is still ${line} after ${Math.round(timeoutMs / 1000)} s; it goes on without the plugin (kubectl get ${type.kind.toLowerCase()} -n ${s.namespace} ${name} -w)`);
    await sleep(s.pollIntervalMs);
  }
}
