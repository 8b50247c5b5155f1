// A backup whose object store stops during the upload (`localkube addon stop s3` while the Job streams ~200 MiB):
// the EtcdBackup fails with a reason, and nothing under its prefix looks like a complete backup.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive addons/s3
// @shared operator
// @timeout 20m: the backup may wait 10 minutes for the stopped store
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { Pods } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import type { EtcdBackup } from '../../src/api/etcdbackup.ts';
import { EtcdClient } from '../../src/etcd/client.ts';
import { EtcdBackups } from '../../src/resources.ts';
import { enableS3, type S3Addon } from '../support/s3-addon.ts';
import { applyCluster, clientServiceEndpoint, eventually, PLAINTEXT, setUpOperator, waitAvailable } from './support.ts';
import { RESTRICTED_NAMESPACE_LABELS } from '../../src/deploy/manifests.ts';

let env: TestEnv;
let ns: string;
let s3: S3Addon;
let hostS3: S3Client;
const NAME = 'outage';

before(async () => {
  env = await setUpOperator();
  ns = await env.namespace('backup-outage', { labels: { ...RESTRICTED_NAMESPACE_LABELS } });
  s3 = await enableS3(env, [ns]);
  hostS3 = s3.hostClient;
  // One member is enough to back up: the upload, not the cluster, is what this file is about.
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 1 });
  await waitAvailable(env.client, ns, NAME, 1);
});
after(async () => {
  hostS3?.destroy();
  await env.stop();
});

const destination = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  s3: { bucket: s3.bucket, endpoint: s3.endpoint, forcePathStyle: true, credentialsSecret: 's3-credentials', ...over },
});

test('the storage server stopped during an upload: Failed with a reason, and no object that looks complete', async () => {
  // ~200 MiB of data, so that the upload is still under way when the server goes.
  const client = new EtcdClient({ endpoint: await clientServiceEndpoint(env.client, ns, NAME), timeoutMs: 10_000 });
  const value = 'x'.repeat(1024 * 1024);
  for (let i = 0; i < 200; i++) await client.put(`/bulk/${String(i).padStart(4, '0')}`, value);
  client.close();
  await env.client.create(EtcdBackups, { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdBackup', metadata: { name: 'interrupted', namespace: ns }, spec: { clusterName: NAME, destination: destination({ prefix: 'interrupted' }) } });
  // The positive signal that the upload is under way: the Job's pod runs.
  await eventually('the backup Job runs', async () => {
    const pods = (await env.client.list(Pods, { namespace: ns, labelSelector: 'etcd.quorum.dev/backup=interrupted' })).items as unknown as { status?: { phase?: string } }[];
    return pods.some((p) => p.status?.phase === 'Running');
  }, { timeoutMs: 120_000, intervalMs: 200 });
  await env.kube.stopAddon('s3');
  let failed: EtcdBackup;
  try {
    failed = await eventually('the backup finished', async () => {
      const b = await env.client.get(EtcdBackups, { namespace: ns, name: 'interrupted' });
      return b.status?.phase === 'Succeeded' || b.status?.phase === 'Failed' ? b : undefined;
    }, { timeoutMs: 600_000, intervalMs: 1000 });
  } finally {
    await env.kube.startAddon('s3');
  }
  assert.equal(failed.status?.phase, 'Failed', JSON.stringify(failed.status));
  const reason = failed.status.conditions!.find((c) => c.type === 'Failed')!;
  assert.ok(['StorageUnreachable', 'Timeout', 'StorageFailed'].includes(reason.reason), `${reason.reason}: ${reason.message}`);
  const listed = await hostS3.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'interrupted/' }));
  assert.deepEqual((listed.Contents ?? []).map((o) => o.Key), [], 'no object under the interrupted prefix');
});
