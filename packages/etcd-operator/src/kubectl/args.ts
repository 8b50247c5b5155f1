// The command line of `kubectl quorum`: parsed and checked before any request, so a mistake costs nothing
// and says what is wrong. kubectl hands a plugin every argument after its name, flags included, so the
// plugin reads kubectl's own connection flags (--kubeconfig, --context, -n) itself.
import { parseArgs } from 'node:util';
import { UsageError } from '@quorum/kit';
import { CONNECTION_FLAGS, connectionFlags, type ConnectionFlags } from '@quorum/runtime';

export const KUBECTL_QUORUM_USAGE = `usage: kubectl quorum <command> [options]
  status [NAME]                 EtcdClusters: phase, ready members, version (current and etcd's cluster
                                version), leader, TLS, rollout, last backup, and every condition that is
                                not fine; with NAME, the whole story of one cluster
  members NAME                  the cluster's etcd members as the operator last saw them
  backup CLUSTER                create an EtcdBackup of CLUSTER now, to the destination of:
      --like NAME                 an EtcdBackup or EtcdBackupSchedule (etcdbackup/NAME,
                                  etcdbackupschedule/NAME when both exist)
      --pvc CLAIM [--path DIR]    a PersistentVolumeClaim in the namespace
      --s3-bucket B --s3-secret SECRET [--s3-endpoint URL] [--s3-region R] [--s3-prefix P]
                                  [--s3-path-style]
                                  an S3 or S3-compatible bucket
                                default: the cluster's spec.backup.destination, else the destination of
                                its only EtcdBackupSchedule
      --name NAME                 the EtcdBackup's name (default: CLUSTER-<random>)
  restore BACKUP --to CLUSTER   create an EtcdRestore: a new EtcdCluster CLUSTER from the EtcdBackup BACKUP
      --replicas N  --version V   the new cluster's spec.replicas and spec.version (default: EtcdCluster's)
      --name NAME                 the EtcdRestore's name (default: CLUSTER)
options:
  -n, --namespace NS            default: the kubeconfig context's namespace, else default
  -A, --all-namespaces          status: clusters of every namespace
  --wait                        backup, restore: follow it until it Succeeded or Failed (exit 1 if Failed)
  --timeout DURATION            with --wait: give up after this long (default 30m; e.g. 90s, 10m, 1h)
  --kubeconfig FILE             default: $KUBECONFIG, else ~/.kube/config
  --context NAME                a context of the kubeconfig (default: its current context)`;

export type Verb = 'status' | 'members' | 'backup' | 'restore';

/** Where a new backup goes, as the user named it; resolved against the cluster in plugin.ts. */
export type DestinationChoice =
  | { from: 'default' }
  | { from: 'like'; kind?: 'EtcdBackup' | 'EtcdBackupSchedule'; name: string }
  | { from: 'pvc'; claimName: string; path?: string }
  | { from: 's3'; bucket: string; credentialsSecret: string; endpoint?: string; region?: string; prefix?: string; forcePathStyle?: boolean };

/** -n as given (unset: the kubeconfig context's namespace), --kubeconfig, --context; -A is status's alone. */
export type ConnectionArgs = Omit<ConnectionFlags, 'allNamespaces'>;

/** One of the commands, to run. */
export type CommandArgs = ConnectionArgs & { help: false } & (
    | { verb: 'status'; name?: string; allNamespaces: boolean }
    | { verb: 'members'; name: string }
    | { verb: 'backup'; cluster: string; destination: DestinationChoice; backupName?: string; wait: boolean; timeoutMs: number }
    | { verb: 'restore'; backup: string; to: string; restoreName?: string; replicas?: number; version?: string; wait: boolean; timeoutMs: number }
  );

/** The command line: a command, or the usage asked for (--help, `help`, or no command). */
export type PluginArgs = { verb: 'help'; help: true } | CommandArgs;

export const DEFAULT_WAIT_TIMEOUT_MS = 30 * 60_000;
const VERBS: readonly string[] = ['status', 'members', 'backup', 'restore'];
const LIKE_KINDS: Readonly<Record<string, 'EtcdBackup' | 'EtcdBackupSchedule'>> = {
  etcdbackup: 'EtcdBackup',
  etcdbackups: 'EtcdBackup',
  etcdbackupschedule: 'EtcdBackupSchedule',
  etcdbackupschedules: 'EtcdBackupSchedule',
};

/** `90s`, `10m`, `1h30m` or plain seconds → milliseconds. */
export function parseDuration(text: string): number {
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const parts = [...text.matchAll(/(\d+)(h|m|s)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) throw new UsageError(`--timeout ${text}: not a duration (e.g. 90s, 10m, 1h)`);
  const unit = { h: 3_600_000, m: 60_000, s: 1000 } as const;
  return parts.reduce((ms, p) => ms + Number(p[1]) * unit[p[2] as keyof typeof unit], 0);
}

function parseLike(text: string): DestinationChoice {
  const slash = text.indexOf('/');
  if (slash < 0) return { from: 'like', name: text };
  const kind = LIKE_KINDS[text.slice(0, slash).toLowerCase().replace(/\.etcd\.quorum\.dev$/, '')];
  const name = text.slice(slash + 1);
  if (!kind || !name) throw new UsageError(`--like ${text}: name an EtcdBackup or an EtcdBackupSchedule (NAME, etcdbackup/NAME or etcdbackupschedule/NAME)`);
  return { from: 'like', kind, name };
}

export function parsePluginArgs(argv: readonly string[]): PluginArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        ...CONNECTION_FLAGS,
        like: { type: 'string' },
        pvc: { type: 'string' },
        path: { type: 'string' },
        's3-bucket': { type: 'string' },
        's3-secret': { type: 'string' },
        's3-endpoint': { type: 'string' },
        's3-region': { type: 'string' },
        's3-prefix': { type: 'string' },
        's3-path-style': { type: 'boolean', default: false },
        name: { type: 'string' },
        to: { type: 'string' },
        replicas: { type: 'string' },
        version: { type: 'string' },
        wait: { type: 'boolean', default: false },
        timeout: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values: v, positionals } = parsed;
  const [verb, target, ...extra] = positionals;
  if (v.help || verb === undefined || verb === 'help') return { verb: 'help', help: true };
  if (!VERBS.includes(verb)) throw new UsageError(`unknown command ${JSON.stringify(verb)}: one of ${VERBS.join(', ')}`);
  if (extra.length > 0) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);

  const { allNamespaces, ...connection } = connectionFlags(v);

  const only = (flags: string[], verbs: string): void => {
    for (const flag of flags) {
      const value = (v as Record<string, unknown>)[flag];
      if (value !== undefined && value !== false) throw new UsageError(`--${flag} is for ${verbs}`);
    }
  };
  const backupFlags = ['like', 'pvc', 'path', 's3-bucket', 's3-secret', 's3-endpoint', 's3-region', 's3-prefix', 's3-path-style'];
  const restoreFlags = ['to', 'replicas', 'version'];
  if (verb !== 'status') only(['all-namespaces'], 'status');
  if (verb !== 'backup') only(backupFlags, 'backup');
  if (verb !== 'restore') only(restoreFlags, 'restore');
  if (verb === 'status' || verb === 'members') only(['name', 'wait', 'timeout'], 'backup and restore');
  if (v.timeout !== undefined && !v.wait) throw new UsageError('--timeout is for --wait');
  const timeoutMs = v.timeout !== undefined ? parseDuration(v.timeout) : DEFAULT_WAIT_TIMEOUT_MS;

  switch (verb) {
    case 'status':
      if (allNamespaces && connection.namespace !== undefined) throw new UsageError('-n and -A exclude each other');
      if (allNamespaces && target !== undefined) throw new UsageError('status NAME reads one cluster: give its namespace with -n, not -A');
      return { verb, help: false, ...connection, allNamespaces, ...(target !== undefined ? { name: target } : {}) };
    case 'members':
      if (target === undefined) throw new UsageError('members needs the cluster: kubectl quorum members NAME [-n NS]');
      return { verb, help: false, ...connection, name: target };
    case 'backup': {
      if (target === undefined) throw new UsageError('backup needs the cluster: kubectl quorum backup CLUSTER [-n NS] [--like NAME | --pvc CLAIM | --s3-bucket B --s3-secret S]');
      const chosen = ['like', 'pvc', 's3-bucket'].filter((f) => (v as Record<string, unknown>)[f] !== undefined);
      if (chosen.length > 1) throw new UsageError(`${chosen.map((f) => `--${f}`).join(' and ')} exclude each other: one destination`);
      if (v.path !== undefined && v.pvc === undefined) throw new UsageError('--path is for --pvc');
      if (v['s3-bucket'] === undefined) {
        const s3 = ['s3-secret', 's3-endpoint', 's3-region', 's3-prefix', 's3-path-style'].find((f) => { const x = (v as Record<string, unknown>)[f]; return x !== undefined && x !== false; });
        if (s3) throw new UsageError(`--${s3} is for --s3-bucket`);
      }
      let destination: DestinationChoice = { from: 'default' };
      if (v.like !== undefined) destination = parseLike(v.like);
      else if (v.pvc !== undefined) destination = { from: 'pvc', claimName: v.pvc, ...(v.path !== undefined ? { path: v.path } : {}) };
      else if (v['s3-bucket'] !== undefined) {
        if (v['s3-secret'] === undefined) throw new UsageError('--s3-bucket needs --s3-secret: a Secret in the namespace with keys accessKeyId and secretAccessKey');
        destination = {
          from: 's3',
          bucket: v['s3-bucket'],
          credentialsSecret: v['s3-secret'],
          ...(v['s3-endpoint'] !== undefined ? { endpoint: v['s3-endpoint'] } : {}),
          ...(v['s3-region'] !== undefined ? { region: v['s3-region'] } : {}),
          ...(v['s3-prefix'] !== undefined ? { prefix: v['s3-prefix'] } : {}),
          ...(v['s3-path-style'] ? { forcePathStyle: true } : {}),
        };
      }
      return { verb, help: false, ...connection, cluster: target, destination, wait: v.wait, timeoutMs, ...(v.name !== undefined ? { backupName: v.name } : {}) };
    }
    case 'restore': {
      if (target === undefined || v.to === undefined) throw new UsageError('restore needs the backup and the new cluster: kubectl quorum restore BACKUP --to CLUSTER [-n NS]');
      let replicas: number | undefined;
      if (v.replicas !== undefined) {
        replicas = Number(v.replicas);
        if (!Number.isInteger(replicas) || replicas < 1) throw new UsageError(`--replicas ${v.replicas}: a whole number of members, at least 1`);
      }
      return {
        verb,
        help: false,
        ...connection,
        backup: target,
        to: v.to,
        wait: v.wait,
        timeoutMs,
        ...(v.name !== undefined ? { restoreName: v.name } : {}),
        ...(replicas !== undefined ? { replicas } : {}),
        ...(v.version !== undefined ? { version: v.version } : {}),
      };
    }
    default:
      throw new UsageError(`unknown command ${JSON.stringify(verb)}`);
  }
}
