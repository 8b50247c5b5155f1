// The user in a record (spec.attribution.users): a session looks up, as each change arrives, who the admission
// webhook saw start it from the recorded version, and writes changedBy.user beside the field manager, or
// changedBy.userUnknown with the reason. Driven through the real AdmittedUsers, fed the AdmissionRequests the
// API server would send, and a fake API server's watch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigMaps, type Operation, type OpenObject } from '@quorum/runtime';
import { AdmittedUsers } from '../../src/attribution/admitted-users.ts';
import { recordOfDeletion, recordOfUpdate } from '../../src/record/changes.ts';
import { formatRecord, parseRecord, type RecordMeta } from '../../src/record/record-file.ts';
import type { ResolvedKind } from '../../src/recorder/discovery.ts';
import { RecorderSession, type SessionSettings } from '../../src/recorder/session.ts';
import { buildStatus } from '../../src/recorder/status.ts';
import { FakeApi, MemoryRedactionKeys, until } from './fake-api.ts';

const CM: ResolvedKind = { group: '', kind: 'ConfigMap', version: 'v1', resource: 'configmaps', namespaced: true, type: ConfigMaps };
const WITH_USERS: SessionSettings = { cleaning: { status: false, secrets: 'redact' }, retention: { maxVersionsPerObject: 10 }, exclude: [], users: true };
const FOLDER = 'default/core.ConfigMap/app';

/**
 * A folder for the records and the sessions writing into it. After the test the sessions close first, then the
 * folder goes (a session still writing made the removal fail with ENOTEMPTY, and its watches then kept the file
 * from ever ending), even when an assertion failed.
 */
async function workspace(t: { after: (fn: () => Promise<void>) => void }): Promise<{ dir: string; sessions: RecorderSession[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'recorder-users-'));
  const sessions: RecorderSession[] = [];
  t.after(async () => {
    for (const session of sessions.splice(0)) await session.close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });
  return { dir, sessions };
}

async function start(api: FakeApi, dir: string, settings: SessionSettings, users?: AdmittedUsers): Promise<RecorderSession> {
  const session = await RecorderSession.open({
    name: 'test',
    location: { directory: dir },
    client: api.asClient(),
    redactionKeys: new MemoryRedactionKeys(),
    onActivity: () => undefined,
    onNamespacesChanged: () => undefined,
    ...(users ? { users } : {}),
  });
  await session.configure(settings);
  await session.watch([{ kind: CM, namespace: 'default' }]);
  await until('the watch live', () => session.report().watches.every((w) => w.ready));
  await session.idle();
  return session;
}

async function recordsUntil(dir: string, count: number): Promise<RecordMeta[]> {
  return until(`${count} records`, async () => {
    const names = (await readdir(join(dir, FOLDER)).catch(() => [] as string[])).filter((n) => n.endsWith('.yaml') && !n.startsWith('.')).sort();
    if (names.length < count) return undefined;
    return Promise.all(names.map(async (n) => parseRecord(await readFile(join(dir, FOLDER, n), 'utf8'), n).meta));
  });
}

const configMap = (data: Record<string, string>, manager: string, extra: Partial<OpenObject['metadata']> = {}): OpenObject => ({
  metadata: { name: 'app', namespace: 'default', uid: 'uid-app', managedFields: [{ manager, operation: 'Update', time: new Date().toISOString().slice(0, 19) + 'Z', fieldsV1: {} }], ...extra },
  data,
});

/** What the API server sends the webhook before it writes: the request's user, and the object as it is now. */
function admit(users: AdmittedUsers, api: FakeApi, operation: Operation, username: string): void {
  const current = api.get(ConfigMaps, 'default', 'app')!;
  users.review({
    uid: `review-${Math.random()}`,
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    operation,
    userInfo: { username, groups: ['system:authenticated'] },
    oldObject: current,
  });
}

test('an edit and a deletion name the user the webhook admitted from the recorded version, beside the field manager', async (t) => {
  const api = new FakeApi();
  const { dir, sessions } = await workspace(t);
  const users = new AdmittedUsers();
  api.create(ConfigMaps, configMap({ color: 'red' }, 'kubectl-create'));
  const session = await start(api, dir, WITH_USERS, users);
  sessions.push(session);

  admit(users, api, 'UPDATE', 'alice');
  api.update(ConfigMaps, configMap({ color: 'blue' }, 'kubectl-edit'));
  // Not seen by the webhook (it was down, say): the record says so and names no one.
  api.update(ConfigMaps, configMap({ color: 'green' }, 'kubectl-edit'));
  admit(users, api, 'DELETE', 'bob');
  api.remove(ConfigMaps, 'default', 'app');

  const [edited, unseen, deleted] = await recordsUntil(dir, 3);
  assert.deepEqual(edited!.changedBy, { manager: 'kubectl-edit', operation: 'Update', user: 'alice', groups: ['system:authenticated'] });
  assert.deepEqual(unseen!.changedBy, { manager: 'kubectl-edit', operation: 'Update', userUnknown: 'NotSeen' });
  assert.equal(deleted!.reason, 'Deleted');
  assert.deepEqual(deleted!.changedBy, { user: 'bob', groups: ['system:authenticated'] }, 'a deletion has no field manager, but a user');
});

test('a deletion held by a finalizer names who sent the DELETE, not the controller that removed the finalizer', async (t) => {
  const api = new FakeApi();
  const { dir, sessions } = await workspace(t);
  const users = new AdmittedUsers();
  api.create(ConfigMaps, configMap({ color: 'red' }, 'kubectl-create', { finalizers: ['example.com/hold'] }));
  const session = await start(api, dir, WITH_USERS, users);
  sessions.push(session);

  admit(users, api, 'DELETE', 'carol');
  api.update(ConfigMaps, configMap({ color: 'red' }, 'kubectl-create', { finalizers: ['example.com/hold'], deletionTimestamp: new Date().toISOString() }));
  admit(users, api, 'UPDATE', 'system:serviceaccount:kube-system:holder');
  api.update(ConfigMaps, configMap({ color: 'red' }, 'holder', { deletionTimestamp: new Date().toISOString() }));
  api.remove(ConfigMaps, 'default', 'app');

  const [deleted] = await recordsUntil(dir, 1);
  assert.equal(deleted!.reason, 'Deleted');
  assert.equal(deleted!.changedBy?.user, 'carol');
});

test('without the webhook in the process the records say NoWebhook; changes found at start are SeenLate; without attribution.users nothing is said', async (t) => {
  const api = new FakeApi();
  const { dir, sessions } = await workspace(t);
  api.create(ConfigMaps, configMap({ color: 'red' }, 'kubectl-create'));
  const first = await start(api, dir, WITH_USERS);
  sessions.push(first);
  api.update(ConfigMaps, configMap({ color: 'blue' }, 'kubectl-edit'));
  const [noWebhook] = await recordsUntil(dir, 1);
  assert.equal(noWebhook!.changedBy?.userUnknown, 'NoWebhook', JSON.stringify(noWebhook));
  assert.equal(noWebhook!.changedBy?.user, undefined);
  await first.idle();
  await first.close();
  sessions.splice(0);

  api.update(ConfigMaps, configMap({ color: 'green' }, 'kubectl-edit'));
  const users = new AdmittedUsers();
  const second = await start(api, dir, WITH_USERS, users);
  sessions.push(second);
  const records = await recordsUntil(dir, 2);
  const late = records[1];
  assert.equal(late!.reason, 'ChangedWhileNotWatching', JSON.stringify(records));
  assert.deepEqual(late!.changedBy, { manager: 'kubectl-edit', operation: 'Update', userUnknown: 'SeenLate' }, 'which requests made it is not known, so no one is named');
  await second.close();
  sessions.splice(0);

  const third = await start(api, dir, { ...WITH_USERS, users: false }, users);
  sessions.push(third);
  admit(users, api, 'UPDATE', 'alice');
  api.update(ConfigMaps, configMap({ color: 'yellow' }, 'kubectl-edit'));
  const [, , plain] = await recordsUntil(dir, 3);
  assert.deepEqual(plain!.changedBy, { manager: 'kubectl-edit', operation: 'Update' }, 'a ChangeRecorder that does not ask for users gets none');
});

test('the record file keeps the user and the reason it is unknown, and reads them back', () => {
  const context = { settings: { status: false, secrets: 'redact' as const }, redactionKey: new Uint8Array(32) };
  const before = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: 'default', uid: 'u', resourceVersion: '41' }, data: { color: 'red' } };
  const after = { ...before, metadata: { ...before.metadata, resourceVersion: '42', managedFields: [{ manager: 'kubectl-edit', operation: 'Update', time: '2026-03-01T12:00:00Z' }] }, data: { color: 'blue' } };
  const now = new Date('2026-03-01T12:00:01Z');

  const update = recordOfUpdate(before, after, context, now, { user: 'alice', groups: ['dev'] })!;
  const text = formatRecord(update.meta, update.object);
  assert.match(text, /^# changedBy:\n# {3}manager: kubectl-edit\n# {3}operation: Update\n# {3}user: alice\n# {3}groups:\n# {5}- dev$/m);
  assert.deepEqual(parseRecord(text, 'r.yaml').meta.changedBy, { manager: 'kubectl-edit', operation: 'Update', user: 'alice', groups: ['dev'] });

  const deletion = recordOfDeletion(after, context, now, { userUnknown: 'Ambiguous' });
  assert.deepEqual(parseRecord(formatRecord(deletion.meta, deletion.object), 'd.yaml').meta.changedBy, { userUnknown: 'Ambiguous' });
  assert.equal(recordOfDeletion(after, context, now).meta.changedBy, undefined, 'not asked for: nothing said');
});

test('UsersAttributed: True while the webhook serves, False with the reason when it does not, gone when users are not asked for', () => {
  const now = new Date('2026-03-01T12:00:00Z');
  const serving = buildStatus({ generation: 1, previous: undefined, now, users: {} });
  assert.deepEqual(pick(serving, 'UsersAttributed'), ['True', 'AdmissionWebhook']);
  const down = buildStatus({ generation: 2, previous: serving, now, users: { webhookProblem: 'the recorder runs without its admission webhook' } });
  assert.deepEqual(pick(down, 'UsersAttributed'), ['False', 'WebhookNotServing']);
  assert.match(down.conditions!.find((c) => c.type === 'UsersAttributed')!.message, /without its admission webhook/);
  assert.equal(pick(buildStatus({ generation: 3, previous: down, now }), 'UsersAttributed'), undefined);
});

function pick(status: ReturnType<typeof buildStatus>, type: string): [string, string] | undefined {
  const c = status.conditions?.find((x) => x.type === type);
  return c ? [c.status, c.reason] : undefined;
}
