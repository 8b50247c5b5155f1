// The supervisor: the one long-lived process of a local cluster. It starts every component as its child,
// answers commands on the control socket, and takes everything down on `down`, on SIGTERM/SIGINT, on a
// failed start, or (with --watch-parent) when the process that started it dies, however it died.
//
//   node supervisor.ts --state-dir DIR --nodes N [--watch-parent]
import { createServer } from 'node:http';
import { rm, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ensureBinaries } from './build/go-binaries.ts';
import { adminKubeconfig } from './cluster/components.ts';
import { Cluster, CONTROL_PLANE_COMPONENTS, type ControlPlaneComponent } from './cluster/cluster.ts';
import { controlSocket, statusFile, type SupervisorStatus } from './cluster/control.ts';
import { networkInUse } from './cluster/network.ts';
import { topology } from './cluster/topology.ts';
import { ensureImages } from './images/catalog.ts';

const { values } = parseArgs({
  options: { 'state-dir': { type: 'string' }, nodes: { type: 'string', default: '3' }, 'watch-parent': { type: 'boolean', default: false } },
});
const stateDir = values['state-dir'];
if (!stateDir) throw new Error('supervisor: --state-dir is required');
const topo = topology(stateDir, Number(values.nodes));
const started = performance.now();
const log = (message: string): void => void process.stdout.write(`${new Date().toISOString()} ${message}\n`);

let status: SupervisorStatus = { phase: 'starting', step: 'binaries and images', pid: process.pid, nodes: topo.nodes.map((n) => n.name), kubeconfig: adminKubeconfig(topo) };
let writing = Promise.resolve();
function setStatus(change: Partial<SupervisorStatus>): Promise<void> {
  status = { ...status, ...change };
  const snapshot = JSON.stringify(status, null, 2);
  writing = writing.then(() => writeFile(statusFile(stateDir!), snapshot));
  return writing;
}

let cluster: Cluster | undefined;
let stopping: Promise<void> | undefined;
function stop(reason: string): Promise<void> {
  stopping ??= (async () => {
    log(`stopping: ${reason}`);
    const failed = status.phase === 'failed';
    await setStatus({ phase: failed ? 'failed' : 'stopping', step: 'teardown' });
    try {
      if (cluster) await cluster.down();
    } catch (err) {
      log(`teardown error: ${(err as Error).stack ?? String(err)}`);
    }
    server.close();
    await rm(controlSocket(stateDir!), { force: true });
    await setStatus(failed ? {} : { phase: 'stopped', step: '' });
    log('stopped');
    process.exit(failed ? 1 : 0);
  })();
  return stopping;
}

type Handler = (args: Record<string, string>) => Promise<unknown>;
const handlers: Record<string, Handler> = {
  status: () => Promise.resolve(status),
  down: () => {
    setTimeout(() => void stop('down requested'), 10);
    return Promise.resolve('stopping');
  },
  'load-image': (a) => need(cluster).loadImage(a['archive']!),
  'kill-container': (a) => need(cluster).killContainer(a['namespace']!, a['pod']!, a['container']),
  'in-pod-network': (a) => need(cluster).inPodNetwork(a['namespace']!, a['pod']!, JSON.parse(a['argv'] ?? '[]') as string[]),
  'stop-node': (a) => need(cluster).stopNode(a['node']!),
  'start-node': (a) => need(cluster).startNode(a['node']!),
  'cut-network': (a) => need(cluster).cutNetwork(a['node']!),
  'restore-network': (a) => need(cluster).restoreNetwork(a['node']!),
  'wipe-volume': (a) => need(cluster).wipeVolume(a['namespace']!, a['claim']!),
  'restart-apiserver': () => need(cluster).restartApiserver(),
  'control-plane': () => Promise.resolve(need(cluster).controlPlane()),
  'restart-component': (a) => {
    const name = a['name'] as ControlPlaneComponent;
    if (!CONTROL_PLANE_COMPONENTS.includes(name)) throw new Error(`restart-component: ${JSON.stringify(a['name'])} is not one of ${CONTROL_PLANE_COMPONENTS.join(', ')}`);
    return need(cluster).restartComponent(name);
  },
};

function need(c: Cluster | undefined): Cluster {
  if (!c || status.phase !== 'ready') throw new Error(`cluster is ${status.phase}`);
  return c;
}

const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8').on('data', (d: string) => (body += d));
  req.on('end', () => {
    const handler = handlers[(req.url ?? '/').slice(1)];
    const reply = (code: number, payload: unknown): void => void res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    if (!handler) return reply(404, { error: `unknown command ${req.url}` });
    void (async () => {
      try {
        reply(200, { result: (await handler((body ? JSON.parse(body) : {}) as Record<string, string>)) ?? null });
      } catch (err) {
        reply(500, { error: (err as Error).message });
      }
    })();
  });
});

process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGHUP', () => void stop('SIGHUP'));
if (values['watch-parent']) {
  // The parent holds our stdin open for as long as it lives; EOF means it is gone, however it died.
  process.stdin.on('end', () => void stop('parent exited'));
  process.stdin.on('error', () => void stop('parent exited'));
  process.stdin.resume();
}
process.on('uncaughtException', (err) => {
  log(`uncaught: ${err.stack ?? String(err)}`);
  void setStatus({ phase: 'failed', error: err.message }).then(() => stop('uncaught exception'));
});

try {
  if (await networkInUse()) throw new Error('another localkube is running on this machine (interface lkube0 exists); run `npx localkube down --state-dir <its dir>` first');
  await rm(controlSocket(stateDir), { force: true });
  await new Promise<void>((resolve) => server.listen(controlSocket(stateDir), resolve));
  await setStatus({});
  const bins = await ensureBinaries();
  const images = await ensureImages(bins);
  cluster = new Cluster(topo, bins, images, log);
  await cluster.up((step) => {
    log(`step: ${step}`);
    void setStatus({ step });
  });
  await setStatus({ phase: 'ready', step: '', upSeconds: Math.round((performance.now() - started) / 100) / 10 });
  log(`ready in ${status.upSeconds}s`);
} catch (err) {
  log(`start failed: ${(err as Error).stack ?? String(err)}`);
  await setStatus({ phase: 'failed', error: (err as Error).message });
  await stop('start failed');
}
