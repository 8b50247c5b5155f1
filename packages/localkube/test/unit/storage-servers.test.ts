// storageServers() hands tests the real MinIO, fake-gcs-server and Azurite to run on 127.0.0.1 without a
// cluster. Each one here starts as a child process, and its bucket is created, written and read back with
// the official SDK. (The first run builds MinIO and fake-gcs-server: minutes.)
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { BlobServiceClient } from '@azure/storage-blob';
import { Storage } from '@google-cloud/storage';
import { eventually, storageServers, type StorageServers } from '../../src/index.ts';

let servers: StorageServers;
let scratch: string;
const children: ChildProcess[] = [];

before(async () => {
  servers = await storageServers();
  scratch = await mkdtemp(join(tmpdir(), 'localkube-storage-servers-'));
}, { timeout: 1_200_000 });

after(async () => {
  const exited = children.filter((c) => c.exitCode === null && c.signalCode === null).map((c) => new Promise((resolve) => c.once('exit', resolve)));
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(exited);
  await rm(scratch, { recursive: true, force: true });
});

/** A port nothing listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Starts a server; its output is kept for the failure message. */
function start(command: string, args: string[], env: NodeJS.ProcessEnv = {}): { output: () => string } {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  return { output: () => output };
}

test('storageServers names an executable MinIO, fake-gcs-server and Azurite blob entry', () => {
  assert.match(servers.minio, /\/bin\/minio-v0\.0\.0-20260212201848-7aac2a2c5b7c\/minio$/);
  assert.match(servers.fakeGcsServer, /\/bin\/fake-gcs-server-v1\.56\.1\/fake-gcs-server$/);
  assert.match(servers.azurite, /\/node_modules\/azurite\/dist\/src\/blob\/main\.js$/);
});

test('MinIO on 127.0.0.1: a bucket, an object written and read back', { timeout: 120_000 }, async () => {
  const port = await freePort();
  const credentials = { accessKeyId: 'localkube-test', secretAccessKey: 'localkube-test-secret' };
  const minio = start(servers.minio, ['server', join(scratch, 'minio'), '--address', `127.0.0.1:${port}`, '--certs-dir', join(scratch, 'minio-certs')], {
    MINIO_ROOT_USER: credentials.accessKeyId,
    MINIO_ROOT_PASSWORD: credentials.secretAccessKey,
    MINIO_BROWSER: 'off',
  });
  const s3 = new S3Client({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', maxAttempts: 1, credentials });
  try {
    await eventually('MinIO to create a bucket', () => s3.send(new CreateBucketCommand({ Bucket: 'quorum' })).then(() => true), { timeoutMs: 60_000, intervalMs: 500 }).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\n${minio.output()}`);
    });
    await s3.send(new PutObjectCommand({ Bucket: 'quorum', Key: 'a/b.txt', Body: 'minio' }));
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'quorum' }));
    assert.deepEqual(listed.Contents?.map((o) => o.Key), ['a/b.txt']);
    assert.equal(await (await s3.send(new GetObjectCommand({ Bucket: 'quorum', Key: 'a/b.txt' }))).Body!.transformToString(), 'minio');
  } finally {
    s3.destroy();
  }
});

test('fake-gcs-server on 127.0.0.1: a bucket, a resumable upload read back', { timeout: 120_000 }, async () => {
  const port = await freePort();
  const gcs = start(servers.fakeGcsServer, ['-scheme', 'http', '-host', '127.0.0.1', '-port', String(port), '-backend', 'filesystem', '-filesystem-root', join(scratch, 'gcs')]);
  const storage = new Storage({ apiEndpoint: `http://127.0.0.1:${port}`, projectId: 'test', retryOptions: { autoRetry: false } });
  await eventually('fake-gcs-server to create a bucket', () => storage.createBucket('quorum').then(() => true), { timeoutMs: 60_000, intervalMs: 500 }).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}\n${gcs.output()}`);
  });
  const bucket = storage.bucket('quorum');
  await bucket.file('a/b.txt').save('gcs', { resumable: true });
  assert.deepEqual((await bucket.getFiles())[0].map((f) => f.name), ['a/b.txt']);
  assert.equal((await bucket.file('a/b.txt').download())[0].toString(), 'gcs');
});

test('Azurite on 127.0.0.1 (run by this Node): a container, a blob read back', { timeout: 120_000 }, async () => {
  const port = await freePort();
  const azurite = start(process.execPath, [servers.azurite, '--blobHost', '127.0.0.1', '--blobPort', String(port), '--location', join(scratch, 'azurite'), '--skipApiVersionCheck', '--loose', '--disableTelemetry']);
  const account = 'devstoreaccount1';
  const key = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';
  const service = BlobServiceClient.fromConnectionString(
    `DefaultEndpointsProtocol=http;AccountName=${account};AccountKey=${key};BlobEndpoint=http://127.0.0.1:${port}/${account};`,
    { retryOptions: { maxTries: 1 } },
  );
  const container = service.getContainerClient('quorum');
  await eventually('Azurite to create a container', () => container.create().then(() => true), { timeoutMs: 60_000, intervalMs: 500 }).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}\n${azurite.output()}`);
  });
  await container.getBlockBlobClient('a/b.txt').upload('azure', 5);
  const names: string[] = [];
  for await (const blob of container.listBlobsFlat()) names.push(blob.name);
  assert.deepEqual(names, ['a/b.txt']);
  assert.equal((await container.getBlobClient('a/b.txt').downloadToBuffer()).toString(), 'azure');
});
