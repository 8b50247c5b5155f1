// `npx localkube <command>`: up, down, status, load-image, kubeconfig, addon, fault.
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { LocalKube, down } from './api.ts';
import { readStatus } from './cluster/control.ts';
import { run } from './exec.ts';
import { defaultStateDir } from './paths.ts';
import { STORAGE_ADDONS, STORAGE_NAMESPACE, isStorageAddonName, type StorageAddonName } from './storage/addons.ts';
import { DEFAULT_RULE_FILES, DEFAULT_SCRAPE_CONFIG_FILES, readRuleFiles, readScrapeConfigFiles } from './monitoring/prometheus.ts';

const USAGE = `usage: localkube <command> [--state-dir DIR]
  up [--nodes N]                 build or reuse binaries and images, start a cluster, return when Ready
  down                           stop it and remove every process, mount, link, route and rule it made
  status                         the supervisor's status and the nodes
  load-image ARCHIVE             import an OCI archive into every node
  kubeconfig --service-account NS/NAME
                                 write a kubeconfig acting as that ServiceAccount (TokenRequest)
  addon enable s3|gcs|azure [--namespace NS ...]
                                 run a real object store in the cluster (MinIO, fake-gcs-server, Azurite)
                                 with a bucket \`quorum\`; copy its credentials Secret into each NS
  addon disable|stop|start|url s3|gcs|azure
                                 remove it (and its data) | scale it to 0 | back to 1 | a URL for this host
  addon enable prometheus [--rules FILE ...] [--scrape-config FILE ...]
                                 run Prometheus in the cluster, scraping with the scrape_configs of each
                                 FILE and evaluating each rules FILE; by default deploy/monitoring/'s
                                 (Quorum's members, operator and alerts)
  addon disable|url prometheus   remove it (and its data) | a URL for this host (its HTTP API)
  fault kill-container NS POD [CONTAINER] | stop-node NODE | start-node NODE
        cut-network NODE | restore-network NODE | wipe-volume NS CLAIM | restart-apiserver
State dir default: ./.localkube`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'state-dir': { type: 'string' },
    nodes: { type: 'string', default: '3' },
    'service-account': { type: 'string' },
    namespace: { type: 'string', multiple: true },
    rules: { type: 'string', multiple: true },
    'scrape-config': { type: 'string', multiple: true },
    help: { type: 'boolean', short: 'h' },
  },
});
const stateDir = resolve(values['state-dir'] ?? defaultStateDir());
const [command, ...args] = positionals;

function need(n: number, what: string): string[] {
  if (args.length < n) throw new Error(`localkube ${command}: expected ${what}\n${USAGE}`);
  return args;
}

async function main(): Promise<void> {
  switch (command) {
    case 'up': {
      const kube = await LocalKube.start({ nodes: Number(values.nodes), stateDir, detach: true });
      kube.client.close();
      process.stdout.write(
        `localkube is up: ${kube.nodes.length} nodes, ready in ${kube.upSeconds}s.\n` +
          `export KUBECONFIG=${kube.kubeconfig}\n` +
          `kubectl: ${join(stateDir, 'bin', 'kubectl')}\n` +
          `stop it with: npx localkube down${values['state-dir'] ? ` --state-dir ${stateDir}` : ''}\n`,
      );
      return;
    }
    case 'down':
      await down(stateDir);
      process.stdout.write(`localkube in ${stateDir} is down\n`);
      return;
    case 'status': {
      const status = await readStatus(stateDir);
      if (!status) {
        process.stdout.write(`no localkube in ${stateDir}\n`);
        process.exitCode = 1;
        return;
      }
      process.stdout.write(JSON.stringify(status, null, 2) + '\n');
      if (status.phase === 'ready') {
        const nodes = await run(join(stateDir, 'bin', 'kubectl'), ['get', 'nodes', '-o', 'wide'], { env: { ...process.env, KUBECONFIG: status.kubeconfig }, allowFailure: true });
        process.stdout.write(nodes.stdout + nodes.stderr);
      }
      return;
    }
    case 'load-image': {
      const [archive] = need(1, 'an OCI archive path');
      const kube = await LocalKube.attach(stateDir);
      kube.client.close();
      process.stdout.write(await kube.loadImage(archive!) + '\n');
      return;
    }
    case 'kubeconfig': {
      const sa = values['service-account'];
      if (!sa?.includes('/')) throw new Error('localkube kubeconfig: --service-account NAMESPACE/NAME is required');
      const [ns, name] = sa.split('/');
      const kube = await LocalKube.attach(stateDir);
      const path = await kube.serviceAccountKubeconfig(ns!, name!);
      kube.client.close();
      process.stdout.write(`${path}\n`);
      return;
    }
    case 'addon': {
      const [action, name] = need(2, 'an action and an addon name');
      if (name === 'prometheus') {
        await prometheusAddon(action!);
        return;
      }
      if (!isStorageAddonName(name!)) throw new Error(`localkube addon: unknown addon ${name}; one of ${[...STORAGE_ADDONS, 'prometheus'].join(', ')}`);
      const addon: StorageAddonName = name;
      const kube = await LocalKube.attach(stateDir);
      try {
        switch (action) {
          case 'enable': {
            const namespaces = values.namespace ?? [];
            const enabled = await kube.enableAddon(addon, { namespaces });
            process.stdout.write(
              `${addon} is ready\n` +
                `endpoint: ${enabled.endpoint}\n` +
                `bucket:   ${enabled.bucket}\n` +
                `secret:   ${enabled.secretName} in ${[STORAGE_NAMESPACE, ...namespaces].join(', ')}\n` +
                `from this host: ${await kube.addonURL(addon)}\n`,
            );
            break;
          }
          case 'disable': await kube.disableAddon(addon); process.stdout.write(`${addon} is disabled (its data is deleted)\n`); break;
          case 'stop': await kube.stopAddon(addon); process.stdout.write(`${addon} is stopped (0 replicas)\n`); break;
          case 'start': await kube.startAddon(addon); process.stdout.write(`${addon} is running again\n`); break;
          case 'url': process.stdout.write(`${await kube.addonURL(addon)}\n`); break;
          default: throw new Error(`localkube addon: unknown action ${action}\n${USAGE}`);
        }
      } finally {
        kube.client.close();
      }
      return;
    }
    case 'fault': {
      const [fault, ...rest] = need(1, 'a fault name');
      const kube = await LocalKube.attach(stateDir);
      kube.client.close();
      const arg = (i: number, what: string): string => {
        const v = rest[i];
        if (!v) throw new Error(`localkube fault ${fault}: expected ${what}`);
        return v;
      };
      switch (fault) {
        case 'kill-container': await kube.killContainer(arg(0, 'NAMESPACE'), arg(1, 'POD'), rest[2]); break;
        case 'stop-node': await kube.stopNode(arg(0, 'NODE')); break;
        case 'start-node': await kube.startNode(arg(0, 'NODE')); break;
        case 'cut-network': await kube.cutNetwork(arg(0, 'NODE')); break;
        case 'restore-network': await kube.restoreNetwork(arg(0, 'NODE')); break;
        case 'wipe-volume': process.stdout.write(`wiped ${await kube.wipeVolume(arg(0, 'NAMESPACE'), arg(1, 'CLAIM'))}\n`); break;
        case 'restart-apiserver': await kube.restartApiserver(); break;
        default: throw new Error(`localkube fault: unknown fault ${fault}\n${USAGE}`);
      }
      return;
    }
    case undefined:
    case 'help':
      process.stdout.write(USAGE + '\n');
      return;
    default:
      throw new Error(`localkube: unknown command ${command}\n${USAGE}`);
  }
}

async function prometheusAddon(action: string): Promise<void> {
  const kube = await LocalKube.attach(stateDir);
  try {
    switch (action) {
      case 'enable': {
        const rules = values.rules?.length ? await readRuleFiles(values.rules.map((f) => resolve(f))) : undefined;
        const scrapeConfigs = values['scrape-config']?.length ? await readScrapeConfigFiles(values['scrape-config'].map((f) => resolve(f))) : undefined;
        const enabled = await kube.enablePrometheus({ ...(rules ? { rules } : {}), ...(scrapeConfigs ? { scrapeConfigs } : {}) });
        process.stdout.write(
          `prometheus is ready\n` +
            `endpoint: ${enabled.endpoint}\n` +
            `rules:    ${(values.rules ?? DEFAULT_RULE_FILES).join(', ')}\n` +
            `scraping: ${(values['scrape-config'] ?? DEFAULT_SCRAPE_CONFIG_FILES).join(', ')}\n` +
            `from this host: ${enabled.url} (e.g. ${enabled.url}/api/v1/alerts)\n`,
        );
        break;
      }
      case 'disable': await kube.disablePrometheus(); process.stdout.write(`prometheus is disabled (its data is deleted)\n`); break;
      case 'url': process.stdout.write(`${await kube.prometheusURL()}\n`); break;
      default: throw new Error(`localkube addon: prometheus has enable, disable and url, not ${action}\n${USAGE}`);
    }
  } finally {
    kube.client.close();
  }
}

if (values.help) process.stdout.write(USAGE + '\n');
else {
  try {
    await main();
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    const log = join(stateDir, 'logs', 'supervisor.log');
    const tail = await readFile(log, 'utf8').then((t) => t.split('\n').slice(-15).join('\n'), () => '');
    if (tail && command === 'up') process.stderr.write(`--- last lines of ${log} ---\n${tail}\n`);
    process.exitCode = 1;
  }
}
