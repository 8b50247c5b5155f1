// `quorum history install`: the recorder installed or updated with the least-privilege RBAC derived from
// ChangeRecorder specs (deploy/install.ts): namespaced unless --cluster-wide. `--print` writes what it would apply, as YAML, and applies nothing.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import { runCommand, type CommandIO } from '@quorum/kit';
import { Client } from '@quorum/runtime';
import type { ChangeRecorder } from '../api/changerecorder.ts';
import { installRecorder, planRecorderInstall, type RecorderInstallOptions } from '../deploy/install.ts';
import { webhookCallerPeers } from '../deploy/manifests.ts';
import { UsageError } from './errors.ts';

export const INSTALL_USAGE = `usage: quorum history install [-f FILE]... [options]
  Installs or updates the change recorder. Its RBAC grants list and watch on exactly the kinds the
  ChangeRecorders ask for (resolved through the API server's discovery), by a Role in each namespace they
  name (never kube-system): those in the files, and those already in the cluster unless --ignore-existing.
  A ChangeRecorder that chooses namespaces by selector or all needs --cluster-wide. Secrets are recorded
  only when a ChangeRecorder lists them. The files' ChangeRecorders are then created or updated.
  When one of those ChangeRecorders sets spec.attribution.users, the admission webhook that tells records
  who made each change is installed too (UPDATE and DELETE of the same kinds, failurePolicy Ignore); an
  install without any removes it.
options:
  -f, --filename FILE           ChangeRecorders (YAML, several documents allowed); repeatable
  --ignore-existing             derive the role from the files only (recorders already in the cluster
                                that ask for other kinds will be refused them)
  --cluster-wide                grant the recorded kinds in every namespace (a ClusterRole), as
                                namespace selectors and spec.namespaces.all need
  --print                       print the objects it would apply (YAML) and apply nothing
  --no-wait                     do not wait for the recorder to roll out and the ChangeRecorders to be Ready
  --image IMAGE                 the recorder's image
  --storage-size SIZE           the records' volume (default 1Gi; a bound claim only grows)
  --storage-class NAME          its StorageClass
  --storage-secret NAME         an object store's credentials Secret to mount (beside those the
                                ChangeRecorders name); repeatable
  --history-group GROUP         who may reach the history endpoint (default system:authenticated); repeatable
  --users-webhook               install the users webhook even if no ChangeRecorder asks for users yet
  --webhook-client-ca FILE      the CA (PEM) of the client certificate the API server presents to
                                admission webhooks: the users webhook then answers only callers with
                                one (without it, any pod that reaches it can forge who changed what)
  --webhook-client-name NAME    a common name allowed among those certificates; repeatable (default any)
  --api-server-cidr CIDR        the API server's addresses: the recorder's NetworkPolicy admits the users
                                webhook's port from these only (managed clusters: docs/recorder.md says
                                where to find them); repeatable. Default: every address but the pods'
  --pod-cidr CIDR               the cluster's pod CIDRs, refused the webhook's port when --api-server-cidr
                                is not given (default: the Nodes' spec.podCIDRs); repeatable
  --log-level LEVEL             the recorder's log level (default info)
  --recorder-namespace NS       where the recorder runs (default quorum-system)
  --kubeconfig FILE  --context NAME`;

export interface InstallArgs {
  help: boolean;
  /** Read at install into options.webhookClientCA. */
  webhookClientCAFile?: string;
  files: string[];
  print: boolean;
  options: RecorderInstallOptions;
  kubeconfig?: string;
  context?: string;
}

export function parseInstallArgs(argv: readonly string[], env: Record<string, string | undefined> = {}): InstallArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: false,
      strict: true,
      options: {
        filename: { type: 'string', short: 'f', multiple: true },
        'ignore-existing': { type: 'boolean', default: false },
        'cluster-wide': { type: 'boolean', default: false },
        print: { type: 'boolean', default: false },
        'no-wait': { type: 'boolean', default: false },
        image: { type: 'string' },
        'storage-size': { type: 'string' },
        'storage-class': { type: 'string' },
        'storage-secret': { type: 'string', multiple: true },
        'history-group': { type: 'string', multiple: true },
        'users-webhook': { type: 'boolean', default: false },
        'webhook-client-ca': { type: 'string' },
        'webhook-client-name': { type: 'string', multiple: true },
        'api-server-cidr': { type: 'string', multiple: true },
        'pod-cidr': { type: 'string', multiple: true },
        'log-level': { type: 'string' },
        'recorder-namespace': { type: 'string' },
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const v = parsed.values;
  if (v.print && v['no-wait']) throw new UsageError('--no-wait is for an install; --print applies nothing');
  const options: RecorderInstallOptions = {
    namespace: v['recorder-namespace'] ?? env['QUORUM_RECORDER_NAMESPACE'] ?? 'quorum-system',
    includeExisting: !v['ignore-existing'],
    wait: !v['no-wait'],
  };
  if (v.image !== undefined) options.image = v.image;
  if (v['storage-size'] !== undefined) options.storageSize = v['storage-size'];
  if (v['storage-class'] !== undefined) options.storageClassName = v['storage-class'];
  if (v['storage-secret'] !== undefined) options.storageSecrets = v['storage-secret'];
  if (v['history-group'] !== undefined) options.historyGroups = v['history-group'];
  if (v['users-webhook']) options.usersWebhook = true;
  if (v['webhook-client-name'] !== undefined) options.webhookClientNames = v['webhook-client-name'];
  if (v['api-server-cidr'] !== undefined) options.apiServerCIDRs = cidrsOf('--api-server-cidr', v['api-server-cidr']);
  if (v['pod-cidr'] !== undefined) options.podCIDRs = cidrsOf('--pod-cidr', v['pod-cidr']);
  if (v['cluster-wide']) options.clusterWide = true;
  if (v['log-level'] !== undefined) options.logLevel = v['log-level'];
  return {
    help: v.help,
    files: v.filename ?? [],
    print: v.print,
    options,
    ...(v['webhook-client-ca'] !== undefined ? { webhookClientCAFile: v['webhook-client-ca'] } : {}),
    ...(v.kubeconfig !== undefined ? { kubeconfig: v.kubeconfig } : {}),
    ...(v.context !== undefined ? { context: v.context } : {}),
  };
}

/** The CIDRs of a repeated option, refused (naming the option) as the manifests would refuse them. */
function cidrsOf(option: string, values: string[]): string[] {
  try {
    webhookCallerPeers({ podCIDRs: values });
  } catch (err) {
    throw new UsageError(`${option}: ${(err as Error).message.replace(/^podCIDRs: /, '')}`);
  }
  return values;
}

/** The ChangeRecorders of a YAML file; anything else in it is refused by file and document. */
export function changeRecordersOf(file: string, text: string): ChangeRecorder[] {
  const out: ChangeRecorder[] = [];
  for (const [i, doc] of parseAllDocuments(text).entries()) {
    if (doc.errors.length > 0) throw new UsageError(`${file}: document ${i + 1}: ${doc.errors[0]!.message}`);
    const value = doc.toJS() as unknown;
    if (value === null || value === undefined) continue;
    const obj = value as Partial<ChangeRecorder>;
    if (typeof value !== 'object' || obj.kind !== 'ChangeRecorder') throw new UsageError(`${file}: document ${i + 1} is a ${typeof value === 'object' ? (obj.kind ?? 'document without kind') : typeof value}, not a ChangeRecorder`);
    out.push(obj as ChangeRecorder);
  }
  return out;
}

/** Runs `quorum history install <argv>`; resolves with the exit code (0 done, 1 failed, 2 usage). */
export function installCommand(argv: readonly string[], io: CommandIO): Promise<number> {
  return runCommand({ program: 'quorum history install', usage: INSTALL_USAGE, parse: () => parseInstallArgs(argv, io.env ?? process.env), act: install }, io);
}

async function install(args: InstallArgs, io: CommandIO): Promise<void> {
  const recorders: ChangeRecorder[] = [];
  for (const file of args.files) recorders.push(...changeRecordersOf(file, await readFile(file, 'utf8')));
  const client = await Client.connect({ kubeconfig: args.kubeconfig, context: args.context });
  try {
    const options = { ...args.options, recorders, ...(args.webhookClientCAFile !== undefined ? { webhookClientCA: await readFile(args.webhookClientCAFile, 'utf8') } : {}) };
    if (args.print) {
      const plan = await planRecorderInstall(client, options);
      for (const warning of plan.warnings) io.stderr.write(`quorum history install: warning: ${warning}\n`);
      io.stdout.write([...plan.manifests, ...plan.recorders].map((o) => stringify(o, { lineWidth: 0 })).join('---\n'));
      return;
    }
    const result = await installRecorder(client, { ...options, log: (m) => void io.stderr.write(`quorum history install: ${m}\n`) });
    for (const r of result.ready) io.stdout.write(`ChangeRecorder ${r.name}: Ready ${r.status} (${r.reason}) ${r.message}\n`);
    const notReady = result.ready.filter((r) => r.status !== 'True');
    io.stdout.write(`recorder installed in ${args.options.namespace}${notReady.length ? `; not Ready yet: ${notReady.map((r) => r.name).join(', ')} (kubectl describe changerecorder NAME)` : ''}\n`);
  } finally {
    client.close();
  }
}
