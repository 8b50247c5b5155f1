// Memory stays flat whatever the database's size: a ~256 MiB snapshot from a real etcd streamed through the
// S3 (MinIO) and Azure (Azurite) drivers, and fetched back, while the agent's resident memory is sampled.
// Nothing about timing is asserted; the RSS growth is printed (and bounded far below the snapshot's size).
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Destination } from '../../src/api/destination.ts';
import { runBackup, runFetch } from '../../src/backup/agent.ts';
import { EtcdClient } from '../../src/etcd/client.ts';
import { fillEtcd } from '../support/etcd-data.ts';
import { startLocalEtcd, type LocalEtcdCluster } from '../support/local-etcd.ts';
import {
  AZURITE_ACCOUNT,
  AZURITE_KEY,
  azuriteConnectionString,
  createMinioBucket,
  credentialsDir,
  MINIO_PASSWORD,
  MINIO_USER,
  startAzurite,
  startMinio,
  type StorageServer,
} from '../support/storage-servers.ts';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';

const MiB = 1024 * 1024;
/** Far below the snapshot's 256 MiB: a full copy in memory would exceed it. */
const MAX_GROWTH = 128 * MiB;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Runs `work`, sampling this process's RSS every 10 ms; returns the peak above the RSS just before. */
async function rssGrowth<T>(work: () => Promise<T>): Promise<{ result: T; baseline: number; peak: number }> {
  gc();
  const baseline = process.memoryUsage.rss();
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 10);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage.rss());
    return { result, baseline, peak };
  } finally {
    clearInterval(sampler);
  }
}

const mib = (bytes: number): string => `${(bytes / MiB).toFixed(1)} MiB`;

describe('a ~256 MiB snapshot', () => {
  let scratch: string;
  let etcd: LocalEtcdCluster;
  let endpoint: string;
  let minio: StorageServer;
  let azurite: StorageServer;
  let dbSize = 0;
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'quorum-rss-test-'));
    [etcd, minio, azurite] = await Promise.all([startLocalEtcd({ members: 1, version: '3.6.16' }), startMinio(), startAzurite()]);
    endpoint = etcd.endpoints[0]!;
    await createMinioBucket(minio.endpoint, 'quorum');
    await new BlobServiceClient(azurite.endpoint, new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY)).getContainerClient('quorum').create();
    await fillEtcd(endpoint, 250 * MiB, { valueBytes: 1_000_000 });
    const client = new EtcdClient({ endpoint });
    dbSize = (await client.status()).dbSize;
    client.close();
    assert.ok(dbSize > 250 * MiB, `database is ${mib(dbSize)}`);
  });
  after(async () => {
    await Promise.all([etcd?.stop(), minio?.stop(), azurite?.stop()]);
    await rm(scratch, { recursive: true, force: true });
  });

  const cases = (): [string, Destination, () => Promise<string>][] => [
    ['S3 (MinIO)', { s3: { bucket: 'quorum', prefix: 'rss', endpoint: minio.endpoint, forcePathStyle: true, credentialsSecret: 'minio' } }, () => credentialsDir(scratch, 'minio', { accessKeyId: MINIO_USER, secretAccessKey: MINIO_PASSWORD })],
    ['Azure (Azurite)', { azure: { container: 'quorum', prefix: 'rss', credentialsSecret: 'azure' } }, () => credentialsDir(scratch, 'azure', { connectionString: azuriteConnectionString(azurite.endpoint) })],
  ];

  test('streams through the S3 and Azure drivers, and back, without growing memory by its size', async () => {
    for (const [name, destination, credentials] of cases()) {
      const dir = await credentials();
      // Load the driver's SDK first, so its code is in the baseline and not counted as growth.
      await runFetch({ destination, credentialsDir: dir, key: 'rss/none.db', out: join(scratch, 'none.db') });

      const backup = await rssGrowth(() => runBackup({ endpoint, cluster: 'big', member: 'm0', destination, credentialsDir: dir }));
      assert.ok(backup.result.ok, JSON.stringify(backup.result));
      assert.ok(backup.result.sizeBytes > 250 * MiB);
      const out = join(scratch, `${name.split(' ')[0]}.db`);
      const fetch = await rssGrowth(() => runFetch({ destination, credentialsDir: dir, key: backup.result.ok ? backup.result.key : '', sha256: backup.result.ok ? backup.result.sha256 : '', out }));
      assert.ok(fetch.result.ok, JSON.stringify(fetch.result));
      assert.equal((await stat(out)).size, backup.result.sizeBytes);
      await rm(out);

      console.log(
        `RSS ${name}: snapshot ${mib(backup.result.sizeBytes)}; backup grew RSS by ${mib(backup.peak - backup.baseline)} (from ${mib(backup.baseline)} to a peak of ${mib(backup.peak)}); ` +
          `fetch grew it by ${mib(fetch.peak - fetch.baseline)} (peak ${mib(fetch.peak)})`,
      );
      assert.ok(backup.peak - backup.baseline < MAX_GROWTH, `backup grew RSS by ${mib(backup.peak - backup.baseline)}`);
      assert.ok(fetch.peak - fetch.baseline < MAX_GROWTH, `fetch grew RSS by ${mib(fetch.peak - fetch.baseline)}`);
    }
  });
});
