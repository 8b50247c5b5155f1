// `quorum history` end to end on localkube: the recorder runs in process (as in recorder.test.ts) with its
// history endpoint, and the CLI reaches that endpoint as a user would, through the API server's service proxy
// with nothing but a kubeconfig: a ServiceAccount's, whose RBAC allows ConfigMaps and Deployments in the
// recorded namespace but not Secrets.
//
// The API server proxies a Service only to the IP of a pod in the Service's namespace. So that it reaches the
// in-process endpoint, a hostNetwork pause pod stands in for the recorder's pod: its IP is its node's, an
// address of this machine, where the endpoint listens. Everything between the CLI and the endpoint is real:
// the proxy, its RBAC check on services/proxy, the header it drops, and the TokenReview and
// SubjectAccessReviews the endpoint makes.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive recorder
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { parse } from 'yaml';
import {
  ApiError,
  ConfigMaps,
  CustomResourceDefinitions,
  Deployments,
  Pods,
  RoleBindings,
  Roles,
  Secrets,
  ServiceAccounts,
  Services,
  createLogger,
  sleep,
  type OpenObject,
} from '@quorum/runtime';
import { eventually, TestEnv } from '@quorum/localkube/testing';
import { pauseImage } from '@quorum/localkube';
import { API_VERSION, KIND, type ChangeRecorderSpec } from '../../src/api/changerecorder.ts';
import { changeRecorderCRD } from '../../src/api/crd.ts';
import { historyCommand } from '../../src/cli/history.ts';
import type { ObjectsResponse, RecordResponse, RecordsResponse } from '../../src/history/protocol.ts';
import { HISTORY_PORT_NAME, HISTORY_SERVICE } from '../../src/history/protocol.ts';
import { HistoryServer } from '../../src/history/server.ts';
import { createRecorder } from '../../src/operator/recorder.ts';
import { ChangeRecorders } from '../../src/resources.ts';

const quiet = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
const EDITOR = 'e2e-editor';

let env: TestEnv;
let storageRoot: string;
/** The in-process recorder's namespace: where it keeps its Secret of redaction keys. */
let keysNs: string;
let stopRecorder: () => Promise<void>;
let server: HistoryServer;
/** Where the recorder "runs": its Service is here. */
let recorderNs: string;
/** The namespace recorded, where the reader may read ConfigMaps and Deployments, not Secrets. */
let ns: string;
let readerKubeconfig: string;
const recorderName = `history-e2e-${Date.now().toString(36)}`;

interface Run {
  code: number;
  out: string;
  err: string;
}

/** `quorum history …` as the reader, through the API server. */
async function cli(args: string[], kubeconfig = readerKubeconfig): Promise<Run> {
  let out = '';
  let err = '';
  const code = await historyCommand([...args, '--kubeconfig', kubeconfig, '--recorder-namespace', recorderNs], {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    env: {},
  });
  return { code, out, err };
}

async function cliJSON<T>(args: string[]): Promise<T> {
  const run = await cli([...args, '-o', 'json']);
  if (run.code !== 0) throw new Error(`quorum history ${args.join(' ')}: ${run.err}`);
  return JSON.parse(run.out) as T;
}

async function recordsUntil(kind: string, name: string, count: number): Promise<RecordsResponse> {
  return eventually(`${count} records of ${kind}/${name}`, async () => {
    const response = await cliJSON<RecordsResponse>(['list', `${kind}/${name}`, '-n', ns]);
    return response.records.length >= count ? response : undefined;
  }, { timeoutMs: 60_000, intervalMs: 500 });
}

before(async () => {
  env = await TestEnv.start();
  keysNs = await env.namespace('recorder-keys');
  storageRoot = await mkdtemp(join(tmpdir(), 'history-it-'));
  const crd = changeRecorderCRD();
  await env.client.apply(CustomResourceDefinitions, crd, { fieldManager: 'history-e2e', force: true });
  await eventually('the ChangeRecorder CRD established', async () => {
    const got = (await env.client.get(CustomResourceDefinitions, crd.metadata.name)) as { status?: { conditions?: { type: string; status: string }[] } };
    return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  });
  const { manager } = await createRecorder({ storageRoot, namespace: keysNs, logger: quiet, manager: { client: env.client, gracefulShutdownMs: 2000 } });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  stopRecorder = async () => {
    stop.abort();
    await running;
  };

  // The recorder's place: a pod whose IP the endpoint listens on, and the Service in front of it.
  recorderNs = await env.namespace('history-recorder');
  const labels = { app: 'history-endpoint' };
  await env.client.create(Pods, {
    metadata: { name: 'recorder-stand-in', namespace: recorderNs, labels },
    spec: { hostNetwork: true, containers: [{ name: 'pause', image: pauseImage, imagePullPolicy: 'IfNotPresent' }] },
  });
  const podIP = await eventually('the stand-in pod has an IP', async () => ((await env.client.get(Pods, { namespace: recorderNs, name: 'recorder-stand-in' })) as { status?: { podIP?: string } }).status?.podIP, { timeoutMs: 60_000, intervalMs: 250 });
  server = await HistoryServer.start({ storageRoot, client: env.client, host: podIP, port: 0 });
  await env.client.create(Services, { metadata: { name: HISTORY_SERVICE, namespace: recorderNs }, spec: { selector: labels, ports: [{ name: HISTORY_PORT_NAME, port: 8443, targetPort: server.port }] } });

  // The recorded namespace, and the reader: ConfigMaps and Deployments there (to read and restore), no Secrets.
  ns = await env.namespace('history');
  const spec: ChangeRecorderSpec = { namespaces: { names: [ns] }, resources: [{ group: '', kind: 'ConfigMap' }, { group: '', kind: 'Secret' }, { group: 'apps', kind: 'Deployment' }] };
  await env.client.apply(ChangeRecorders, { apiVersion: API_VERSION, kind: KIND, metadata: { name: recorderName }, spec }, { fieldManager: 'history-e2e', force: true });
  await env.client.create(ServiceAccounts, { metadata: { name: 'reader', namespace: ns } });
  const verbs = ['get', 'list', 'watch', 'create', 'update', 'patch'];
  await env.client.create(Roles, {
    metadata: { name: 'reader', namespace: ns },
    rules: [
      { apiGroups: [''], resources: ['configmaps'], verbs },
      { apiGroups: ['apps'], resources: ['deployments'], verbs },
    ],
  });
  const bind = (name: string, namespace: string): OpenObject => ({
    metadata: { name, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: ns }],
  });
  await env.client.create(RoleBindings, bind('reader', ns));
  // What the manifests grant every user: reaching the endpoint through the proxy (what is shown is decided inside).
  await env.client.create(Roles, {
    metadata: { name: 'history-proxy', namespace: recorderNs },
    rules: [{ apiGroups: [''], resources: ['services/proxy'], resourceNames: [`https:${HISTORY_SERVICE}:${HISTORY_PORT_NAME}`], verbs: ['get'] }],
  });
  await env.client.create(RoleBindings, bind('history-proxy', recorderNs));
  readerKubeconfig = await env.kube.serviceAccountKubeconfig(ns, 'reader');
  await eventually('the endpoint answers through the API server', async () => (await cli(['list'])).code === 0, { timeoutMs: 60_000, intervalMs: 500 });
  await eventually(`ChangeRecorder ${recorderName} Ready`, async () => {
    const recorder = await env.client.get(ChangeRecorders, recorderName);
    return recorder.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && recorder.status.observedGeneration === recorder.metadata.generation;
  }, { timeoutMs: 60_000, intervalMs: 250 });
});

after(async () => {
  await stopRecorder?.();
  await server?.close();
  await env.client.delete(ChangeRecorders, recorderName).catch(() => undefined);
  await env.stop();
  await rm(storageRoot, { recursive: true, force: true });
});

test('a ConfigMap edited three times: list, show and diff each record, and restore the second exactly', async () => {
  await env.client.create(ConfigMaps, { metadata: { name: 'app', namespace: ns }, data: { color: 'red' } });
  await eventually('the ConfigMap seen', async () => (await readdir(join(storageRoot, recorderName, ns, 'core.ConfigMap')).catch(() => [] as string[])).includes('app'), { timeoutMs: 30_000 });
  const edits = [{ color: 'blue' }, { color: 'green', extra: 'x' }, { color: 'yellow' }];
  for (const data of edits) {
    await sleep(1100); // managedFields times have one-second precision
    await env.client.mergePatch(ConfigMaps, { namespace: ns, name: 'app' }, { data }, { fieldManager: EDITOR });
  }
  const { records, lastSeen } = await recordsUntil('cm', 'app', 3);
  assert.equal(records.length, 3);
  assert.equal(lastSeen.length, 1, 'live');

  const listed = await cli(['list', 'configmap/app', '-n', ns]);
  assert.equal(listed.code, 0, listed.err);
  assert.match(listed.out, new RegExp(`^ConfigMap ${ns}/app: live, last seen at resourceVersion \\d+`));
  for (const r of records) assert.match(listed.out, new RegExp(`^${r.id.replace('.', '\\.')}\\s+\\S+\\s+Updated\\s+${EDITOR} \\(Update\\)`, 'm'));

  const versions: Record<string, string>[] = [];
  for (const r of records) {
    const shown = await cli(['show', 'cm/app', '-n', ns, '--record', r.id]);
    assert.equal(shown.code, 0, shown.err);
    const object = parse(shown.out) as { metadata: Record<string, unknown>; data: Record<string, string> };
    assert.equal(object.metadata.resourceVersion, undefined, 'a record is cleaned to be re-applied');
    versions.push(object.data);
  }
  assert.deepEqual(versions, [{ color: 'red' }, { color: 'blue' }, { color: 'green', extra: 'x' }]);

  const diff = await cli(['diff', 'cm/app', '-n', ns, '--record', records[1]!.id]);
  assert.equal(diff.code, 0, diff.err);
  assert.match(diff.out, /^-\s+color: blue$/m);
  assert.match(diff.out, /^\+\s+color: green$/m);
  assert.match(diff.out, /^\+\s+extra: x$/m);
  const toCurrent = await cli(['diff', 'cm/app', '-n', ns, '--record', records[1]!.id, '--to', 'current']);
  assert.match(toCurrent.out, /^\+\s+color: yellow$/m);
  assert.match(toCurrent.out, /^\+\s+extra: x$/m, 'the key the second edit added is still there');

  const dryRun = await cli(['restore', 'cm/app', '-n', ns, '--record', records[1]!.id, '--dry-run']);
  assert.equal(dryRun.code, 0, dryRun.err);
  assert.match(dryRun.out, /^dry run: ConfigMap .*\/app would be restored to record/);
  assert.equal((await env.client.get(ConfigMaps, { namespace: ns, name: 'app' })).data?.color, 'yellow', 'a dry run changes nothing');

  const restored = await cli(['restore', 'cm/app', '-n', ns, '--record', records[1]!.id]);
  assert.equal(restored.code, 0, restored.err);
  assert.match(restored.out, new RegExp(`^ConfigMap ${ns}/app restored to record ${records[1]!.id.replace('.', '\\.')} \\(Updated, .*\\) with server-side apply as field manager quorum-history; what changed:\\n`));
  assert.match(restored.out, /^-\s+color: yellow$/m);
  assert.match(restored.out, /^\+\s+color: blue$/m);
  assert.match(restored.out, /^-\s+extra: x$/m);
  const live = await env.client.get(ConfigMaps, { namespace: ns, name: 'app' });
  assert.deepEqual(live.data, { color: 'blue' }, "exactly the second version's data");
  assert.ok(live.metadata.managedFields?.some((f) => (f as { manager?: string; operation?: string }).manager === 'quorum-history' && (f as { operation?: string }).operation === 'Apply'), 'applied under its own field manager');

  // The restore is itself a change, recorded as one (it was one write): restoring again by default goes back to what it replaced.
  const after = await recordsUntil('cm', 'app', 4);
  const replaced = await cliJSON<RecordResponse>(['show', 'cm/app', '-n', ns, '--record', after.records[3]!.id]);
  assert.deepEqual((parse(replaced.yaml) as { data: unknown }).data, { color: 'yellow', extra: 'x' });
  assert.equal(replaced.record.changedBy?.manager, 'quorum-history');
  await sleep(1000);
  assert.equal((await cliJSON<RecordsResponse>(['list', 'cm/app', '-n', ns])).records.length, 4, 'no half-restored version was recorded');
  const again = await cli(['restore', 'cm/app', '-n', ns]);
  assert.equal(again.code, 0, again.err);
  assert.deepEqual((await env.client.get(ConfigMaps, { namespace: ns, name: 'app' })).data, { color: 'yellow', extra: 'x' }, 'the version the first restore replaced');
});

test('a deleted Deployment: listed as deleted, restored with an identical spec, and its pods come back', async () => {
  const labels = { app: 'web' };
  await env.client.create(Deployments, {
    metadata: { name: 'web', namespace: ns, labels },
    spec: {
      replicas: 2,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'pause', image: pauseImage, imagePullPolicy: 'IfNotPresent' }] } },
    },
  });
  const ready = (): Promise<OpenObject> =>
    eventually('web has 2 ready replicas', async () => {
      const d = (await env.client.get(Deployments, { namespace: ns, name: 'web' })) as OpenObject & { status?: { readyReplicas?: number; observedGeneration?: number } };
      return d.status?.readyReplicas === 2 && d.status.observedGeneration === d.metadata.generation ? d : undefined;
    }, { timeoutMs: 120_000, intervalMs: 500 });
  const original = await ready();
  await env.client.delete(Deployments, { namespace: ns, name: 'web' });
  await eventually('web gone', async () => (await env.client.find(Deployments, { namespace: ns, name: 'web' })) === undefined, { timeoutMs: 60_000 });
  const { records, lastSeen } = await recordsUntil('deploy', 'web', 1);
  assert.equal(records.at(-1)!.reason, 'Deleted');
  assert.deepEqual(lastSeen, []);

  const listed = await cliJSON<ObjectsResponse>(['list', '-n', ns]);
  const web = listed.objects.find((o) => o.kind === 'Deployment' && o.name === 'web');
  assert.equal(web?.live, false);
  assert.equal(web?.newest?.reason, 'Deleted');
  const table = await cli(['list', '-n', ns]);
  assert.match(table.out, /^\S+\s+Deployment\.apps\s+web\s+1\s+\S+\s+Deleted\s+deleted$/m);

  const restored = await cli(['restore', 'deployment/web', '-n', ns]);
  assert.equal(restored.code, 0, restored.err);
  assert.match(restored.out, new RegExp(`^Deployment\\.apps ${ns}/web re-created from record ${records.at(-1)!.id.replace('.', '\\.')} \\(Deleted, recorded .*\\), as field manager quorum-history; now at resourceVersion \\d+\\n$`));
  const back = await ready();
  assert.deepEqual(back.spec, original.spec, 'an identical spec');
  assert.deepEqual(back.metadata.labels, original.metadata.labels);
  // Its pods are back: two, of a ReplicaSet of the new Deployment (the old pods go with the old one's garbage).
  await eventually('two pods of the restored Deployment', async () => {
    const pods = await env.client.list(Pods, { namespace: ns, labelSelector: 'app=web' });
    const running = pods.items.filter((p) => !p.metadata.deletionTimestamp && (p as { status?: { phase?: string } }).status?.phase === 'Running');
    return running.length === 2;
  }, { timeoutMs: 60_000, intervalMs: 500 });

  const twice = await cli(['restore', 'deployment/web', '-n', ns, '--record', records.at(-1)!.id]);
  assert.equal(twice.code, 0, twice.err);
  assert.match(twice.out, /already matches record .*: nothing changed/, 'restoring what is there changes nothing');
});

test("Secrets' records are not shown to a caller who may not read Secrets, and a client-certificate kubeconfig is told to pass a token", async () => {
  const value = Buffer.from('first').toString('base64');
  await env.client.create(Secrets, { metadata: { name: 'db', namespace: ns }, type: 'Opaque', data: { password: value } });
  await sleep(200);
  await env.client.mergePatch(Secrets, { namespace: ns, name: 'db' }, { data: { password: Buffer.from('second').toString('base64') } }, { fieldManager: EDITOR });
  await eventually('the Secret recorded', async () => (await readdir(join(storageRoot, recorderName, ns, 'core.Secret', 'db')).catch(() => [] as string[])).some((f) => f.endsWith('.yaml') && !f.startsWith('.')), { timeoutMs: 30_000 });

  const shown = await cli(['show', 'secret/db', '-n', ns]);
  assert.equal(shown.code, 1);
  assert.match(shown.err, new RegExp(`^quorum history: the records of Secret ${ns}/db are not shown: user "system:serviceaccount:${ns}:reader" cannot get secrets "db" in namespace ${ns}`));
  const diff = await cli(['diff', 'secret/db', '-n', ns]);
  assert.equal(diff.code, 1, 'nor its diffs');
  const listed = await cli(['list', '-n', ns]);
  assert.equal(listed.code, 0, listed.err);
  assert.doesNotMatch(listed.out, /Secret/);
  assert.match(listed.err, new RegExp(`^not shown: records of Secret in namespace ${ns}: user "system:serviceaccount:${ns}:reader" cannot list secrets in namespace ${ns}`, 'm'));

  // The admin kubeconfig authenticates with a client certificate, which the proxy cannot pass on.
  const admin = await cli(['list', '-n', ns], env.kubeconfig);
  assert.equal(admin.code, 1);
  assert.match(admin.err, /authenticates without a bearer token \(with a client certificate.*--token/);
  // With a token, the recorder applies that token's RBAC (here the reader's, so still no Secrets).
  const kubeconfig = parse(await readFile(readerKubeconfig, 'utf8')) as { users: { user: { token: string } }[] };
  const withToken = await cli(['list', 'cm/app', '-n', ns, '--token', kubeconfig.users[0]!.user.token], env.kubeconfig);
  assert.equal(withToken.code, 0, withToken.err);
  assert.match(withToken.out, new RegExp(`^ConfigMap ${ns}/app: live`));
});

test('through the API server, the endpoint refuses a caller without a token, and every write', async () => {
  const base = `/api/v1/namespaces/${recorderNs}/services/https:${HISTORY_SERVICE}:${HISTORY_PORT_NAME}/proxy/v1/objects`;
  const refused = async (method: string): Promise<ApiError> => {
    try {
      await env.client.request(method, base, method === 'GET' ? undefined : {});
    } catch (err) {
      if (err instanceof ApiError) return err;
      throw err;
    }
    throw new Error(`${method} ${base} was not refused`);
  };
  const anonymous = await refused('GET');
  assert.equal(anonymous.code, 401);
  assert.match((anonymous.status as { error?: string }).error ?? '', /needs the caller's bearer token in the x-quorum-authorization header/);
  for (const method of ['POST', 'PUT', 'DELETE']) assert.equal((await refused(method)).code, 405, method);
});
