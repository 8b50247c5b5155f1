// The users the admission webhook remembers: keyed by the object's uid and the resourceVersion the request
// started from, for a bounded time and number of versions, never for dry runs, and always allowed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AdmissionRequest, Operation } from '@quorum/runtime';
import { AdmittedUsers } from '../../src/attribution/admitted-users.ts';

let next = 0;

function request(operation: Operation, username: string, uid: string, resourceVersion: string, extra: Partial<AdmissionRequest<unknown>> = {}): AdmissionRequest<unknown> {
  const oldObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: 'default', uid, resourceVersion } };
  return {
    uid: `review-${next++}`,
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    name: 'app',
    namespace: 'default',
    operation,
    userInfo: { username, groups: ['system:authenticated', 'dev'] },
    oldObject,
    ...(operation === 'UPDATE' ? { object: { ...oldObject, data: { color: 'blue' } } } : {}),
    ...extra,
  };
}

test('the user of an UPDATE is found by the uid and the resourceVersion of the version it started from', () => {
  const users = new AdmittedUsers();
  assert.deepEqual(users.review(request('UPDATE', 'alice', 'uid-1', '41')), { allowed: true });
  assert.deepEqual(users.lookup('uid-1', '41', 'UPDATE'), { user: { username: 'alice', groups: ['system:authenticated', 'dev'] } });
  assert.deepEqual(users.lookup('uid-1', '42', 'UPDATE'), { unknown: 'NotSeen' }, 'another version of the object');
  assert.deepEqual(users.lookup('uid-2', '41', 'UPDATE'), { unknown: 'NotSeen' }, 'another object at the same resourceVersion');
  assert.deepEqual(users.lookup('uid-1', '41', 'DELETE'), { unknown: 'NotSeen' }, 'a deletion from that version was not admitted');
});

test('a DELETE is remembered under the last state it deleted, apart from an UPDATE racing it from the same version', () => {
  const users = new AdmittedUsers();
  users.review(request('DELETE', 'bob', 'uid-1', '50'));
  users.review(request('UPDATE', 'alice', 'uid-1', '50'));
  assert.deepEqual(users.lookup('uid-1', '50', 'DELETE'), { user: { username: 'bob', groups: ['system:authenticated', 'dev'] } });
  assert.deepEqual(users.lookup('uid-1', '50', 'UPDATE'), { user: { username: 'alice', groups: ['system:authenticated', 'dev'] } });
});

test('dry runs, creations, subresource writes and requests without a version or user are not remembered, and all are allowed', () => {
  const users = new AdmittedUsers();
  const ignored = [
    request('UPDATE', 'alice', 'uid-1', '41', { dryRun: true }),
    request('DELETE', 'alice', 'uid-2', '41', { dryRun: true }),
    request('CREATE', 'alice', 'uid-3', '41'),
    request('UPDATE', 'alice', 'uid-4', '41', { subResource: 'status' }),
    request('UPDATE', '', 'uid-5', '41'),
    request('UPDATE', 'alice', 'uid-6', '41', { oldObject: undefined }),
    request('UPDATE', 'alice', 'uid-7', '41', { oldObject: { metadata: 'not an object' } }),
  ];
  for (const r of ignored) assert.deepEqual(users.review(r), { allowed: true });
  assert.equal(users.size, 0);
  assert.deepEqual(users.lookup('uid-1', '41', 'UPDATE'), { unknown: 'NotSeen' }, 'a dry run changes nothing: there is no user to name');
});

test('a request the handler cannot read is still allowed: the recorder never refuses a write', () => {
  const users = new AdmittedUsers();
  const garbage = { uid: 'x', operation: 'UPDATE', userInfo: null, oldObject: { metadata: { uid: 'u', resourceVersion: '1' } } } as unknown as AdmissionRequest<unknown>;
  assert.deepEqual(users.review(garbage), { allowed: true });
  assert.deepEqual(users.lookup('u', '1', 'UPDATE'), { unknown: 'NotSeen' });
});

test('different users admitted from the same version are ambiguous; the same user again is not', () => {
  const users = new AdmittedUsers();
  users.review(request('UPDATE', 'alice', 'uid-1', '41'));
  users.review(request('UPDATE', 'alice', 'uid-1', '41'));
  assert.deepEqual(users.lookup('uid-1', '41', 'UPDATE'), { user: { username: 'alice', groups: ['system:authenticated', 'dev'] } }, 'a retry by the same user');
  users.review(request('UPDATE', 'bob', 'uid-1', '41'));
  assert.deepEqual(users.lookup('uid-1', '41', 'UPDATE'), { unknown: 'Ambiguous' }, 'only one of them was written, and which is not known here');
});

test('entries expire after the TTL', () => {
  let now = 1_000_000;
  const users = new AdmittedUsers({ ttlMs: 60_000, now: () => now });
  users.review(request('UPDATE', 'alice', 'uid-1', '41'));
  now += 30_000;
  users.review(request('UPDATE', 'bob', 'uid-2', '7'));
  now += 30_000;
  assert.ok('user' in users.lookup('uid-1', '41', 'UPDATE'), 'at the TTL it is still there');
  now += 1;
  assert.deepEqual(users.lookup('uid-1', '41', 'UPDATE'), { unknown: 'NotSeen' }, 'past the TTL it is not');
  assert.ok('user' in users.lookup('uid-2', '7', 'UPDATE'), 'a younger entry stays');
  users.review(request('UPDATE', 'carol', 'uid-3', '9'));
  assert.equal(users.size, 2, 'the expired entry is dropped at the next admission');
});

test('at most maxEntries versions are kept, the oldest dropped first; a new admission of a version makes it the newest', () => {
  const users = new AdmittedUsers({ maxEntries: 3 });
  for (const uid of ['a', 'b', 'c']) users.review(request('UPDATE', 'alice', uid, '1'));
  users.review(request('DELETE', 'alice', 'a', '1'));
  users.review(request('UPDATE', 'alice', 'd', '1'));
  assert.equal(users.size, 3);
  assert.deepEqual(users.lookup('b', '1', 'UPDATE'), { unknown: 'NotSeen' }, 'the oldest went');
  for (const uid of ['a', 'c', 'd']) assert.ok('user' in users.lookup(uid, '1', 'UPDATE'), uid);
  assert.ok('user' in users.lookup('a', '1', 'DELETE'));
});
