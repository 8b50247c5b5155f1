// The recorder against a real API server (localkube), run in-process with a temporary directory as its
// storage: edits, status-only changes, deletions and Secrets (redacted, or full) are recorded as the issue asks,
// retention keeps exactly maxVersionsPerObject, and changes made while the recorder is stopped (50 changes and 5
// deletions) are found and marked as seen late when it starts again; kinds discovery does not find are rejected
// by name while the others are recorded.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive recorder
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { applyPatch } from 'diff';
import { ConfigMaps, CustomResourceDefinitions, Deployments, Events, Secrets, createLogger, sleep, type KubeObject, type OpenObject } from '@quorum/runtime';
import { eventually, TestEnv } from '@quorum/localkube/testing';
import { pauseImage } from '@quorum/localkube';
import { API_VERSION, KIND, type ChangeRecorder, type ChangeRecorderSpec } from '../../src/api/changerecorder.ts';
import { changeRecorderCRD } from '../../src/api/crd.ts';
import { createRecorder } from '../../src/operator/recorder.ts';
import { cleanObject } from '../../src/record/clean.ts';
import { objectYAML, parseRecord, type RecordMeta } from '../../src/record/record-file.ts';
import { EVENTS_NAMESPACE } from '../../src/deploy/manifests.ts';
import { EVENT_CONTROLLER } from '../../src/operator/recorder.ts';
import { ChangeRecorders } from '../../src/resources.ts';

const quiet = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
const EDITOR = 'e2e-editor';

let env: TestEnv;
let storageRoot: string;
/** The in-process recorder's namespace: where it keeps its Secret of redaction keys. */
let keysNs: string;
let recorder: Running;
const recorderNames: string[] = [];

before(async () => {
  env = await TestEnv.start();
  keysNs = await env.namespace('recorder-keys');
  storageRoot = await mkdtemp(join(tmpdir(), 'recorder-it-'));
  const crd = changeRecorderCRD();
  await env.client.apply(CustomResourceDefinitions, crd, { fieldManager: 'recorder-e2e', force: true });
  await eventually('the ChangeRecorder CRD established', async () => {
    const got = (await env.client.get(CustomResourceDefinitions, crd.metadata.name)) as { status?: { conditions?: { type: string; status: string }[] } };
    return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  });
  recorder = await startRecorder();
});

after(async () => {
  await recorder?.stop();
  for (const name of recorderNames) await env.client.delete(ChangeRecorders, name).catch(() => undefined);
  await env.stop();
  await rm(storageRoot, { recursive: true, force: true });
});

interface Running {
  stop(): Promise<void>;
}

/** The recorder process, in-process: a manager with the ChangeRecorder controller, as admin. */
async function startRecorder(): Promise<Running> {
  const { manager } = await createRecorder({ storageRoot, namespace: keysNs, logger: quiet, manager: { client: env.client, gracefulShutdownMs: 2000 } });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  return {
    stop: async () => {
      stop.abort();
      await running;
    },
  };
}

/** A ChangeRecorder for one namespace, recording ConfigMaps, Secrets and Deployments into `<storageRoot>/<name>`. */
async function recordNamespace(ns: string, extra: Partial<ChangeRecorderSpec> = {}): Promise<string> {
  const name = `rec-${ns}`;
  const spec: ChangeRecorderSpec = {
    namespaces: { names: [ns] },
    resources: [{ group: '', kind: 'ConfigMap' }, { group: '', kind: 'Secret' }, { group: 'apps', kind: 'Deployment' }],
    ...extra,
  };
  await env.client.apply(ChangeRecorders, { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec }, { fieldManager: 'recorder-e2e', force: true });
  recorderNames.push(name);
  return name;
}

async function waitRecording(name: string): Promise<ChangeRecorder> {
  return eventually(`ChangeRecorder ${name} Ready`, async () => {
    const recorder = await env.client.get(ChangeRecorders, name);
    const ready = recorder.status?.conditions?.find((c) => c.type === 'Ready');
    return ready?.status === 'True' && recorder.status?.observedGeneration === recorder.metadata.generation ? recorder : undefined;
  }, { timeoutMs: 60_000, intervalMs: 250 });
}

interface OnDisk {
  file: string;
  meta: RecordMeta;
  object: Record<string, unknown>;
}

async function records(recorder: string, ns: string, kindFolder: string, name: string): Promise<OnDisk[]> {
  const dir = join(storageRoot, recorder, ns, kindFolder, name);
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => !f.startsWith('.')).sort();
  return Promise.all(files.map(async (file) => ({ file, ...parseRecord(await readFile(join(dir, file), 'utf8'), file) })));
}

async function recordsUntil(recorder: string, ns: string, kindFolder: string, name: string, count: number): Promise<OnDisk[]> {
  return eventually(`${count} records of ${kindFolder} ${ns}/${name}`, async () => {
    const found = await records(recorder, ns, kindFolder, name);
    return found.length >= count ? found : undefined;
  }, { timeoutMs: 30_000, intervalMs: 200 });
}

const data = (obj: OnDisk): Record<string, string> => obj.object.data as Record<string, string>;

async function editConfigMap(ns: string, name: string, values: Record<string, string>): Promise<KubeObject> {
  return env.client.mergePatch(ConfigMaps, { namespace: ns, name }, { data: values }, { fieldManager: EDITOR });
}

test('a ConfigMap edited three times gives three records, each diff turning its version into the next', async () => {
  const ns = await env.namespace('rec-edits');
  const name = await recordNamespace(ns);
  await env.client.create(ConfigMaps, { metadata: { name: 'app', namespace: ns }, data: { color: 'red', size: 'L' } });
  await waitRecording(name);
  for (const color of ['blue', 'green', 'yellow']) {
    // managedFields times have one-second precision: edits a second apart make each one's author unambiguous.
    await sleep(1100);
    await editConfigMap(ns, 'app', { color });
  }
  const found = await recordsUntil(name, ns, 'core.ConfigMap', 'app', 3);
  assert.equal(found.length, 3);
  assert.deepEqual(found.map((r) => data(r).color), ['red', 'blue', 'green']);
  const live = await env.client.get(ConfigMaps, { namespace: ns, name: 'app' });
  const versions = [...found.map((r) => objectYAML(r.object)), objectYAML(cleanObject(live, found[0]!.meta.cleaning, new Uint8Array()))];
  found.forEach((r, i) => {
    assert.equal(r.meta.reason, 'Updated');
    assert.equal(r.meta.seenLate, false);
    assert.equal(r.meta.changedBy?.manager, EDITOR, 'who changed it, from managedFields');
    assert.ok(r.meta.changedAt, 'and when');
    assert.equal(applyPatch(versions[i]!, r.meta.diff ?? ''), versions[i + 1], `the diff of record ${i + 1} gives the next version`);
    const metadata = r.object.metadata as Record<string, unknown>;
    for (const field of ['resourceVersion', 'uid', 'creationTimestamp', 'managedFields']) assert.equal(metadata[field], undefined, `${field} is cleaned away`);
  });

  // A record can be re-applied as it is: the first version comes back.
  await env.client.apply(ConfigMaps, found[0]!.object as OpenObject, { fieldManager: 'e2e-restore', force: true });
  assert.equal((await env.client.get(ConfigMaps, { namespace: ns, name: 'app' })).data?.color, 'red');

  // The status reports counts as the recorder writes them, a moment after the files: wait for the count.
  const status = await eventually('the status counts the three records', async () => {
    const s = (await waitRecording(name)).status!;
    return (s.recordsWritten ?? 0) >= 3 ? s : undefined;
  }, { timeoutMs: 60_000, intervalMs: 250 });
  assert.ok((status.recordsWritten ?? 0) >= 3);
  assert.ok((status.records ?? 0) >= 3);
  assert.ok(status.lastRecordTime);
  assert.ok((status.storageBytes ?? 0) > 0);
  assert.deepEqual(status.kinds?.map((k) => k.kind).sort(), ['ConfigMap', 'Deployment', 'Secret']);
});

test('a status-only change gives no record; scaling (a spec change) and a label change do', async () => {
  const ns = await env.namespace('rec-status');
  const name = await recordNamespace(ns);
  const labels = { app: 'web' };
  await env.client.create(Deployments, {
    metadata: { name: 'web', namespace: ns, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'pause', image: pauseImage, imagePullPolicy: 'IfNotPresent' }] } },
    },
  });
  await waitRecording(name);
  const settled = async (replicas: number): Promise<void> => {
    await eventually(`web's status at ${replicas} replicas`, async () => {
      const d = (await env.client.get(Deployments, { namespace: ns, name: 'web' })) as OpenObject & { status?: { observedGeneration?: number; replicas?: number } };
      return d.status?.observedGeneration === d.metadata.generation && d.status?.replicas === replicas;
    }, { timeoutMs: 60_000, intervalMs: 250 });
  };
  await settled(1);
  await env.client.mergePatch(Deployments, { namespace: ns, name: 'web' }, { spec: { replicas: 2 } }, { fieldManager: EDITOR });
  await settled(2);
  await env.client.mergePatch(Deployments, { namespace: ns, name: 'web' }, { metadata: { labels: { app: 'web', tier: 'front' } } }, { fieldManager: EDITOR });
  // Records of one object are written in the order of its changes: once the label change's record is there,
  // every status update before it has been looked at.
  const found = await recordsUntil(name, ns, 'apps.Deployment', 'web', 2);
  assert.equal(found.length, 2, `the scale and the label change, no status-only record: ${found.map((r) => r.meta.diff).join('\n')}`);
  assert.equal((found[0]!.object.spec as { replicas: number }).replicas, 1);
  assert.match(found[0]!.meta.diff ?? '', /^\+\s+replicas: 2$/m);
  assert.match(found[1]!.meta.diff ?? '', /^\+\s+tier: front$/m);
  for (const r of found) assert.equal(r.object.status, undefined, 'records leave status out');
});

test("a deleted ConfigMap's last state is recorded", async () => {
  const ns = await env.namespace('rec-delete');
  const name = await recordNamespace(ns);
  await env.client.create(ConfigMaps, { metadata: { name: 'doomed', namespace: ns }, data: { v: '1' } });
  await waitRecording(name);
  await editConfigMap(ns, 'doomed', { v: '2' });
  await recordsUntil(name, ns, 'core.ConfigMap', 'doomed', 1);
  await env.client.delete(ConfigMaps, { namespace: ns, name: 'doomed' });
  const found = await recordsUntil(name, ns, 'core.ConfigMap', 'doomed', 2);
  const deletion = found.at(-1)!;
  assert.equal(deletion.meta.reason, 'Deleted');
  assert.deepEqual(data(deletion), { v: '2' }, 'the last state');
  assert.deepEqual(await readdir(join(storageRoot, name, ns, 'core.ConfigMap', 'doomed')).then((f) => f.filter((x) => x.startsWith('.'))), [], 'no last-seen copy of a deleted object');
});

test('Secrets are redacted by default: keys kept, no value on disk', async () => {
  const ns = await env.namespace('rec-secret');
  const name = await recordNamespace(ns);
  const one = Buffer.from('first-password').toString('base64');
  const two = Buffer.from('second-password').toString('base64');
  await env.client.create(Secrets, { metadata: { name: 'db', namespace: ns }, type: 'Opaque', data: { password: one, user: Buffer.from('admin').toString('base64') } });
  await waitRecording(name);
  await env.client.mergePatch(Secrets, { namespace: ns, name: 'db' }, { data: { password: two } }, { fieldManager: EDITOR });
  const [record] = await recordsUntil(name, ns, 'core.Secret', 'db', 1);
  assert.deepEqual(Object.keys(data(record!)).sort(), ['password', 'user']);
  assert.match(data(record!).password!, /^hmac-sha256:[0-9a-f]{64}$/);
  assert.match(record!.meta.diff ?? '', /^-\s+password: hmac-sha256:/m);
  const dir = join(storageRoot, name, ns, 'core.Secret', 'db');
  for (const file of await readdir(dir)) {
    const text = await readFile(join(dir, file), 'utf8');
    for (const value of [one, two, 'first-password', 'second-password']) assert.ok(!text.includes(value), `${file} holds no Secret value`);
  }
});

test("secrets: full keeps a Secret's values in its records", async () => {
  const ns = await env.namespace('rec-secret-full');
  const name = await recordNamespace(ns, { secrets: 'full' });
  const one = Buffer.from('first-password').toString('base64');
  await env.client.create(Secrets, { metadata: { name: 'db', namespace: ns }, type: 'Opaque', data: { password: one } });
  await waitRecording(name);
  await env.client.mergePatch(Secrets, { namespace: ns, name: 'db' }, { data: { password: Buffer.from('second-password').toString('base64') } }, { fieldManager: EDITOR });
  const [record] = await recordsUntil(name, ns, 'core.Secret', 'db', 1);
  assert.equal(data(record!).password, one, 'the previous value, as the API server holds it');
});

test('retention keeps exactly maxVersionsPerObject records of an object: the newest ones', async () => {
  const ns = await env.namespace('rec-retain');
  const name = await recordNamespace(ns, { retention: { maxVersionsPerObject: 3 } });
  await env.client.create(ConfigMaps, { metadata: { name: 'cm', namespace: ns }, data: { v: '0' } });
  await waitRecording(name);
  for (let i = 1; i <= 6; i++) {
    await editConfigMap(ns, 'cm', { v: String(i) });
    // One edit at a time: the positive signal that edit i was recorded (its previous version, v = i - 1).
    await eventually(`the record of edit ${i}`, async () => (await records(name, ns, 'core.ConfigMap', 'cm')).some((r) => data(r).v === String(i - 1)), { timeoutMs: 30_000, intervalMs: 200 });
  }
  const kept = await eventually('retention applied: 3 records', async () => {
    const found = await records(name, ns, 'core.ConfigMap', 'cm');
    return found.length === 3 ? found : undefined;
  }, { timeoutMs: 30_000, intervalMs: 200 });
  assert.deepEqual(kept.map((r) => data(r).v), ['3', '4', '5'], 'the three newest previous versions');
});

test('stopped while 50 changes and 5 deletions are made: every final state and every deletion is recorded at start, marked seen late', async () => {
  const ns = await env.namespace('rec-down50');
  const name = await recordNamespace(ns);
  const changed = Array.from({ length: 25 }, (_, i) => `changed-${i}`);
  const deleted = Array.from({ length: 5 }, (_, i) => `deleted-${i}`);
  for (const cm of [...changed, ...deleted]) await env.client.create(ConfigMaps, { metadata: { name: cm, namespace: ns }, data: { v: '1' } });
  await waitRecording(name);
  await eventually('last-seen copies written for all 30', async () => {
    const folders = await readdir(join(storageRoot, name, ns, 'core.ConfigMap')).catch(() => [] as string[]);
    return [...changed, ...deleted].every((n) => folders.includes(n));
  }, { timeoutMs: 60_000 });

  await recorder.stop();
  await sleep(1100); // the edits' managedFields time is then newer than the creation's
  // 50 changes: each of 25 ConfigMaps edited twice; and 5 deletions.
  for (const cm of changed) {
    await editConfigMap(ns, cm, { v: '2' });
    await editConfigMap(ns, cm, { v: '3' });
  }
  for (const cm of deleted) await env.client.delete(ConfigMaps, { namespace: ns, name: cm });
  recorder = await startRecorder();

  for (const cm of changed) {
    const [r] = await recordsUntil(name, ns, 'core.ConfigMap', cm, 1);
    assert.equal(r!.meta.reason, 'ChangedWhileNotWatching', cm);
    assert.equal(r!.meta.seenLate, true, cm);
    assert.deepEqual(data(r!), { v: '1' }, `${cm}: the last version seen before the stop`);
    assert.match(r!.meta.diff ?? '', /^\+\s+v: "3"$/m, `${cm}: the diff goes to the final state`);
  }
  for (const cm of deleted) {
    const [r] = await recordsUntil(name, ns, 'core.ConfigMap', cm, 1);
    assert.equal(r!.meta.reason, 'DeletedWhileNotWatching', cm);
    assert.equal(r!.meta.seenLate, true, cm);
    assert.deepEqual(data(r!), { v: '1' }, `${cm}: its last state`);
  }
  // Exactly one record each: the intermediate version (v 2) was never seen, and is not invented.
  for (const cm of [...changed, ...deleted]) assert.equal((await records(name, ns, 'core.ConfigMap', cm)).length, 1, cm);
});

test('stopped, changed, restarted: changes and deletions made meanwhile are recorded as seen late', async () => {
  const ns = await env.namespace('rec-down');
  const name = await recordNamespace(ns);
  for (const cm of ['kept', 'changed', 'gone']) await env.client.create(ConfigMaps, { metadata: { name: cm, namespace: ns }, data: { v: '1' } });
  await waitRecording(name);
  await eventually('last-seen copies written', async () => {
    const folders = await readdir(join(storageRoot, name, ns, 'core.ConfigMap')).catch(() => [] as string[]);
    return ['changed', 'gone', 'kept'].every((n) => folders.includes(n));
  });

  await recorder.stop();
  await sleep(1100); // the edits' managedFields time is then newer than the creation's
  await editConfigMap(ns, 'changed', { v: '2' });
  await editConfigMap(ns, 'changed', { v: '3' });
  await env.client.delete(ConfigMaps, { namespace: ns, name: 'gone' });
  await env.client.create(ConfigMaps, { metadata: { name: 'born', namespace: ns }, data: { v: '1' } });
  recorder = await startRecorder();

  const [changed] = await recordsUntil(name, ns, 'core.ConfigMap', 'changed', 1);
  assert.equal(changed!.meta.reason, 'ChangedWhileNotWatching');
  assert.equal(changed!.meta.seenLate, true);
  assert.deepEqual(data(changed!), { v: '1' }, 'the last version seen before the stop');
  assert.match(changed!.meta.diff ?? '', /^\+\s+v: "3"$/m, 'the diff goes to the final state');
  assert.equal(changed!.meta.changedBy?.manager, EDITOR);
  const [gone] = await recordsUntil(name, ns, 'core.ConfigMap', 'gone', 1);
  assert.equal(gone!.meta.reason, 'DeletedWhileNotWatching');
  assert.equal(gone!.meta.seenLate, true);
  assert.deepEqual(data(gone!), { v: '1' });
  const status = (await waitRecording(name)).status!;
  assert.equal((await records(name, ns, 'core.ConfigMap', 'kept')).length, 0, 'unchanged: nothing recorded');
  assert.equal((await records(name, ns, 'core.ConfigMap', 'born')).length, 0, 'created meanwhile: nothing before it to record');
  assert.ok(Date.parse(status.watchingSince!) > Date.parse(changed!.meta.changedAt ?? ''), 'watchingSince is the restart');
});

test('kinds discovery does not find are rejected by name (Ready False UnknownKind, a Warning event); the served kinds are still recorded', async () => {
  const ns = await env.namespace('rec-unknown');
  const name = `rec-${ns}`;
  const spec: ChangeRecorderSpec = {
    namespaces: { names: [ns] },
    resources: [
      { group: '', kind: 'ConfigMap' },
      { group: 'apps', kind: 'Deploymnet' },
      { group: 'widgets.example.invalid', kind: 'Widget' },
      // Served, but it can only be created: it cannot be listed and watched.
      { group: '', kind: 'Binding' },
    ],
  };
  await env.client.apply(ChangeRecorders, { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec }, { fieldManager: 'recorder-e2e', force: true });
  recorderNames.push(name);
  await env.client.create(ConfigMaps, { metadata: { name: 'app', namespace: ns }, data: { v: '1' } });

  const rejected = await eventually(`ChangeRecorder ${name} rejects the unknown kinds, with ConfigMap watched`, async () => {
    const r = await env.client.get(ChangeRecorders, name);
    const ready = r.status?.conditions?.find((c) => c.type === 'Ready');
    return ready?.reason === 'UnknownKind' && r.status?.kinds?.some((k) => k.kind === 'ConfigMap') ? r : undefined;
  }, { timeoutMs: 60_000, intervalMs: 250 });
  const ready = rejected.status!.conditions!.find((c) => c.type === 'Ready')!;
  assert.equal(ready.status, 'False');
  assert.equal(ready.observedGeneration, rejected.metadata.generation);
  assert.match(ready.message, /Deploymnet\.apps \(no served version of group apps \(apps\/v1\) has kind Deploymnet\)/);
  assert.match(ready.message, /Widget\.widgets\.example\.invalid \(the API server serves no group widgets\.example\.invalid\)/);
  assert.match(ready.message, /Binding \(bindings \(v1\) does not support list, watch, only create\)/);
  assert.match(ready.message, /Recording the 1 kind it serves meanwhile/);
  const resolved = rejected.status!.conditions!.find((c) => c.type === 'KindsResolved')!;
  assert.deepEqual([resolved.status, resolved.reason], ['False', 'KindsNotFound']);
  assert.deepEqual(rejected.status!.kinds!.map((k) => [k.kind, k.version, k.resource]), [['ConfigMap', 'v1', 'configmaps']]);

  // Still recording what it could resolve: once the watch has compared its first list, an edit is recorded.
  await eventually('the ConfigMap last seen', async () => (await readdir(join(storageRoot, name, ns, 'core.ConfigMap', 'app')).catch(() => [] as string[])).includes('.last-seen.yaml'), { timeoutMs: 30_000, intervalMs: 200 });
  await editConfigMap(ns, 'app', { v: '2' });
  const [record] = await recordsUntil(name, ns, 'core.ConfigMap', 'app', 1);
  assert.deepEqual(data(record!), { v: '1' });

  // A Warning event on the ChangeRecorder (cluster-scoped: its Events are in default) names them too.
  const event = await eventually('a Warning UnknownKind event about the recorder', async () => {
    const events = (await env.client.list(Events, { namespace: EVENTS_NAMESPACE })).items as (OpenObject & { reason?: string; type?: string; note?: string; reportingController?: string; regarding?: { kind?: string; name?: string } })[];
    return events.find((e) => e.reason === 'UnknownKind' && e.regarding?.kind === KIND && e.regarding.name === name);
  }, { timeoutMs: 30_000, intervalMs: 250 });
  assert.equal(event.type, 'Warning');
  assert.equal(event.reportingController, EVENT_CONTROLLER);
  assert.match(event.note ?? '', /Deploymnet\.apps .*Widget\.widgets\.example\.invalid .*Binding/);

  // Dropping the unknown kinds from the spec makes the recorder Ready.
  await env.client.apply(ChangeRecorders, { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec: { ...spec, resources: [{ group: '', kind: 'ConfigMap' }] } }, { fieldManager: 'recorder-e2e', force: true });
  const recording = await waitRecording(name);
  assert.equal(recording.status!.conditions!.find((c) => c.type === 'KindsResolved')?.reason, 'AllKindsFound');
});
