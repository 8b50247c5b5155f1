// `quorum manifests|install|uninstall|image`: the etcd operator's commands, as the `quorum` CLI
// (packages/cli) lists and runs them. Each parses its own options and resolves with its exit code.
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { printAndLoadImages, runCommand, UsageError, wholeNumberFlag, type Command, type CommandIO } from '@quorum/kit';
import { Client } from '@quorum/runtime';
import { install, uninstall } from '../deploy/install.ts';
import { operatorManifests, tenantNamespaces, type ManifestOptions } from '../deploy/manifests.ts';

export const OPERATOR_USAGE = `usage: quorum manifests|install|uninstall [options]
  manifests                 print every object that runs the operator (YAML)
  install                   apply them to the cluster of --kubeconfig / $KUBECONFIG and wait until ready
  uninstall                 remove the operator; etcd clusters, their pods and data stay
options: --namespace NS (quorum-system)  --image IMAGE  --peer-wait-image IMAGE  --replicas N  --no-webhooks
         --kubeconfig FILE  --crashloop-grace-seconds N  --ca-rotation-overlap-seconds N
         --namespaces A,B          the tenant namespaces whose EtcdClusters the operator manages, with a Role in
                                   each (default: default); each must exist; kube-system is refused
         --cluster-wide            every namespace, with a ClusterRole (instead of --namespaces)`;

export const IMAGE_USAGE = `usage: quorum image [--image NAME] [--peer-wait-image NAME] [--load-with COMMAND]
  Builds the operator's image and the peer-wait image its member pods need (OCI archives) and prints one
  "NAME ARCHIVE" line per image. With --load-with, runs COMMAND ARCHIVE through sh for each (its output goes
  to stderr), e.g. --load-with 'npx localkube load-image' for the local test cluster, or a script that pushes
  to your registry. Then: quorum install --image NAME --peer-wait-image NAME`;

const OPERATOR_FLAGS = {
  namespace: { type: 'string' },
  image: { type: 'string' },
  'peer-wait-image': { type: 'string' },
  replicas: { type: 'string' },
  'no-webhooks': { type: 'boolean', default: false },
  kubeconfig: { type: 'string' },
  'crashloop-grace-seconds': { type: 'string' },
  'ca-rotation-overlap-seconds': { type: 'string' },
  namespaces: { type: 'string' },
  'cluster-wide': { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

const IMAGE_FLAGS = {
  image: { type: 'string' },
  'peer-wait-image': { type: 'string' },
  'load-with': { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** `a,b` (spaces allowed around the commas) as a list. */
const namespaceList = (text: string): string[] =>
  text
    .split(',')
    .map((ns) => ns.trim())
    .filter(Boolean);

interface OperatorArgs {
  help: boolean;
  kubeconfig?: string;
  options: ManifestOptions;
}

export function parseOperatorArgs(argv: readonly string[]): OperatorArgs {
  let values;
  try {
    values = parseArgs({ args: [...argv], allowPositionals: false, strict: true, options: OPERATOR_FLAGS }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const options: ManifestOptions = {
    namespace: values.namespace,
    image: values.image,
    peerWaitImage: values['peer-wait-image'],
    replicas: wholeNumberFlag('replicas', values.replicas),
    webhooks: !values['no-webhooks'],
    crashLoopGraceSeconds: wholeNumberFlag('crashloop-grace-seconds', values['crashloop-grace-seconds']),
    caRotationOverlapSeconds: wholeNumberFlag('ca-rotation-overlap-seconds', values['ca-rotation-overlap-seconds']),
    ...(values.namespaces !== undefined ? { namespaces: namespaceList(values.namespaces) } : {}),
    ...(values['cluster-wide'] ? { clusterWide: true } : {}),
  };
  try {
    tenantNamespaces(options);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return { help: values.help, options, ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}) };
}

/**
 * A command of manifests/install/uninstall: the options parsed (a wrong command line prints the usage and
 * exits 2), then `act`; a failure is printed in its own words and exits 1.
 */
function operatorCommand(name: string, summary: string, act: (args: OperatorArgs, io: CommandIO) => Promise<void>): Command {
  return { name, summary, run: (argv, io) => runCommand({ program: `quorum ${name}`, usage: OPERATOR_USAGE, parse: () => parseOperatorArgs(argv), act }, io) };
}

async function withClient(kubeconfig: string | undefined, use: (client: Client) => Promise<void>): Promise<void> {
  const client = await Client.connect({ kubeconfig });
  try {
    await use(client);
  } finally {
    client.close();
  }
}

interface ImageArgs {
  help: boolean;
  image?: string;
  peerWaitImage?: string;
  loadWith?: string;
}

export function parseImageArgs(argv: readonly string[]): ImageArgs {
  let values;
  try {
    values = parseArgs({ args: [...argv], allowPositionals: false, strict: true, options: IMAGE_FLAGS }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return {
    help: values.help,
    ...(values.image !== undefined ? { image: values.image } : {}),
    ...(values['peer-wait-image'] !== undefined ? { peerWaitImage: values['peer-wait-image'] } : {}),
    ...(values['load-with'] !== undefined ? { loadWith: values['load-with'] } : {}),
  };
}

/** Both images, since the operator's member pods need the peer-wait init container wherever it runs. */
async function buildImages(args: ImageArgs, io: CommandIO): Promise<void> {
  // Build-time packages, loaded only here.
  const { buildOperatorImage } = await import('../deploy/image.ts');
  const { buildPeerWaitImage } = await import('../deploy/peer-wait-image.ts');
  const operator = await buildOperatorImage(args.image);
  const peerWait = await buildPeerWaitImage(args.peerWaitImage);
  await printAndLoadImages([operator, peerWait], args.loadWith, io);
  if (args.loadWith !== undefined) io.stderr.write(`quorum image: loaded; install with --image ${operator.name} --peer-wait-image ${peerWait.name}\n`);
}

export const commands: readonly Command[] = [
  operatorCommand('manifests', 'print every object that runs the operator (YAML)', ({ options }, io) => {
    io.stdout.write(operatorManifests(options).map((o) => stringify(o, { lineWidth: 0 })).join('---\n'));
    return Promise.resolve();
  }),
  operatorCommand('install', 'apply them to the cluster of --kubeconfig / $KUBECONFIG and wait until ready', ({ options, kubeconfig }, io) =>
    withClient(kubeconfig, (client) => install(client, { ...options, log: (m) => void io.stderr.write(`quorum: ${m}\n`) })),
  ),
  operatorCommand('uninstall', 'remove the operator; etcd clusters, their pods and data stay', ({ options, kubeconfig }, io) =>
    withClient(kubeconfig, async (client) => {
      await uninstall(client, options);
      io.stderr.write('quorum: operator removed; EtcdClusters and their data are untouched\n');
    }),
  ),
  {
    name: 'image',
    synopsis: '[--load-with COMMAND]',
    summary: 'build the operator and peer-wait images (OCI archives) and print one "NAME ARCHIVE"\nline per image; --load-with runs COMMAND ARCHIVE for each',
    run: (argv, io) => runCommand({ program: 'quorum image', usage: IMAGE_USAGE, parse: () => parseImageArgs(argv), act: buildImages }, io),
  },
];
