// What the kubelet decides: probes, restarts, crash loops, logs, exec, and pulls of images that are not there.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { etcdImage, imageFromDirectory, versions } from '../../src/index.ts';
import { binCache } from '../../src/paths.ts';
import { etcdContainer, eventually, podReady, useCluster, type Pod } from '../support.ts';

const suite = useCluster('pods');
const image = etcdImage(versions.ETCD_VERSIONS.at(-1)!);

async function createPod(name: string, spec: Record<string, unknown>): Promise<void> {
  await suite.kube.client.create(`/api/v1/namespaces/${suite.namespace}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec });
}
const getPod = (name: string): Promise<Pod> => suite.kube.client.get<Pod>(`/api/v1/namespaces/${suite.namespace}/pods/${name}`);

test('a failing liveness probe restarts the container', async () => {
  await createPod('liveness', {
    containers: [etcdContainer(image, { livenessProbe: { httpGet: { path: '/health', port: 2999 }, periodSeconds: 1, failureThreshold: 1 } })],
  });
  const pod = await eventually('a restart', async () => {
    const p = await getPod('liveness');
    return (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 ? p : undefined;
  }, { timeoutMs: 90_000 });
  assert.ok(pod.status!.containerStatuses![0]!.restartCount >= 1);
  const events = await suite.kube.kubectl(['get', 'events', '-n', suite.namespace, '--field-selector', 'involvedObject.name=liveness', '-o', 'jsonpath={.items[*].message}']);
  assert.match(events, /Liveness probe failed/);
});

test('a crashing container goes into CrashLoopBackOff with its exit code in status', async () => {
  await createPod('crasher', { containers: [{ name: 'main', image, command: ['etcdctl', '--endpoints=http://127.0.0.1:1', '--dial-timeout=200ms', '--command-timeout=300ms', 'get', 'x'] }] });
  const pod = await eventually('CrashLoopBackOff', async () => {
    const p = await getPod('crasher');
    return p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff' ? p : undefined;
  }, { timeoutMs: 90_000 });
  const status = pod.status!.containerStatuses![0]!;
  assert.equal(status.lastState?.terminated?.reason, 'Error');
  assert.equal(status.lastState?.terminated?.exitCode, 1);
  assert.ok(status.restartCount >= 1);
});

test('readiness gates Ready; kubectl logs and exec work', async () => {
  await createPod('ready', { containers: [etcdContainer(image, { readinessProbe: { httpGet: { path: '/health', port: 2379 }, periodSeconds: 1 } })] });
  await createPod('never-ready', { containers: [etcdContainer(image, { readinessProbe: { httpGet: { path: '/health', port: 2999 }, periodSeconds: 1 } })] });
  await eventually('ready pod Ready', async () => podReady(await getPod('ready')), { timeoutMs: 60_000 });
  const unready = await eventually('never-ready running', async () => {
    const p = await getPod('never-ready');
    return p.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
  });
  await new Promise((r) => setTimeout(r, 3000));
  assert.equal(podReady(await getPod('never-ready')), false, JSON.stringify(unready.status?.conditions));

  const logs = await suite.kube.kubectl(['logs', '-n', suite.namespace, 'ready']);
  assert.match(logs, /serving client traffic/);
  const exec = await suite.kube.kubectl(['exec', '-n', suite.namespace, 'ready', '--', 'etcdctl', 'endpoint', 'health']);
  assert.match(exec, /is healthy/);
});

test('an image that is not loaded fails with ErrImagePull / ImagePullBackOff and a clear message', async () => {
  await createPod('missing-image', { containers: [{ name: 'main', image: 'docker.io/library/not-loaded:v1' }] });
  const waiting = await eventually('an image pull error', async () => {
    const w = (await getPod('missing-image')).status?.containerStatuses?.[0]?.state?.waiting;
    return w && ['ErrImagePull', 'ImagePullBackOff'].includes(w.reason ?? '') && w.message ? w : undefined;
  }, { timeoutMs: 60_000 });
  assert.match(waiting.message!, /docker\.io\/library\/not-loaded:v1.*not found/);
});

test('an image built from a directory and loaded with loadImage runs on every node', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'image-'));
  await mkdir(join(dir, 'bin'));
  await copyFile(join(binCache, `etcd-${versions.ETCD_VERSIONS.at(-1)}`, 'etcdctl'), join(dir, 'bin', 'tool'));
  const image = await imageFromDirectory(dir, 'localkube.test/tool:v1', { Entrypoint: ['/bin/tool'], Cmd: ['version'] });
  const imported = await suite.kube.loadImage(image.archive);
  assert.match(imported, /localkube\.test\/tool:v1/);
  for (const node of suite.kube.nodes) {
    await createPod(`tool-${node}`, { restartPolicy: 'Never', nodeName: node, containers: [{ name: 'tool', image: 'localkube.test/tool:v1', imagePullPolicy: 'Never' }] });
  }
  for (const node of suite.kube.nodes) {
    const pod = await eventually(`tool-${node} done`, async () => {
      const p = await getPod(`tool-${node}`);
      return ['Succeeded', 'Failed'].includes(p.status?.phase ?? '') ? p : undefined;
    }, { timeoutMs: 60_000 });
    assert.equal(pod.status?.phase, 'Succeeded');
    // The container's log reaches the kubelet's file a moment after it exits (an empty read once, on a busy
    // machine, of a pod already Succeeded): wait for the output, then check it.
    const logs = await eventually(`tool-${node}'s output`, async () => {
      const out = await suite.kube.kubectl(['logs', '-n', suite.namespace, `tool-${node}`]);
      return out.trim() ? out : undefined;
    }, { timeoutMs: 30_000 });
    assert.match(logs, /etcdctl version: /);
  }
});
