import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../../src/helpers/finalizers.ts';
import type { Client, JsonPatchOp } from '../../src/client/client.ts';
import { InvalidError } from '../../src/client/errors.ts';
import { resource, type ResourceType } from '../../src/client/resources.ts';
import type { KubeObject, ObjectKey } from '../../src/object.ts';

const EtcdClusters = resource<KubeObject>('quorum.dev/v1alpha1', 'EtcdCluster', 'etcdclusters', true);
const FINALIZER = 'quorum.dev/cleanup';

/**
 * One stored object behind the JSON patch endpoint: applies add/remove/test on /metadata paths as the API
 * server would, bumping resourceVersion on each write and failing a `test` op with a 422.
 */
class FakeServer implements Pick<Client, 'create' | 'mergePatch' | 'jsonPatch'> {
  stored: KubeObject;
  readonly patches: { type: ResourceType; key: ObjectKey; ops: JsonPatchOp[] }[] = [];

  constructor(stored: KubeObject) {
    this.stored = structuredClone(stored);
  }

  create<T extends KubeObject>(): Promise<T> {
    return Promise.reject(new Error('create is not used by finalizer helpers'));
  }

  mergePatch<T extends KubeObject>(): Promise<T> {
    return Promise.reject(new Error('mergePatch is not used by finalizer helpers'));
  }

  jsonPatch<T extends KubeObject>(type: ResourceType<T>, key: ObjectKey, ops: JsonPatchOp[]): Promise<T> {
    this.patches.push({ type, key, ops: structuredClone(ops) });
    const next = structuredClone(this.stored);
    for (const op of ops) {
      const [, root, field, index] = op.path.split('/');
      assert.equal(root, 'metadata');
      const metadata = next.metadata as Record<string, unknown>;
      if (op.op === 'test') {
        const actual = index === undefined ? metadata[field!] : (metadata[field!] as unknown[] | undefined)?.[Number(index)];
        if (!isDeepStrictEqual(actual, op.value)) {
          return Promise.reject(new InvalidError('PATCH', '/fake', 422, { reason: 'Invalid', message: `test failed at ${op.path}` }));
        }
      } else if (op.op === 'add' && index === undefined) {
        metadata[field!] = op.value;
      } else if (op.op === 'add' && index === '-') {
        (metadata[field!] as unknown[]).push(op.value);
      } else if (op.op === 'remove' && index !== undefined) {
        (metadata[field!] as unknown[]).splice(Number(index), 1);
      } else {
        throw new Error(`fake does not implement ${JSON.stringify(op)}`);
      }
    }
    next.metadata.resourceVersion = String(Number(next.metadata.resourceVersion) + 1);
    this.stored = next;
    return Promise.resolve(structuredClone(next) as T);
  }

  /** Another writer's edit, as if made between our read and our patch. */
  concurrentWrite(edit: (obj: KubeObject) => void): void {
    edit(this.stored);
    this.stored.metadata.resourceVersion = String(Number(this.stored.metadata.resourceVersion) + 1);
  }
}

const cluster = (metadata: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'quorum.dev/v1alpha1',
  kind: 'EtcdCluster',
  metadata: { name: 'main', namespace: 'db', uid: 'u1', resourceVersion: '10', ...metadata },
});

test('hasFinalizer', () => {
  assert.equal(hasFinalizer(cluster({ finalizers: [FINALIZER] }), FINALIZER), true);
  assert.equal(hasFinalizer(cluster({ finalizers: ['other'] }), FINALIZER), false);
  assert.equal(hasFinalizer(cluster(), FINALIZER), false);
});

test('addFinalizer creates the list behind a resourceVersion test', async () => {
  const server = new FakeServer(cluster());
  const updated = await addFinalizer(server, EtcdClusters, cluster(), FINALIZER);
  assert.deepEqual(server.patches, [
    {
      type: EtcdClusters,
      key: { namespace: 'db', name: 'main' },
      ops: [
        { op: 'test', path: '/metadata/resourceVersion', value: '10' },
        { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] },
      ],
    },
  ]);
  assert.deepEqual(updated.metadata.finalizers, [FINALIZER]);
  assert.equal(updated.metadata.resourceVersion, '11');
});

test('addFinalizer appends to an existing list', async () => {
  const obj = cluster({ finalizers: ['other'] });
  const server = new FakeServer(obj);
  const updated = await addFinalizer(server, EtcdClusters, obj, FINALIZER);
  assert.deepEqual(server.patches[0]?.ops, [
    { op: 'test', path: '/metadata/resourceVersion', value: '10' },
    { op: 'add', path: '/metadata/finalizers/-', value: FINALIZER },
  ]);
  assert.deepEqual(updated.metadata.finalizers, ['other', FINALIZER]);
});

test('addFinalizer makes no request when the finalizer is there', async () => {
  const obj = cluster({ finalizers: [FINALIZER] });
  const server = new FakeServer(obj);
  assert.equal(await addFinalizer(server, EtcdClusters, obj, FINALIZER), obj);
  assert.equal(server.patches.length, 0);
});

test('addFinalizer from a stale view fails instead of dropping another writer\'s finalizer', async () => {
  const stale = cluster();
  const server = new FakeServer(stale);
  server.concurrentWrite((obj) => (obj.metadata.finalizers = ['someone-else/protect']));
  await assert.rejects(addFinalizer(server, EtcdClusters, stale, FINALIZER), InvalidError);
  assert.deepEqual(server.stored.metadata.finalizers, ['someone-else/protect']);
});

test('addFinalizer refuses objects being deleted and objects without a resourceVersion, without a request', async () => {
  const server = new FakeServer(cluster());
  await assert.rejects(addFinalizer(server, EtcdClusters, cluster({ deletionTimestamp: '2026-01-01T00:00:00Z' }), FINALIZER), /being deleted/);
  await assert.rejects(addFinalizer(server, EtcdClusters, cluster({ resourceVersion: undefined }), FINALIZER), /resourceVersion/);
  assert.equal(server.patches.length, 0);
});

test('removeFinalizer removes it by index, testing both the resourceVersion and the entry', async () => {
  const obj = cluster({ finalizers: ['other', FINALIZER, 'third'] });
  const server = new FakeServer(obj);
  const updated = await removeFinalizer(server, EtcdClusters, obj, FINALIZER);
  assert.deepEqual(server.patches, [
    {
      type: EtcdClusters,
      key: { namespace: 'db', name: 'main' },
      ops: [
        { op: 'test', path: '/metadata/resourceVersion', value: '10' },
        { op: 'test', path: '/metadata/finalizers/1', value: FINALIZER },
        { op: 'remove', path: '/metadata/finalizers/1' },
      ],
    },
  ]);
  assert.deepEqual(updated.metadata.finalizers, ['other', 'third']);
});

test('removeFinalizer removes duplicates from the highest index down', async () => {
  const obj = cluster({ finalizers: [FINALIZER, 'other', FINALIZER] });
  const server = new FakeServer(obj);
  const updated = await removeFinalizer(server, EtcdClusters, obj, FINALIZER);
  assert.deepEqual(
    server.patches[0]?.ops.filter((op) => op.op === 'remove').map((op) => op.path),
    ['/metadata/finalizers/2', '/metadata/finalizers/0'],
  );
  assert.deepEqual(updated.metadata.finalizers, ['other']);
});

test('removeFinalizer makes no request when the finalizer is absent', async () => {
  const obj = cluster({ finalizers: ['other'] });
  const server = new FakeServer(obj);
  assert.equal(await removeFinalizer(server, EtcdClusters, obj, FINALIZER), obj);
  assert.equal(await removeFinalizer(server, EtcdClusters, cluster(), FINALIZER).then((o) => o.metadata.finalizers), undefined);
  assert.equal(server.patches.length, 0);
});

test('removeFinalizer from a stale view fails instead of removing the wrong entry', async () => {
  const stale = cluster({ finalizers: ['other', FINALIZER] });
  const server = new FakeServer(stale);
  server.concurrentWrite((obj) => (obj.metadata.finalizers = [FINALIZER]));
  await assert.rejects(removeFinalizer(server, EtcdClusters, stale, FINALIZER), InvalidError);
  assert.deepEqual(server.stored.metadata.finalizers, [FINALIZER]);
});

test('finalizer helpers work on cluster-scoped objects', async () => {
  const Clustered = resource<KubeObject>('quorum.dev/v1alpha1', 'Backup', 'backups', false);
  const obj: KubeObject = { metadata: { name: 'b1', resourceVersion: '3' } };
  const server = new FakeServer(obj);
  await addFinalizer(server, Clustered, obj, FINALIZER);
  assert.deepEqual(server.patches[0]?.key, { namespace: '', name: 'b1' });
});
