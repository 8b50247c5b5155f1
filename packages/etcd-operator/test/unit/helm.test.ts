// The Helm chart renders the same objects as `quorum manifests`, and the committed chart is current.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { helmChart } from '../../src/deploy/helm.ts';
import { operatorManifests, PEER_WAIT_IMAGE } from '../../src/deploy/manifests.ts';

const chartDir = join(import.meta.dirname, '..', '..', '..', '..', 'deploy', 'helm', 'quorum');

/** Just enough of Helm's template language for our chart: values, the release namespace, quote, one if. */
function render(template: string, values: { namespace: string; image: string; tag: string; peerWaitImage: string; peerWaitTag: string; replicas: number; grace: number; stepDeadline: number; logLevel: string; clusterDomain: string; webhooks: boolean }): string {
  let out = template.replace(/\{\{- if \.Values\.webhooks\.enabled \}\}\n([\s\S]*?)\{\{- end \}\}\n/g, (_, body: string) => (values.webhooks ? body : ''));
  out = out
    .replaceAll('{{ .Release.Namespace }}', values.namespace)
    .replaceAll('{{ .Values.image.repository }}', values.image)
    .replaceAll('{{ .Values.image.tag }}', values.tag)
    .replaceAll('{{ .Values.peerWaitImage.repository }}', values.peerWaitImage)
    .replaceAll('{{ .Values.peerWaitImage.tag }}', values.peerWaitTag)
    .replaceAll('{{ .Values.replicas }}', String(values.replicas))
    .replaceAll('{{ .Values.crashLoopGraceSeconds | quote }}', JSON.stringify(String(values.grace)))
    .replaceAll('{{ .Values.stepDeadlineSeconds | quote }}', JSON.stringify(String(values.stepDeadline)))
    .replaceAll('{{ .Values.logLevel }}', values.logLevel)
    .replaceAll('{{ .Values.clusterDomain | quote }}', JSON.stringify(values.clusterDomain))
    .replaceAll('{{ .Values.webhooks.enabled | quote }}', JSON.stringify(String(values.webhooks)));
  assert.doesNotMatch(out, /\{\{/, 'every template expression rendered');
  return out;
}

test('the chart renders exactly the objects of quorum manifests (CRD and namespace aside)', () => {
  const chart = helmChart();
  for (const webhooks of [true, false]) {
    const values = { namespace: 'ops', image: 'registry.example/quorum', tag: '9.9.9', peerWaitImage: 'registry.example/peer-wait', peerWaitTag: '9.9.8', replicas: 3, grace: 45, stepDeadline: 90, logLevel: 'debug', clusterDomain: 'corp.example', webhooks };
    const rendered = ['templates/operator.yaml', 'templates/webhooks.yaml']
      .flatMap((f) => parseAllDocuments(render(chart[f]!, values)).map((d) => d.toJS() as unknown))
      .filter((o) => o !== null);
    const expected = operatorManifests({ namespace: 'ops', image: 'registry.example/quorum:9.9.9', peerWaitImage: 'registry.example/peer-wait:9.9.8', replicas: 3, crashLoopGraceSeconds: 45, stepDeadlineSeconds: 90, logLevel: 'debug', clusterDomain: 'corp.example', webhooks })
      .filter((o) => o.kind !== 'Namespace' && o.kind !== 'CustomResourceDefinition');
    assert.deepEqual(rendered, expected);
  }
});

test('the committed chart is what the generator writes', async () => {
  for (const [file, content] of Object.entries(helmChart())) {
    assert.equal(await readFile(join(chartDir, file), 'utf8'), content, `deploy/helm/quorum/${file} is stale: run node packages/etcd-operator/scripts/generate.ts`);
  }
});

test('the webhooks fail open and the operator is told which peer-wait image to use', () => {
  const objects = operatorManifests({ peerWaitImage: 'registry.example/peer-wait:1' });
  // Fail would refuse every EtcdCluster edit (even `paused`) while the operator is down; CEL still validates.
  const policies = objects
    .filter((o) => o.kind === 'MutatingWebhookConfiguration' || o.kind === 'ValidatingWebhookConfiguration')
    .flatMap((o) => (o['webhooks'] as { failurePolicy: string }[]).map((w) => w.failurePolicy));
  assert.ok(policies.length >= 2, 'a mutating and at least one validating webhook');
  assert.deepEqual(new Set(policies), new Set(['Ignore']));
  const deployment = objects.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } } };
  const env = deployment.spec.template.spec.containers[0]!.env;
  assert.equal(env.find((e) => e.name === 'PEER_WAIT_IMAGE')?.value, 'registry.example/peer-wait:1');
  const defaults = operatorManifests().find((o) => o.kind === 'Deployment') as unknown as typeof deployment;
  assert.equal(defaults.spec.template.spec.containers[0]!.env.find((e) => e.name === 'PEER_WAIT_IMAGE')?.value, PEER_WAIT_IMAGE);
});
