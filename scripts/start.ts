// `npm start`: the main job. Brings localkube up in .localkube/ (building or reusing everything it needs),
// leaves it running, and prints its state and what to try next. `npx localkube down` stops it.
import { join } from 'node:path';
import { LocalKube } from '../packages/localkube/src/index.ts';
import { progress } from '../packages/localkube/src/progress.ts';

const root = join(import.meta.dirname, '..');
const stateDir = join(root, '.localkube');

let kube: LocalKube;
try {
  kube = await LocalKube.attach(stateDir);
  progress(`localkube is already running in ${stateDir}`);
} catch {
  kube = await LocalKube.start({ nodes: 3, stateDir, detach: true });
}
const kubectl = join(stateDir, 'bin', 'kubectl');
const show = async (title: string, args: string[]): Promise<void> => {
  process.stdout.write(`\n$ kubectl ${args.join(' ')}\n${await kube.kubectl(args)}`);
  void title;
};
await show('nodes', ['get', 'nodes', '-o', 'wide', '-L', 'topology.kubernetes.io/zone']);
await show('system pods', ['get', 'pods', '-A', '-o', 'wide']);
kube.client.close();
process.stdout.write(`
localkube is running (${kube.nodes.length} nodes). Try:
  export KUBECONFIG=${kube.kubeconfig}
  ${kubectl} get nodes
  ${kubectl} run etcd --image=gcr.io/etcd-development/etcd:v3.6.16 --command -- etcd
  npx localkube fault stop-node node-2        # power a node off; start-node brings it back
  npx localkube status
Stop it with: npx localkube down
`);
