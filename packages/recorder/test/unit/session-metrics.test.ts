// A ChangeRecorder's retry series go with it (issue 23, finding 9): a watch that stops (its namespace no
// longer recorded) takes its informer's series along, a closed session (a deleted ChangeRecorder) takes
// all of its own, and one re-created with the same name counts from zero.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigMaps, RuntimeMetrics, type Client, type ResourceType } from '@quorum/runtime';
import type { ResolvedKind } from '../../src/recorder/discovery.ts';
import { RecorderSession } from '../../src/recorder/session.ts';
import { FakeApi, MemoryRedactionKeys, until } from './fake-api.ts';

const CM: ResolvedKind = { group: '', kind: 'ConfigMap', version: 'v1', resource: 'configmaps', namespaced: true, type: ConfigMaps };

/** The fake API, whose first list of ConfigMaps in each namespace is refused, as an API server that is briefly unreachable. */
function flakyClient(api: FakeApi): Client {
  const refused = new Set<string>();
  const client = api.asClient();
  return new Proxy(client, {
    get(target, property) {
      if (property !== 'list') {
        const value = Reflect.get(target, property, target) as unknown;
        // FakeApi keeps its state in private fields, which only the object itself (not the proxy) can read.
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      }
      return (type: ResourceType, options: { namespace?: string } = {}) => {
        const scope = `${type.plural}/${options.namespace ?? ''}`;
        if (!refused.has(scope)) {
          refused.add(scope);
          return Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
        }
        return api.list(type, options);
      };
    },
  });
}

async function lines(metrics: RuntimeMetrics, prefix: string): Promise<string[]> {
  return (await metrics.registry.metrics()).split('\n').filter((line) => line.includes(`component="${prefix}`));
}

test("a deleted ChangeRecorder's retry series leave /metrics; one re-created with its name starts from zero", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'recorder-metrics-'));
  t.after(() => rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));
  const metrics = new RuntimeMetrics({ processMetrics: false });
  const open = async (client: Client): Promise<RecorderSession> => {
    const session = await RecorderSession.open({ name: 'app', location: { directory: dir }, client, redactionKeys: new MemoryRedactionKeys(), metrics: metrics.retries, onActivity: () => undefined, onNamespacesChanged: () => undefined });
    await session.configure({ cleaning: { status: false, secrets: 'redact' }, retention: { maxVersionsPerObject: 10 }, exclude: [] });
    return session;
  };
  const api = new FakeApi();
  const session = await open(flakyClient(api));
  await session.watch([{ kind: CM, namespace: 'a' }, { kind: CM, namespace: 'b' }]);
  await until('both watches ready after a refused list each', () => session.report().watches.every((w) => w.ready), 10_000);
  const retriesOf = (namespace: string): string => `runtime_retries_total{component="recorder/app/informer/configmaps(namespace=${namespace})",reason="ECONNREFUSED"} 1`;
  assert.deepEqual((await lines(metrics, 'recorder/app/')).filter((l) => l.startsWith('runtime_retries_total')), [retriesOf('a'), retriesOf('b')]);

  // Namespace b is no longer recorded: its watch stops, and its series go; a's stay.
  await session.watch([{ kind: CM, namespace: 'a' }]);
  assert.deepEqual((await lines(metrics, 'recorder/app/')).filter((l) => l.startsWith('runtime_retries_total')), [retriesOf('a')]);

  // The ChangeRecorder is deleted (the reconciler closes its session): nothing of it is left.
  await session.close();
  assert.deepEqual(await lines(metrics, 'recorder/app/'), []);

  // Re-created with the same name, against an API server that refuses its first list again: one retry, not two.
  const again = await open(flakyClient(api));
  t.after(() => again.close());
  await again.watch([{ kind: CM, namespace: 'a' }]);
  await until('the new watch ready', () => again.report().watches.every((w) => w.ready), 10_000);
  assert.deepEqual((await lines(metrics, 'recorder/app/')).filter((l) => l.startsWith('runtime_retries_total')), [retriesOf('a')]);
});
