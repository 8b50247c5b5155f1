// docs/runtime-tutorial.md, followed literally from an empty folder outside the repository: the runtime packed
// as the tutorial packs it, the tutorial's `run` blocks run by bash (the tarball's path put in for
// /tmp/quorum-runtime-<version>.tgz), its `file` blocks written, then its operator run with `npm start`
// against the suite's localkube, checked for what the text promises. Prints the figures of issue 20: the
// operator's lines of code and the time from `npm install` to its first reconcile.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
// @timeout 5m: npm installs from the registry (about 15 s on a warm cache), then two operators start on localkube
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { parse } from 'yaml';
import { LocalKube, topology } from '@quorum/localkube';
import { Client } from '../../src/client/client.ts';
import { NotFoundError } from '../../src/client/errors.ts';
import { CustomResourceDefinitions, Deployments, Namespaces, Services, ValidatingWebhookConfigurations, resource, type ResourceType } from '../../src/client/resources.ts';
import { findCondition, type Condition } from '../../src/helpers/conditions.ts';
import { getControllerOf } from '../../src/helpers/owner.ts';
import type { KubeObject } from '../../src/object.ts';
import { eventually } from '../../src/testing/index.ts';
import { pack, removeBuild, repoRoot, run, userEnv } from '../packing.ts';
import { linesOfCode, readTutorial } from './fixtures/tutorial.ts';

type Website = KubeObject & { spec: { image: string }; status?: { conditions?: Condition[] } };
// What the tutorial's src/api.ts declares; the test reads it back through its own client.
const Websites = resource<Website>('tutorial.example.com/v1alpha1', 'Website', 'websites', true);
const CRD_NAME = 'websites.tutorial.example.com';
const WEBHOOK_CONFIGURATION = 'website-operator';
const TARBALL_IN_TEXT = /\/tmp\/quorum-runtime-[\d.]+\.tgz/g;

const tutorial = readTutorial();
const started = performance.now();
let kube: LocalKube;
let client: Client;
let work: string;
let project: string;
let stepEnv: NodeJS.ProcessEnv;
let operator: ChildProcess | undefined;
let installSeconds = 0;
const namespace = `tutorial-${Date.now().toString(36)}`;

const step = (name: string): string => {
  const commands = tutorial.commands.get(name);
  assert.ok(commands, `docs/runtime-tutorial.md has no block marked <!-- run: ${name} -->`);
  return commands;
};

before(async () => {
  const stateDir = process.env['LOCALKUBE_STATE_DIR'];
  if (!stateDir) throw new Error('LOCALKUBE_STATE_DIR is not set: run integration tests through `npm test`');
  kube = await LocalKube.attach(stateDir);
  client = await Client.connect({ kubeconfig: kube.kubeconfig });
  work = await mkdtemp(join(tmpdir(), 'quorum-tutorial-'));
  assert.ok(!work.startsWith(repoRoot + '/'), `the tutorial must be followed outside the repository (${work})`);
  // What the reader's shell has: a kubeconfig, and the address the API server reaches this machine at.
  stepEnv = { KUBECONFIG: kube.kubeconfig, WEBHOOK_HOST: topology.CONTROL_PLANE_IP, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_loglevel: 'error' };
});

after(async () => {
  if (operator?.pid && operator.exitCode === null && operator.signalCode === null) stopGroup(operator.pid, 'SIGKILL');
  // Cluster-scoped: with failurePolicy Fail a leftover configuration would refuse every Website write.
  for (const [type, name] of [[ValidatingWebhookConfigurations, WEBHOOK_CONFIGURATION], [CustomResourceDefinitions, CRD_NAME], [Namespaces, namespace]] as const) {
    await client?.delete(type, name).catch((err: unknown) => {
      if (!(err instanceof NotFoundError)) throw err;
    });
  }
  client?.close();
  kube?.client.close();
  if (work) await rm(work, { recursive: true, force: true });
  await removeBuild('runtime');
});

test('from an empty folder: the setup commands install the packed runtime, the files typecheck, the tutorial’s own test passes', async () => {
  const packed = await pack('runtime', work);
  await removeBuild('runtime');
  const setup = step('setup');
  assert.match(setup, /^mkdir website-operator && cd website-operator\n/, 'the setup step makes the project folder first');
  const installStartedAt = performance.now();
  await run('bash', ['-euc', setup.replaceAll(TARBALL_IN_TEXT, join(work, packed.filename))], work, stepEnv);
  installSeconds = (performance.now() - installStartedAt) / 1000;
  project = join(work, 'website-operator');
  for (const [path, content] of tutorial.files) {
    await mkdir(dirname(join(project, path)), { recursive: true });
    await writeFile(join(project, path), content);
  }
  const checkStartedAt = performance.now();
  const output = await run('bash', ['-euc', step('check')], project, stepEnv);
  assert.match(output, /^[#ℹ] pass 2\n[#ℹ] fail 0$/m, output); // the spec or the TAP reporter's summary
  console.log(`tutorial: setup (npm init, npm install) ${installSeconds.toFixed(1)} s; typecheck and its own test ${((performance.now() - checkStartedAt) / 1000).toFixed(1)} s`);
});

/** Signals npm start's whole process group (bash, npm, node), as Ctrl-C would; a group already gone is fine. */
function stopGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Starts `npm start` in its own process group; resolves once it says it is running. */
async function startOperator(): Promise<ChildProcess> {
  const child = spawn('bash', ['-euc', step('start')], { cwd: project, env: userEnv(stepEnv), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await eventually('npm start to say the operator runs', () => {
    if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode}):\n${output}`);
    return output.includes('website-operator: running');
  }, { timeoutMs: 60_000, intervalMs: 100 });
  return child;
}

test('npm start: a Website gets its Deployment, Service and Ready condition; the webhook refuses an unpinned image', async () => {
  assert.ok(project, 'the setup step ran');
  const startAt = performance.now();
  operator = await startOperator();
  await client.create(Namespaces, { metadata: { name: namespace } });
  const manifest = parse(tutorial.files.get('website.yaml')!) as Website;
  const site = await client.create(Websites, { ...manifest, metadata: { ...manifest.metadata, namespace } });
  const name = site.metadata.name!;

  const ready = await eventually('the Ready condition', async () => findCondition((await client.get(Websites, { namespace, name })).status?.conditions, 'Ready'), { timeoutMs: 60_000, intervalMs: 100 });
  const firstReconcileAt = performance.now();
  assert.equal(ready.observedGeneration, site.metadata.generation);
  assert.equal(ready.reason, ready.status === 'True' ? 'PodsReady' : 'PodsNotReady');
  const children: ResourceType<KubeObject>[] = [Deployments, Services];
  for (const type of children) {
    const child = await client.get(type, { namespace, name });
    assert.equal(getControllerOf(child)?.uid, site.metadata.uid, `the ${type.kind} is controlled by the Website`);
  }

  const unpinnedManifest = parse(tutorial.files.get('unpinned-website.yaml')!) as Website;
  const unpinned = { ...unpinnedManifest, metadata: { ...unpinnedManifest.metadata, namespace } };
  const refused = /denied the request: spec\.image "nginx" is not pinned/;
  // The API server takes up the operator's new webhook configuration asynchronously: a dry run asks without storing.
  await eventually('the webhook to refuse the unpinned Website', () => client.create(Websites, unpinned, { dryRun: true }).then(() => false, (err: Error) => refused.test(err.message)));
  await assert.rejects(client.create(Websites, unpinned), refused);

  // Ctrl-C: the operator stops and removes its webhook configuration, as the tutorial says.
  stopGroup(operator.pid!, 'SIGINT');
  await eventually('npm start to exit', () => operator?.exitCode !== null || operator.signalCode !== null, { timeoutMs: 30_000, intervalMs: 100 });
  await eventually('the webhook configuration to be removed', async () => (await client.find(ValidatingWebhookConfigurations, WEBHOOK_CONFIGURATION)) === undefined, { timeoutMs: 15_000, intervalMs: 200 });

  const operatorLines = [...tutorial.files].filter(([path]) => path.startsWith('src/')).reduce((sum, [, source]) => sum + linesOfCode(source), 0);
  const testLines = linesOfCode(tutorial.files.get('test/website.test.ts')!);
  console.log(`tutorial operator: ${operatorLines} lines of code in src/ (${testLines} in its test)`);
  const toReconcile = (firstReconcileAt - startAt) / 1000;
  console.log(`tutorial: npm start → first reconcile (Ready written) ${toReconcile.toFixed(1)} s; npm install → first reconcile ${(installSeconds + toReconcile).toFixed(1)} s (the setup step, then npm start)`);
  console.log(`the whole file: ${((performance.now() - started) / 1000).toFixed(1)} s`);
});
