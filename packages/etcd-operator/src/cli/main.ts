// `npx quorum <command>`: manifests, install, uninstall, image, and history (the change recorder's).
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { Client } from '@quorum/runtime';
import { install, uninstall } from '../deploy/install.ts';
import { operatorManifests, type ManifestOptions } from '../deploy/manifests.ts';

const USAGE = `usage: quorum <command> [options]
  manifests                 print every object that runs the operator (YAML)
  install                   apply them to the cluster of --kubeconfig / $KUBECONFIG and wait until ready
  uninstall                 remove the operator; etcd clusters, their pods and data stay
  image [--load STATE_DIR]  build the operator and peer-wait images as OCI archives (and load them into
                            localkube); prints one "NAME ARCHIVE" line per image
  history list|show|diff|restore|install ...
                            the change recorder: its records, and installing it (\`quorum history --help\`;
                            docs/recorder.md)
options: --namespace NS (quorum-system)  --image IMAGE  --peer-wait-image IMAGE  --replicas N  --no-webhooks
         --kubeconfig FILE  --crashloop-grace-seconds N  --ca-rotation-overlap-seconds N
         --watch-namespace NS      watch only NS (which must exist), with a Role there instead of a ClusterRole`;

// `history` has flags of its own (-n, --record): it parses them itself, before the strict parse below.
if (process.argv[2] === 'history') {
  const { historyCommand } = await import('@quorum/recorder');
  process.exit(await historyCommand(process.argv.slice(3)));
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    namespace: { type: 'string' },
    image: { type: 'string' },
    'peer-wait-image': { type: 'string' },
    replicas: { type: 'string' },
    'no-webhooks': { type: 'boolean', default: false },
    kubeconfig: { type: 'string' },
    'crashloop-grace-seconds': { type: 'string' },
    'ca-rotation-overlap-seconds': { type: 'string' },
    'watch-namespace': { type: 'string' },
    load: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});

const options: ManifestOptions = {
  namespace: values.namespace,
  image: values.image,
  peerWaitImage: values['peer-wait-image'],
  replicas: values.replicas ? Number(values.replicas) : undefined,
  webhooks: !values['no-webhooks'],
  crashLoopGraceSeconds: values['crashloop-grace-seconds'] ? Number(values['crashloop-grace-seconds']) : undefined,
  caRotationOverlapSeconds: values['ca-rotation-overlap-seconds'] ? Number(values['ca-rotation-overlap-seconds']) : undefined,
  watchNamespace: values['watch-namespace'],
};

async function main(): Promise<void> {
  switch (positionals[0]) {
    case 'manifests':
      process.stdout.write(operatorManifests(options).map((o) => stringify(o, { lineWidth: 0 })).join('---\n'));
      return;
    case 'install': {
      const client = await Client.connect({ kubeconfig: values.kubeconfig });
      await install(client, { ...options, log: (m) => process.stderr.write(`quorum: ${m}\n`) });
      client.close();
      return;
    }
    case 'uninstall': {
      const client = await Client.connect({ kubeconfig: values.kubeconfig });
      await uninstall(client, options);
      client.close();
      process.stderr.write('quorum: operator removed; EtcdClusters and their data are untouched\n');
      return;
    }
    case 'image': {
      // Both images, since the operator's member pods need the peer-wait init container wherever it runs.
      const { buildOperatorImage } = await import('../deploy/image.ts');
      const { buildPeerWaitImage } = await import('../deploy/peer-wait-image.ts');
      const operator = await buildOperatorImage(values.image);
      const peerWait = await buildPeerWaitImage(values['peer-wait-image']);
      const images = [operator, peerWait];
      for (const image of images) process.stdout.write(`${image.name} ${image.archive}\n`);
      if (values.load) {
        const { LocalKube } = await import('@quorum/localkube');
        const kube = await LocalKube.attach(values.load);
        for (const image of images) await kube.loadImage(image.archive);
        kube.client.close();
        process.stderr.write(`quorum: loaded; install with --image ${operator.name} --peer-wait-image ${peerWait.name}\n`);
      }
      return;
    }
    default:
      process.stdout.write(USAGE + '\n');
      if (positionals[0] && positionals[0] !== 'help') process.exitCode = 2;
  }
}

try {
  await main();
} catch (err) {
  process.stderr.write(`quorum: ${(err as Error).message}\n`);
  process.exitCode = 1;
}
