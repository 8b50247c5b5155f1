// `quorum rbac install|uninstall|manifests|import|image`: the RBAC manager's lifecycle and the migration from
// FairwindsOps rbac-manager. Each subcommand parses its flags (kubectl's --kubeconfig and --context among them)
// and runs in the kit's command frame (usage errors exit 2, failures exit 1 in their own words).
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { printAndLoadImages, runCommand, UsageError, type CommandIO } from '@quorum/kit';
import { Client } from '@quorum/runtime';
import { installRbacManager, uninstallRbacManager } from '../deploy/install.ts';
import { rbacManagerManifests, sampleDefinition, type RbacManagerManifestOptions } from '../deploy/manifests.ts';
import { importFairwindsDefinitions } from '../migrate/fairwinds.ts';

export const RBAC_USAGE = `usage: quorum rbac <install|uninstall|manifests|import|image> [options]
  install      installs or updates the RBAC manager (CRD, RBAC, Deployment, fail-closed escalation webhook)
               and waits until it serves
  uninstall    removes the manager and its webhook; the CRD, every RBACDefinition and their bindings stay
  manifests    prints what install applies (YAML); --example adds an example RBACDefinition
  import       converts FairwindsOps rbac-manager's definitions (rbacmanager.reactiveops.io/v1beta1) and adopts
               the bindings they made, in place (stop FairwindsOps' controller first; docs/rbac.md, Migrating)
  image        builds the manager's image (OCI archive), prints "NAME ARCHIVE"; --load-with COMMAND loads it
options:
  --namespace NS           where the manager runs (default quorum-system)
  --image IMAGE            the manager's image
  --replicas N             manager replicas (default 2: the webhook is fail-closed)
  --bindable-role NAME     restrict the roles the manager may bind (repeatable; default any)
  --no-wait                install: do not wait for the rollout
  --example                manifests: add an example RBACDefinition
  --dry-run                import: say what would be imported, write nothing
  --name NAME  --load-with COMMAND    image
  --kubeconfig FILE  --context NAME`;

interface RbacArgs {
  help: boolean;
  action: 'install' | 'uninstall' | 'manifests' | 'import' | 'image';
  manifest: RbacManagerManifestOptions;
  wait: boolean;
  example: boolean;
  dryRun: boolean;
  name?: string;
  loadWith?: string;
  connection: { kubeconfig?: string; context?: string };
}

const ACTIONS = ['install', 'uninstall', 'manifests', 'import', 'image'] as const;

export function parseRbacArgs(argv: readonly string[]): RbacArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        namespace: { type: 'string', short: 'n' },
        image: { type: 'string' },
        replicas: { type: 'string' },
        'bindable-role': { type: 'string', multiple: true },
        'no-wait': { type: 'boolean', default: false },
        example: { type: 'boolean', default: false },
        'dry-run': { type: 'boolean', default: false },
        name: { type: 'string' },
        'load-with': { type: 'string' },
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  const action = positionals[0];
  if (values.help) return { help: true, action: 'install', manifest: {}, wait: true, example: false, dryRun: false, connection: {} };
  if (!ACTIONS.includes(action as RbacArgs['action']) || positionals.length > 1) throw new UsageError(`expected one of ${ACTIONS.join(', ')}, got ${JSON.stringify(positionals.join(' '))}`);
  const replicas = values.replicas === undefined ? undefined : Number(values.replicas);
  if (replicas !== undefined && (!Number.isInteger(replicas) || replicas < 1)) throw new UsageError(`--replicas must be a whole number of at least 1, got ${values.replicas}`);
  return {
    help: false,
    action: action as RbacArgs['action'],
    manifest: {
      ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
      ...(values.image !== undefined ? { image: values.image } : {}),
      ...(replicas !== undefined ? { replicas } : {}),
      ...(values['bindable-role'] !== undefined ? { bindableRoles: values['bindable-role'] } : {}),
    },
    wait: !values['no-wait'],
    example: values.example,
    dryRun: values['dry-run'],
    ...(values.name !== undefined ? { name: values.name } : {}),
    ...(values['load-with'] !== undefined ? { loadWith: values['load-with'] } : {}),
    connection: { ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}), ...(values.context !== undefined ? { context: values.context } : {}) },
  };
}

export function rbacCommand(argv: readonly string[], io: CommandIO): Promise<number> {
  return runCommand({ program: 'quorum rbac', usage: RBAC_USAGE, parse: () => parseRbacArgs(argv), act }, io);
}

async function act(args: RbacArgs, io: CommandIO): Promise<void> {
  if (args.action === 'manifests') {
    const objects = [...rbacManagerManifests(args.manifest), ...(args.example ? [sampleDefinition()] : [])];
    io.stdout.write(objects.map((o) => stringify(o)).join('---\n'));
    return;
  }
  if (args.action === 'image') {
    const { buildRbacManagerImage } = await import('../deploy/image.ts');
    await printAndLoadImages([await buildRbacManagerImage(args.name)], args.loadWith, io);
    return;
  }
  const client = await Client.connect(args.connection);
  const log = (line: string): void => void io.stderr.write(`${line}\n`);
  try {
    if (args.action === 'install') await installRbacManager(client, { ...args.manifest, wait: args.wait, log });
    else if (args.action === 'uninstall') await uninstallRbacManager(client, args.manifest);
    else {
      const results = await importFairwindsDefinitions(client, { dryRun: args.dryRun, log });
      for (const r of results) io.stdout.write(`${r.name}\t${r.outcome}${r.detail ? `\t${r.detail}` : ''}\n`);
      if (results.some((r) => r.outcome !== 'imported')) throw new Error('some definitions were not imported (see above); their FairwindsOps originals are kept');
    }
  } finally {
    client.close();
  }
}
