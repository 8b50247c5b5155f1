// Memory stays flat whatever the database's size: the agent, run as the Job runs it (its own process),
// streams a ~256 MiB snapshot from a real etcd through the S3 (MinIO) and Azure (Azurite) drivers and
// fetches it back, while its peak resident memory (VmHWM) is sampled. The growth is its peak minus its
// peak for the same command on a tiny database. Nothing about timing is asserted; the figures are printed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import type { Destination } from '../../src/api/destination.ts';
import type { BackupSucceeded } from '../../src/backup/agent.ts';
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
} from '@quorum/localkube/testing/storage';

const MiB = 1024 * 1024;
const AGENT = join(import.meta.dirname, '..', '..', 'src', 'backup', 'agent.ts');
/** Far below the snapshot's size: a copy of it in memory would exceed this. */
const MAX_GROWTH = 96 * MiB;

const mib = (bytes: number): string => (bytes < MiB ? `${Math.round(bytes / 1024)} KiB` : `${(bytes / MiB).toFixed(1)} MiB`);

/** Runs the agent CLI, sampling its peak RSS (VmHWM) until it exits. */
async function runAgent(args: string[]): Promise<{ code: number | null; peakRss: number; result: Record<string, unknown> }> {
  const child = spawn(process.execPath, [AGENT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let peakRss = 0;
  const sampler = setInterval(() => {
    try {
      const kib = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
      if (kib) peakRss = Math.max(peakRss, Number(kib) * 1024);
    } catch {
      // Exited between samples.
    }
  }, 5);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearInterval(sampler);
  const line = stdout.trim().split('\n').at(-1) ?? '';
  assert.ok(line.startsWith('{'), `no result from the agent (exit ${code}): ${stderr}`);
  return { code, peakRss, result: JSON.parse(line) as Record<string, unknown> };
}

describe('a ~256 MiB snapshot', () => {
  let scratch: string;
  let big: LocalEtcdCluster;
  let tiny: LocalEtcdCluster;
  let minio: StorageServer;
  let azurite: StorageServer;
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'quorum-rss-test-'));
    [big, tiny, minio, azurite] = await Promise.all([startLocalEtcd({ members: 1 }), startLocalEtcd({ members: 1 }), startMinio(), startAzurite()]);
    await createMinioBucket(minio.endpoint, 'quorum');
    await new BlobServiceClient(azurite.endpoint, new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY)).getContainerClient('quorum').create();
    await fillEtcd(big.endpoints[0]!, 250 * MiB, { valueBytes: 1_000_000 });
    const client = new EtcdClient({ endpoint: big.endpoints[0]! });
    const { dbSize } = await client.status();
    client.close();
    assert.ok(dbSize > 250 * MiB, `database is ${mib(dbSize)}`);
  });
  after(async () => {
    await Promise.all([big?.stop(), tiny?.stop(), minio?.stop(), azurite?.stop()]);
    await rm(scratch, { recursive: true, force: true });
  });

  const cases = (): [string, Destination, () => Promise<string>][] => [
    ['S3 (MinIO)', { s3: { bucket: 'quorum', prefix: 'rss', endpoint: minio.endpoint, forcePathStyle: true, credentialsSecret: 'minio' } }, () => credentialsDir(scratch, 'minio', { accessKeyId: MINIO_USER, secretAccessKey: MINIO_PASSWORD })],
    ['Azure (Azurite)', { azure: { container: 'quorum', prefix: 'rss', credentialsSecret: 'azure' } }, () => credentialsDir(scratch, 'azure', { connectionString: azuriteConnectionString(azurite.endpoint) })],
  ];

  test('streams through the S3 and Azure drivers, and back, without growing memory by its size', async () => {
    for (const [name, destination, credentials] of cases()) {
      const common = [`--destination-json=${JSON.stringify(destination)}`, `--credentials-dir=${await credentials()}`, `--result-file=${join(scratch, 'result')}`];
      const backup = async (endpoint: string, cluster: string): Promise<{ peakRss: number; result: BackupSucceeded }> => {
        const run = await runAgent(['backup', `--endpoint=${endpoint}`, `--cluster=${cluster}`, '--member=m0', ...common]);
        assert.equal(run.code, 0, JSON.stringify(run.result));
        return { peakRss: run.peakRss, result: run.result as unknown as BackupSucceeded };
      };
      const fetch = async (stored: BackupSucceeded): Promise<number> => {
        const out = join(scratch, 'fetched', `${stored.key.replace(/\//g, '_')}`);
        const run = await runAgent(['fetch', `--key=${stored.key}`, `--sha256=${stored.sha256}`, `--out=${out}`, ...common]);
        assert.equal(run.code, 0, JSON.stringify(run.result));
        assert.equal((await stat(out)).size, stored.sizeBytes);
        await rm(out);
        return run.peakRss;
      };

      const small = await backup(tiny.endpoints[0]!, 'tiny');
      const large = await backup(big.endpoints[0]!, 'big');
      assert.ok(large.result.sizeBytes > 250 * MiB);
      const smallFetch = await fetch(small.result);
      const largeFetch = await fetch(large.result);

      const backupGrowth = large.peakRss - small.peakRss;
      const fetchGrowth = largeFetch - smallFetch;
      console.log(
        `RSS ${name}: a ${mib(large.result.sizeBytes)} snapshot; the backup agent peaked at ${mib(large.peakRss)} (${mib(small.peakRss)} for a ${mib(small.result.sizeBytes)} one): ` +
          `+${mib(backupGrowth)}; fetching it back peaked at ${mib(largeFetch)} (${mib(smallFetch)}): +${mib(fetchGrowth)}`,
      );
      assert.ok(backupGrowth < MAX_GROWTH, `the backup grew RSS by ${mib(backupGrowth)}`);
      assert.ok(fetchGrowth < MAX_GROWTH, `the fetch grew RSS by ${mib(fetchGrowth)}`);
    }
  });
});
