// `quorum redis install|uninstall|manifests|image`: the Redis operator's lifecycle. Flags are parsed first (kubectl's
// --kubeconfig and --context among them) and the command runs in the kit's frame (usage errors exit 2, failures 1).
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { printAndLoadImages, runCommand, UsageError, wholeNumberFlag, type Command, type CommandIO } from '@quorum/kit';
import { Client } from '@quorum/runtime';
import { operatorManifests, type ManifestOptions } from '../deploy/manifests.ts';

export const REDIS_USAGE = `usage: quorum redis <install|uninstall|manifests|image> [options]
  install      installs or updates the Redis operator (CRD, RBAC, Deployment, admission webhook) and waits until it serves
  uninstall    removes the operator; the CRD, every Redis, its pods, claims and Secrets stay
  manifests    prints what install applies (YAML)
  image        builds the operator's image and the Redis 7.0.15 image (OCI archives), prints "NAME ARCHIVE"
               for each; --load-with COMMAND loads them (e.g. --load-with 'npx localkube load-image')
options:
  --namespace NS           where the operator runs (default quorum-system)
  --namespaces A,B         the tenant namespaces whose Redises the operator manages, with a Role and RoleBinding
                           in each (default: default; kube-system is refused); each must exist
  --cluster-wide           every namespace, with a ClusterRole (instead of --namespaces)
  --image IMAGE            the operator's image
  --redis-repository REPO  the server image's repository; its tag is spec.version (default quorum.dev/redis)
  --no-webhooks            no admission webhook (the credentials check of RedisBackups: the operator's label check remains)
  --ca-rotation-overlap-seconds N
                           how long a CA rotation trusts both CAs before the servers present the new one's
                           certificates: the time clients have to read the two-CA ca.crt (default 604800, 7 days)
  --no-wait                install: do not wait for the rollout
  --load-with COMMAND      image
  --kubeconfig FILE  --context NAME`;

const ACTIONS = ['install', 'uninstall', 'manifests', 'image'] as const;

interface RedisArgs {
  help: boolean;
  action: (typeof ACTIONS)[number];
  manifest: ManifestOptions;
  wait: boolean;
  loadWith?: string;
  connection: { kubeconfig?: string; context?: string };
}

export function parseRedisArgs(argv: readonly string[]): RedisArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        namespace: { type: 'string', short: 'n' },
        namespaces: { type: 'string' },
        'cluster-wide': { type: 'boolean', default: false },
        image: { type: 'string' },
        'redis-repository': { type: 'string' },
        'no-wait': { type: 'boolean', default: false },
        'no-webhooks': { type: 'boolean', default: false },
        'ca-rotation-overlap-seconds': { type: 'string' },
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
  if (values.help) return { help: true, action: 'install', manifest: {}, wait: true, connection: {} };
  const action = positionals[0] as RedisArgs['action'];
  if (!ACTIONS.includes(action) || positionals.length > 1) throw new UsageError(`expected one of ${ACTIONS.join(', ')}, got ${JSON.stringify(positionals.join(' '))}`);
  const caRotationOverlapSeconds = wholeNumberFlag('ca-rotation-overlap-seconds', values['ca-rotation-overlap-seconds']);
  return {
    help: false,
    action,
    manifest: {
      ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
      ...(values.namespaces !== undefined ? { namespaces: values.namespaces.split(',').map((ns) => ns.trim()).filter(Boolean) } : {}),
      ...(values['cluster-wide'] ? { clusterWide: true } : {}),
      ...(values.image !== undefined ? { image: values.image } : {}),
      ...(values['redis-repository'] !== undefined ? { redisRepository: values['redis-repository'] } : {}),
      ...(values['no-webhooks'] ? { webhooks: false } : {}),
      ...(caRotationOverlapSeconds !== undefined ? { caRotationOverlapSeconds } : {}),
    },
    wait: !values['no-wait'],
    ...(values['load-with'] !== undefined ? { loadWith: values['load-with'] } : {}),
    connection: { ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}), ...(values.context !== undefined ? { context: values.context } : {}) },
  };
}

async function act(args: RedisArgs, io: CommandIO): Promise<void> {
  if (args.action === 'manifests') {
    io.stdout.write(operatorManifests(args.manifest).map((o) => stringify(o)).join('---\n'));
    return;
  }
  if (args.action === 'image') {
    // Build-time modules (they load @quorum/images), loaded only here.
    const [{ buildOperatorImage }, { buildRedisImage }] = await Promise.all([import('../deploy/image.ts'), import('../image/redis.ts')]);
    await printAndLoadImages([await buildOperatorImage(), await buildRedisImage()], args.loadWith, io);
    return;
  }
  const { install, uninstall } = await import('../deploy/install.ts');
  const client = await Client.connect(args.connection);
  try {
    if (args.action === 'install') await install(client, { ...args.manifest, wait: args.wait, log: (line) => void io.stderr.write(`${line}\n`) });
    else await uninstall(client, args.manifest);
  } finally {
    client.close();
  }
}

export const commands: readonly Command[] = [
  { name: 'redis', synopsis: '<install|uninstall|manifests|image>', summary: 'the Redis operator: install, uninstall, print its manifests, build its images', run: (argv, io) => runCommand({ program: 'quorum redis', usage: REDIS_USAGE, parse: () => parseRedisArgs(argv), act }, io) },
];
