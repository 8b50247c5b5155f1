import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyIfChanged, needsApply } from '../../src/helpers/apply.ts';
import type { ApplyOptions, Client } from '../../src/client/client.ts';
import { ConfigMaps, StatefulSets, type ResourceType } from '../../src/client/resources.ts';
import type { KubeObject } from '../../src/object.ts';

type Open = KubeObject & Record<string, unknown>;

const desired = (): Open => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'main', namespace: 'db', labels: { app: 'etcd' } },
  spec: {
    replicas: 3,
    template: {
      spec: {
        containers: [{ name: 'etcd', image: 'etcd:3.6', resources: { requests: { memory: '1Gi' } } }],
      },
    },
  },
});

/** What the server returns for `desired()`: the same fields plus its own and defaulted ones. */
const observed = (): Open => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: {
    name: 'main',
    namespace: 'db',
    uid: 'u1',
    resourceVersion: '42',
    generation: 2,
    labels: { app: 'etcd', 'added-by': 'someone-else' },
    managedFields: [{ manager: 'quorum' }],
  },
  spec: {
    replicas: 3,
    podManagementPolicy: 'OrderedReady',
    template: {
      metadata: {},
      spec: {
        containers: [{ name: 'etcd', image: 'etcd:3.6', imagePullPolicy: 'IfNotPresent', resources: { requests: { memory: '1Gi' } } }],
        restartPolicy: 'Always',
      },
    },
  },
  status: { replicas: 3, readyReplicas: 3 },
});

test('needsApply is false when the server already holds every desired field', () => {
  assert.equal(needsApply(desired(), observed()), false);
});

test('needsApply is true when nothing is observed', () => {
  assert.equal(needsApply(desired(), undefined), true);
});

test('needsApply notices changed, added and retyped values', () => {
  const changedScalar = desired();
  (changedScalar.spec as { replicas: number }).replicas = 5;
  assert.equal(needsApply(changedScalar, observed()), true);

  const addedLabel = desired();
  addedLabel.metadata.labels = { app: 'etcd', tier: 'db' };
  assert.equal(needsApply(addedLabel, observed()), true);

  const stringForNumber = desired();
  (stringForNumber.spec as { replicas: unknown }).replicas = '3';
  assert.equal(needsApply(stringForNumber, observed()), true);

  const unlabelled = observed();
  delete unlabelled.metadata.labels;
  assert.equal(needsApply(desired(), unlabelled), true);

  const scalarForObject = observed();
  (scalarForObject.spec as { template: unknown }).template = 'not an object';
  assert.equal(needsApply(desired(), scalarForObject), true);
});

test('needsApply compares lists by length and element', () => {
  const twoContainers = desired();
  const containers = (twoContainers.spec as { template: { spec: { containers: unknown[] } } }).template.spec.containers;
  containers.push({ name: 'sidecar', image: 'busybox' });
  assert.equal(needsApply(twoContainers, observed()), true);

  const newImage = desired();
  (newImage.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]!.image = 'etcd:3.7';
  assert.equal(needsApply(newImage, observed()), true);

  const fewer = observed();
  (fewer.spec as { template: { spec: { containers: unknown[] } } }).template.spec.containers.push({ name: 'extra' });
  assert.equal(needsApply(desired(), fewer), true);
});

test('needsApply ignores resourceVersion, managedFields and status in desired', () => {
  const withServerFields = desired();
  withServerFields.metadata.resourceVersion = '1';
  withServerFields.metadata.managedFields = [{ manager: 'other' }];
  withServerFields.status = { replicas: 0 };
  assert.equal(needsApply(withServerFields, observed()), false);
});

test('needsApply ignores apiVersion and kind only when the observed object lacks them', () => {
  const listItem = observed();
  delete listItem.apiVersion;
  delete listItem.kind;
  assert.equal(needsApply(desired(), listItem), false);
  const otherVersion = observed();
  otherVersion.apiVersion = 'apps/v1beta2';
  assert.equal(needsApply(desired(), otherVersion), true);
});

test('needsApply treats null and undefined in desired as setting nothing', () => {
  const withNulls = desired();
  (withNulls.metadata as Record<string, unknown>).creationTimestamp = null;
  withNulls.metadata.annotations = undefined;
  assert.equal(needsApply(withNulls, observed()), false);
});

test('needsApply does not normalise quantities: desired must use the canonical form', () => {
  const nonCanonical = desired();
  (nonCanonical.spec as { template: { spec: { containers: { resources: unknown }[] } } }).template.spec.containers[0]!.resources = { requests: { memory: '1024Mi' } };
  assert.equal(needsApply(nonCanonical, observed()), true);
});

test('needsApply does not treat an empty list as an omitted one', () => {
  const emptyArgs = desired();
  (emptyArgs.spec as { template: { spec: { containers: Record<string, unknown>[] } } }).template.spec.containers[0]!.args = [];
  assert.equal(needsApply(emptyArgs, observed()), true);
});

class FakeApplier implements Pick<Client, 'apply'> {
  readonly calls: { type: ResourceType; obj: KubeObject; options: ApplyOptions }[] = [];
  apply<T extends KubeObject>(type: ResourceType<T>, obj: T, options: ApplyOptions): Promise<T> {
    this.calls.push({ type, obj, options });
    return Promise.resolve({ ...obj, metadata: { ...obj.metadata, resourceVersion: '43' } });
  }
}

test('applyIfChanged skips the request when nothing would change', async () => {
  const client = new FakeApplier();
  const current = observed();
  const result = await applyIfChanged(client, StatefulSets, desired(), current, { fieldManager: 'quorum' });
  assert.equal(result.applied, false);
  assert.equal(result.object, current);
  assert.equal(client.calls.length, 0);
});

test('applyIfChanged applies changes and missing objects with the given options', async () => {
  const client = new FakeApplier();
  const changed = desired();
  (changed.spec as { replicas: number }).replicas = 5;
  const result = await applyIfChanged(client, StatefulSets, changed, observed(), { fieldManager: 'quorum', force: true });
  assert.equal(result.applied, true);
  assert.equal(result.object.metadata.resourceVersion, '43');
  assert.deepEqual(client.calls, [{ type: StatefulSets, obj: changed, options: { fieldManager: 'quorum', force: true } }]);

  const config = { metadata: { name: 'cfg', namespace: 'db' }, data: { a: '1' } };
  const created = await applyIfChanged(client, ConfigMaps, config, undefined, { fieldManager: 'quorum' });
  assert.equal(created.applied, true);
  assert.equal(client.calls.length, 2);
  assert.equal(client.calls[1]?.obj, config);
});
