// The recording engine on its own: cleaning, churn, Secret redaction, who changed an object, the diff, and
// the records built from updates, deletions and changes missed while not watching.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyPatch } from 'diff';
import type { KubeObject } from '@quorum/runtime';
import { keepManagersOnly, lastChange } from '../../src/record/author.ts';
import { cleanObject, LAST_APPLIED_ANNOTATION, REDACTED_PREFIX, sameVersion, type CleanSettings } from '../../src/record/clean.ts';
import { lastSeenOf, lastSeenOutdated, recordOfDeletion, recordOfMissedChange, recordOfMissedDeletion, recordOfUpdate, type CleaningContext } from '../../src/record/changes.ts';
import { unifiedDiff } from '../../src/record/diff.ts';
import { objectYAML } from '../../src/record/record-file.ts';

const key = new Uint8Array(32).fill(7);
const DEFAULTS: CleanSettings = { status: false, secrets: 'redact' };
const context: CleaningContext = { settings: DEFAULTS, redactionKey: key };
const now = new Date('2026-03-01T12:00:00.000Z');

function configMap(rv: string, data: Record<string, string>, extra: Partial<KubeObject['metadata']> = {}): KubeObject & { data: Record<string, string> } {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'app',
      namespace: 'default',
      uid: 'u-1',
      resourceVersion: rv,
      creationTimestamp: '2026-01-01T00:00:00Z',
      managedFields: [{ manager: 'kubectl-client-side-apply', operation: 'Update', time: '2026-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': {} } }],
      ...extra,
    },
    data,
  };
}

test('cleaning drops what the server sets and keeps what was declared, in a re-appliable order', () => {
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'shop',
      uid: 'u',
      resourceVersion: '9',
      generation: 4,
      creationTimestamp: '2026-01-01T00:00:00Z',
      managedFields: [{ manager: 'm' }],
      labels: { app: 'web' },
      annotations: { 'deployment.kubernetes.io/revision': '3', team: 'blue' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'o' }],
    },
    spec: { replicas: 2 },
    status: { readyReplicas: 2 },
  };
  const cleaned = cleanObject(deployment, DEFAULTS, key);
  assert.deepEqual(cleaned, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' }, annotations: { team: 'blue' }, ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'o' }] },
    spec: { replicas: 2 },
  });
  assert.deepEqual(Object.keys(cleaned), ['apiVersion', 'kind', 'metadata', 'spec']);
  assert.deepEqual(cleanObject(deployment, { ...DEFAULTS, status: true }, key).status, { readyReplicas: 2 }, 'status kept when asked');
  assert.equal(deployment.metadata.uid, 'u', 'the input is not modified');
  const bare = cleanObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', annotations: { 'deployment.kubernetes.io/revision': '1' }, finalizers: ['foregroundDeletion'] } }, DEFAULTS, key);
  assert.deepEqual(bare.metadata, { name: 'a' }, 'an annotations map or finalizer list left empty goes');
  const deleting = cleanObject({ metadata: { name: 'a', deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['orphan', 'example.com/cleanup'] } }, DEFAULTS, key);
  assert.deepEqual(deleting.metadata, { name: 'a', finalizers: ['example.com/cleanup'] }, "a delete request's own finalizers go, the object's stay");
});

test('status-only and metadata-only churn is not a change; a label change is', () => {
  const base = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', resourceVersion: '1', generation: 1, labels: { a: '1' } }, spec: { replicas: 1 }, status: { replicas: 1 } };
  const scaledStatus = { ...base, metadata: { ...base.metadata, resourceVersion: '2', managedFields: [{ manager: 'kube-controller-manager' }] }, status: { replicas: 3 } };
  assert.equal(recordOfUpdate(base, scaledStatus, context, now), undefined, 'status and bookkeeping alone');
  const revisionBump = { ...base, metadata: { ...base.metadata, resourceVersion: '3', annotations: { 'deployment.kubernetes.io/revision': '2' } } };
  assert.equal(recordOfUpdate(base, revisionBump, context, now), undefined, "the deployment controller's revision annotation");
  assert.equal(recordOfUpdate(base, base, context, now), undefined, 'a resync replay');
  const relabelled = { ...base, metadata: { ...base.metadata, resourceVersion: '4', labels: { a: '2' } } };
  assert.ok(recordOfUpdate(base, relabelled, context, now), 'a label change');
  const withStatus: CleaningContext = { ...context, settings: { ...DEFAULTS, status: true } };
  assert.ok(recordOfUpdate(base, scaledStatus, withStatus, now), 'with ignoreStatusOnly false, a status change is recorded');
});

test('Secrets: keys kept, values (and the last-applied annotation) replaced by a keyed hash; full keeps them', () => {
  const secret = (rv: string, password: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db', namespace: 'default', resourceVersion: rv, annotations: { [LAST_APPLIED_ANNOTATION]: `{"data":{"password":"${password}"}}` } },
    type: 'Opaque',
    data: { password, user: 'YWRtaW4=' },
  } as KubeObject);
  const redacted = cleanObject(secret('1', 'czNjcjN0'), DEFAULTS, key) as { data: Record<string, string>; metadata: { annotations: Record<string, string> } };
  assert.deepEqual(Object.keys(redacted.data), ['password', 'user']);
  for (const value of [...Object.values(redacted.data), redacted.metadata.annotations[LAST_APPLIED_ANNOTATION]!]) {
    assert.match(value, new RegExp(`^${REDACTED_PREFIX}[0-9a-f]{64}$`));
  }
  assert.ok(!JSON.stringify(redacted).includes('czNjcjN0'), 'the value appears nowhere');
  const again = cleanObject(secret('1', 'czNjcjN0'), DEFAULTS, key) as typeof redacted;
  assert.equal(again.data.password, redacted.data.password, 'the same value hashes the same: unchanged values show as unchanged');
  const otherKey = cleanObject(secret('1', 'czNjcjN0'), DEFAULTS, new Uint8Array(32).fill(8)) as typeof redacted;
  assert.notEqual(otherKey.data.password, redacted.data.password, 'the hash is keyed by the store');

  const record = recordOfUpdate(secret('1', 'czNjcjN0'), secret('2', 'bmV3'), context, now);
  assert.ok(record, 'a changed value is a change');
  assert.ok(!JSON.stringify(record).includes('czNjcjN0') && !JSON.stringify(record).includes('bmV3'), 'neither value is in the record or its diff');
  assert.match(record.meta.diff ?? '', /^- {2}password: hmac-sha256:/m);
  assert.doesNotMatch(record.meta.diff ?? '', /^[-+] {2}user:/m, 'the unchanged value is not in the diff as changed');

  const full = cleanObject(secret('1', 'czNjcjN0'), { ...DEFAULTS, secrets: 'full' }, key) as typeof redacted;
  assert.equal(full.data.password, 'czNjcjN0');
  const notASecret = cleanObject(configMap('1', { password: 'x' }), DEFAULTS, key) as { data: Record<string, string> };
  assert.equal(notASecret.data.password, 'x', 'only Secrets are redacted');
});

test('who changed it: the newest managedFields entry, preferring the object itself over a subresource on a tie', () => {
  const obj = (entries: unknown[]): KubeObject => ({ metadata: { name: 'a', managedFields: entries } });
  assert.equal(lastChange(obj([])), undefined);
  assert.deepEqual(
    lastChange(obj([
      { manager: 'helm', operation: 'Update', time: '2026-01-01T00:00:00Z' },
      { manager: 'kubectl-edit', operation: 'Update', time: '2026-02-01T00:00:00Z' },
      { manager: 'old', operation: 'Apply', time: '2025-01-01T00:00:00Z' },
    ])),
    { manager: 'kubectl-edit', operation: 'Update', time: '2026-02-01T00:00:00Z' },
  );
  const tie = [
    { manager: 'kubectl-edit', operation: 'Update', time: '2026-02-01T00:00:00Z' },
    { manager: 'kube-controller-manager', operation: 'Update', subresource: 'status', time: '2026-02-01T00:00:00Z' },
  ];
  assert.equal(lastChange(obj(tie))?.manager, 'kubectl-edit');
  assert.equal(lastChange(obj([...tie].reverse()))?.manager, 'kubectl-edit');
  assert.equal(lastChange(obj([{ manager: 'x' }, { time: '2026-01-01T00:00:00Z' }])), undefined, 'entries without a manager or a time say nothing');

  // With the version before: the entry that moved made the change, even when another ties on time.
  const created = { manager: 'installer', operation: 'Update', time: '2026-03-01T10:00:00Z' };
  const edited = { manager: 'kubectl-edit', operation: 'Update', time: '2026-03-01T10:00:00Z' };
  assert.equal(lastChange(obj([edited, created]), obj([created]))?.manager, 'kubectl-edit', 'a new entry');
  assert.equal(lastChange(obj([created, edited]), obj([created]))?.manager, 'kubectl-edit', 'whatever the order');
  const later = { ...created, time: '2026-03-01T10:00:05Z' };
  assert.equal(lastChange(obj([edited, later]), obj([edited, created]))?.manager, 'installer', 'an entry whose time moved');
  assert.equal(lastChange(obj([created, edited]), obj([created, edited]))?.manager, 'kubectl-edit', 'nothing moved (same second): the newest, listed last');

  const slim = keepManagersOnly(configMap('1', {}));
  assert.deepEqual(slim.metadata.managedFields, [{ manager: 'kubectl-client-side-apply', operation: 'Update', time: '2026-01-01T00:00:00Z' }], 'the informer keeps managers, not field sets');
});

test('an update record: the version before, the diff to the version after, who and when', () => {
  const before = configMap('10', { color: 'red', size: 'L' });
  const after = configMap('11', { color: 'blue', size: 'L' }, { managedFields: [{ manager: 'kubectl-edit', operation: 'Update', time: '2026-02-28T10:00:00Z' }] });
  const record = recordOfUpdate(before, after, context, now);
  assert.ok(record);
  assert.deepEqual(record.object, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: 'default' }, data: { color: 'red', size: 'L' } });
  assert.deepEqual({ ...record.meta, diff: undefined }, {
    reason: 'Updated',
    seenLate: false,
    recordedAt: '2026-03-01T12:00:00.000Z',
    resourceVersion: '10',
    replacedBy: '11',
    changedBy: { manager: 'kubectl-edit', operation: 'Update' },
    changedAt: '2026-02-28T10:00:00Z',
    cleaning: DEFAULTS,
    diff: undefined,
  });
  const diff = record.meta.diff ?? '';
  assert.match(diff, /^--- resourceVersion 10\n\+\+\+ resourceVersion 11\n@@ /);
  assert.match(diff, /^- {2}color: red$/m);
  assert.match(diff, /^\+ {2}color: blue$/m);
  const afterYAML = objectYAML(cleanObject(after, DEFAULTS, key));
  assert.equal(applyPatch(objectYAML(record.object), diff), afterYAML, 'the diff turns the recorded version into the next one');
});

test('a deletion record holds the last state and no diff', () => {
  const record = recordOfDeletion(configMap('12', { color: 'blue' }), context, now);
  assert.equal(record.meta.reason, 'Deleted');
  assert.equal(record.meta.resourceVersion, '12');
  assert.equal(record.meta.diff, undefined);
  assert.deepEqual((record.object as { data: unknown }).data, { color: 'blue' });
});

test('changes missed while not watching: compared with the last-seen copy as it was cleaned, marked seen late', () => {
  const seen = lastSeenOf(configMap('20', { color: 'red' }), context, now);
  const lastSeen = { meta: seen.meta, object: seen.object };
  assert.equal(recordOfMissedChange(lastSeen, configMap('20', { color: 'red' }), context, now), undefined, 'unchanged');
  assert.equal(recordOfMissedChange(lastSeen, configMap('25', { color: 'red' }, { uid: 'other', managedFields: [] }), context, now), undefined, 'bookkeeping only');

  const live = configMap('30', { color: 'green' }, { managedFields: [{ manager: 'argocd', operation: 'Apply', time: '2026-02-20T00:00:00Z' }] });
  const later = new Date('2026-03-02T00:00:00.000Z');
  const missed = recordOfMissedChange(lastSeen, live, context, later);
  assert.ok(missed);
  assert.equal(missed.meta.reason, 'ChangedWhileNotWatching');
  assert.equal(missed.meta.seenLate, true);
  assert.equal(missed.meta.resourceVersion, '20');
  assert.equal(missed.meta.replacedBy, '30');
  assert.deepEqual(missed.meta.changedBy, { manager: 'argocd', operation: 'Apply' });
  assert.deepEqual(missed.object, seen.object);
  assert.equal(applyPatch(objectYAML(seen.object), missed.meta.diff ?? ''), objectYAML(cleanObject(live, DEFAULTS, key)));

  const deleted = recordOfMissedDeletion(lastSeen, later);
  assert.equal(deleted.meta.reason, 'DeletedWhileNotWatching');
  assert.equal(deleted.meta.seenLate, true);
  assert.deepEqual(deleted.object, seen.object);
});

test('a settings change alone is not a missed change; the last-seen copy is refreshed instead', () => {
  const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', resourceVersion: '1' }, data: { k: 'dg==' } } as KubeObject;
  const seen = lastSeenOf(secret, context, now);
  const fullContext: CleaningContext = { ...context, settings: { status: false, secrets: 'full' } };
  assert.equal(recordOfMissedChange(seen, secret, fullContext, now), undefined, 'compared as it was cleaned (redacted)');
  assert.equal(lastSeenOutdated(seen, fullContext), true);
  assert.equal(lastSeenOutdated(seen, context), false);
});

test('unifiedDiff: empty for equal texts, unified hunks with context otherwise', () => {
  assert.equal(unifiedDiff('a\n', 'a\n', 'x', 'y'), '');
  const before = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'].join('\n') + '\n';
  const after = before.replace('5\n', 'five\n');
  assert.equal(unifiedDiff(before, after, 'old', 'new'), ['--- old', '+++ new', '@@ -2,7 +2,7 @@', ' 2', ' 3', ' 4', '-5', '+five', ' 6', ' 7', ' 8', ''].join('\n'));
  assert.ok(sameVersion({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }));
  assert.ok(!sameVersion({ a: 1 }, { a: 1, b: undefined }));
});
