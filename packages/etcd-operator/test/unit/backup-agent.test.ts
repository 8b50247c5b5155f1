// The backup agent end to end against real etcd members and real storage servers: backups to each kind of
// destination, the failures the operator must be able to tell apart (no quorum, unreachable etcd, refused
// credentials, a deadline), fetching a backup back for a restore with its checks, and deleting one.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { Destination } from '../../src/api/destination.ts';
import {
  backupDeadlineMs,
  backupKey,
  compactTimestamp,
  main,
  QUORUM_CHECK_KEY,
  resultLine,
  reachMember,
  runBackup,
  runDelete,
  runFetch,
  type BackupSucceeded,
} from '../../src/backup/agent.ts';
import { EtcdClient } from '../../src/etcd/client.ts';
import { fillEtcd } from '../support/etcd-data.ts';
import { etcdBinary, freePorts, startLocalEtcd, type LocalEtcdCluster } from '../support/local-etcd.ts';
import {
  AZURITE_ACCOUNT,
  AZURITE_KEY,
  azuriteConnectionString,
  createGcsBucket,
  createMinioBucket,
  credentialsDir as mountSecret,
  MINIO_PASSWORD,
  MINIO_USER,
  startAzurite,
  startFakeGcs,
  startMinio,
  type StorageServer,
} from '@quorum/localkube/testing/storage';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';

const run = promisify(execFile);
const AGENT = join(import.meta.dirname, '..', '..', 'src', 'backup', 'agent.ts');
const KEY_PATTERN = /^backups\/c1-\d{8}T\d{6}Z-rev\d+\.db$/;

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

async function etcdutlStatus(file: string): Promise<{ revision: number; totalKey: number }> {
  const { stdout } = await run(join(dirname(etcdBinary('3.6.16')), 'etcdutl'), ['snapshot', 'status', file, '--write-out=json'], { timeout: 60_000 });
  return JSON.parse(stdout) as { revision: number; totalKey: number };
}

function succeeded(result: Awaited<ReturnType<typeof runBackup>>): BackupSucceeded {
  assert.ok(result.ok, `backup failed: ${JSON.stringify(result)}`);
  return result;
}

let scratch: string;
let etcd: LocalEtcdCluster;
let endpoint: string;
before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'quorum-agent-test-'));
  etcd = await startLocalEtcd({ members: 1, version: '3.6.16' });
  endpoint = etcd.endpoints[0]!;
  await fillEtcd(endpoint, 3 * 1024 * 1024, { valueBytes: 200_000 });
});
after(async () => {
  await etcd?.stop();
  await rm(scratch, { recursive: true, force: true });
});

describe('names and bounds', () => {
  test('keys are <prefix><cluster>-<UTC timestamp>-rev<revision>.db', () => {
    const at = new Date('2026-11-23T10:53:01.789Z');
    assert.equal(compactTimestamp(at), '20261123T105301Z');
    assert.equal(backupKey({ s3: { bucket: 'b', prefix: 'prod/etcd', credentialsSecret: 's' } }, 'main', at, '1234'), 'prod/etcd/main-20261123T105301Z-rev1234.db');
    assert.equal(backupKey({ pvc: { claimName: 'c' } }, 'main', at, '7'), 'main-20261123T105301Z-rev7.db');
  });

  test('the deadline grows with the database: 60 s plus its size at 4 MiB/s', () => {
    assert.equal(backupDeadlineMs(0), 60_000);
    assert.equal(backupDeadlineMs(8 * 1024 ** 3), 60_000 + 2048_000);
  });

  test('a result line stays under the 4 KiB termination message limit', () => {
    const line = resultLine({ ok: false, reason: 'StorageFailed', message: 'x'.repeat(10_000) });
    assert.ok(Buffer.byteLength(line) <= 4096, String(Buffer.byteLength(line)));
    assert.equal((JSON.parse(line) as { reason: string }).reason, 'StorageFailed');
    assert.equal(line.split('\n').length, 2);
  });
});

describe('backup and fetch on a PVC', () => {
  let pvcRoot: string;
  let destination: Destination;
  let backup: BackupSucceeded;
  before(async () => {
    pvcRoot = await mkdtemp(join(scratch, 'pvc-'));
    destination = { pvc: { claimName: 'etcd-backups', path: 'backups' } };
  });

  test('stores a snapshot with its key, location, size, SHA-256, revision and version', async () => {
    const client = new EtcdClient({ endpoint });
    const before = await client.status();
    client.close();
    const started = Date.now();
    backup = succeeded(await runBackup({ endpoint, cluster: 'c1', member: 'm0', destination, pvcRoot }));
    assert.match(backup.key, KEY_PATTERN);
    assert.equal(backup.location, `pvc://etcd-backups/${backup.key}`);
    assert.equal(backup.member, 'm0');
    assert.equal(backup.etcdVersion, '3.6.16');
    assert.ok(BigInt(backup.revision) >= BigInt(before.revision), `${backup.revision} < ${before.revision}`);
    assert.ok(Date.parse(backup.startedAt) >= started - 1000 && Date.parse(backup.completedAt) >= Date.parse(backup.startedAt));

    const stored = await readFile(join(pvcRoot, backup.key));
    assert.equal(stored.length, backup.sizeBytes);
    assert.equal(sha256(stored), backup.sha256);
    // Every write up to the reported revision is in the snapshot.
    assert.ok((await etcdutlStatus(join(pvcRoot, backup.key))).revision >= Number(backup.revision));
    assert.deepEqual((await readdir(join(pvcRoot, 'backups'))).filter((n) => n.endsWith('.partial')), []);
  });

  test('fetch downloads it, checked against the recorded SHA-256 and etcd trailer', async () => {
    const out = join(scratch, 'restore-1', 'restore', 'snapshot.db');
    const result = await runFetch({ destination, pvcRoot, key: backup.key, sha256: backup.sha256, out });
    assert.deepEqual(result, { ok: true, skipped: false, key: backup.key, sizeBytes: backup.sizeBytes, sha256: backup.sha256 });
    assert.equal(sha256(await readFile(out)), backup.sha256);
    assert.deepEqual(await readdir(dirname(out)), ['snapshot.db']);
  });

  test('fetch does nothing when the member data exists already', async () => {
    const data = join(scratch, 'restore-2', 'data');
    await mkdir(data, { recursive: true });
    const out = join(scratch, 'restore-2', 'restore', 'snapshot.db');
    assert.deepEqual(await runFetch({ destination, pvcRoot, key: backup.key, out, skipIfExists: data }), { ok: true, skipped: true });
    await assert.rejects(readFile(out), { code: 'ENOENT' });
  });

  test('fetch refuses a corrupted backup (one flipped byte), leaving no file, through the CLI', async () => {
    const copy = 'backups/corrupted.db';
    const bytes = await readFile(join(pvcRoot, backup.key));
    bytes[Math.floor(bytes.length / 2)]! ^= 0x01;
    await writeFile(join(pvcRoot, copy), bytes);
    const out = join(scratch, 'restore-3', 'snapshot.db');
    const resultFile = join(scratch, 'restore-3.result');

    // Without --sha256 etcd's own trailer still catches it.
    const code = await main(['fetch', `--destination-json=${JSON.stringify(destination)}`, `--pvc-root=${pvcRoot}`, `--key=${copy}`, `--out=${out}`, `--result-file=${resultFile}`]);
    assert.equal(code, 1);
    const result = JSON.parse(await readFile(resultFile, 'utf8')) as { ok: boolean; reason: string; message: string };
    assert.equal(result.ok, false);
    assert.equal(result.reason, 'SnapshotCorrupted');
    assert.match(result.message, /pvc:\/\/etcd-backups\/backups\/corrupted\.db is corrupted: .* etcd's trailer says [0-9a-f]{64}/);
    assert.deepEqual(await readdir(dirname(out)).catch(() => []), []);

    // With --sha256 the recorded hash catches it first.
    const withHash = await runFetch({ destination, pvcRoot, key: copy, sha256: backup.sha256, out });
    assert.ok(!withHash.ok && withHash.reason === 'SnapshotCorrupted' && withHash.message.includes(`but the backup recorded ${backup.sha256}`), JSON.stringify(withHash));
  });

  test('fetch refuses a truncated backup', async () => {
    const copy = 'backups/truncated.db';
    await writeFile(join(pvcRoot, copy), await readFile(join(pvcRoot, backup.key)));
    await truncate(join(pvcRoot, copy), backup.sizeBytes - 4096);
    const out = join(scratch, 'restore-4', 'snapshot.db');
    const result = await runFetch({ destination, pvcRoot, key: copy, out });
    assert.ok(!result.ok, JSON.stringify(result));
    assert.equal(result.reason, 'SnapshotTruncated');
    assert.match(result.message, new RegExp(`is not a whole etcd snapshot: it holds ${backup.sizeBytes - 4096} bytes, but its database records ${backup.sizeBytes - 32} bytes plus etcd's 32-byte SHA-256 \\(it was cut short\\)`));
    assert.deepEqual(await readdir(dirname(out)).catch(() => []), []);
  });

  test('fetch names a backup that is not there', async () => {
    const result = await runFetch({ destination, pvcRoot, key: 'backups/nope.db', out: join(scratch, 'restore-5', 'snapshot.db') });
    assert.ok(!result.ok && result.reason === 'ObjectNotFound', JSON.stringify(result));
  });

  test('delete removes a backup, and deleting it again succeeds', async () => {
    const copy = 'backups/to-delete.db';
    await writeFile(join(pvcRoot, copy), 'x');
    assert.deepEqual(await runDelete({ destination, pvcRoot, key: copy }), { ok: true, key: copy });
    assert.deepEqual(await runDelete({ destination, pvcRoot, key: copy }), { ok: true, key: copy });
    await assert.rejects(readFile(join(pvcRoot, copy)), { code: 'ENOENT' });
  });
});

describe('the CLI', () => {
  test('backup writes one JSON line to its result file and exits 0; a failure exits 1 with the message on stderr', async () => {
    const pvcRoot = await mkdtemp(join(scratch, 'cli-'));
    const resultFile = join(scratch, 'cli.result');
    const destination = JSON.stringify({ pvc: { claimName: 'etcd-backups', path: 'backups' } });
    const ok = await runAgent(['backup', `--endpoint=${endpoint}`, '--cluster=c1', '--member=m0', `--destination-json=${destination}`, `--pvc-root=${pvcRoot}`, `--result-file=${resultFile}`]);
    assert.equal(ok.code, 0, ok.stderr);
    const text = await readFile(resultFile, 'utf8');
    assert.equal(text.split('\n').length, 2, text);
    const result = JSON.parse(text) as BackupSucceeded;
    assert.equal(result.ok, true);
    assert.match(result.key, KEY_PATTERN);

    const [port] = await freePorts(1);
    const failed = await runAgent(['backup', `--endpoint=http://127.0.0.1:${port}`, '--cluster=c1', '--member=m0', `--destination-json=${destination}`, `--pvc-root=${pvcRoot}`, `--result-file=${resultFile}`]);
    assert.equal(failed.code, 1);
    const failure = JSON.parse(await readFile(resultFile, 'utf8')) as { ok: boolean; reason: string; message: string };
    assert.equal(failure.reason, 'EtcdUnreachable');
    // Retried for DEFAULT_REACH_BOUND_MS first, each attempt a warning in the Job's log; the message counts them.
    assert.match(failure.message, /reading the status of member m0 at http:\/\/127\.0\.0\.1:\d+ \(\d+ attempts over (19|20) s\): cannot reach etcd/);
    assert.match(failed.stderr, /^warning: attempt 1 to reach the member failed/m);
    assert.match(failed.stderr, /^EtcdUnreachable: reading the status/m);
  });

  test('bad arguments are InvalidArguments', async () => {
    const resultFile = join(scratch, 'bad.result');
    assert.equal(await main(['backup', '--destination-json={"s3":{}}', `--result-file=${resultFile}`]), 1);
    const failure = JSON.parse(await readFile(resultFile, 'utf8')) as { reason: string; message: string };
    assert.equal(failure.reason, 'InvalidArguments');
    assert.match(failure.message, /--destination-json: /);
    assert.equal(await main(['restore', `--result-file=${resultFile}`, '--destination-json={"pvc":{"claimName":"x"}}']), 1);
    assert.match(await readFile(resultFile, 'utf8'), /unknown command restore/);
  });
});

async function runAgent(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [AGENT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, stdout, stderr };
}

describe('backups to object stores', () => {
  let minio: StorageServer;
  let azurite: StorageServer;
  let gcs: StorageServer;
  before(async () => {
    [minio, azurite, gcs] = await Promise.all([startMinio(), startAzurite(), startFakeGcs()]);
    await createMinioBucket(minio.endpoint, 'quorum');
    await createGcsBucket(gcs.endpoint, 'quorum');
    await new BlobServiceClient(azurite.endpoint, new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY)).getContainerClient('quorum').create();
  });
  after(async () => {
    await Promise.all([minio?.stop(), azurite?.stop(), gcs?.stop()]);
  });

  const destinations = (): [string, Destination, () => Promise<string>][] => [
    ['s3', { s3: { bucket: 'quorum', prefix: 'backups', endpoint: minio.endpoint, forcePathStyle: true, credentialsSecret: 'minio' } }, () => mountSecret(scratch, 'minio', { accessKeyId: MINIO_USER, secretAccessKey: MINIO_PASSWORD })],
    ['gcs', { gcs: { bucket: 'quorum', prefix: 'backups', endpoint: gcs.endpoint, credentialsSecret: 'gcs' } }, () => mountSecret(scratch, 'gcs', {})],
    ['azure', { azure: { container: 'quorum', prefix: 'backups', credentialsSecret: 'azure' } }, () => mountSecret(scratch, 'azure', { connectionString: azuriteConnectionString(azurite.endpoint) })],
  ];

  test('backs up to and fetches from S3, GCS and Azure', async () => {
    for (const [kind, destination, credentials] of destinations()) {
      const credentialsDir = await credentials();
      const backup = succeeded(await runBackup({ endpoint, cluster: 'c1', member: 'm0', destination, credentialsDir }));
      assert.match(backup.key, KEY_PATTERN, kind);
      assert.ok(backup.location.startsWith({ s3: 's3://quorum/', gcs: 'gs://quorum/', azure: 'azure://quorum/' }[kind]!), backup.location);
      const out = join(scratch, `fetch-${kind}`, 'snapshot.db');
      const fetched = await runFetch({ destination, credentialsDir, key: backup.key, sha256: backup.sha256, out });
      assert.ok(fetched.ok && !fetched.skipped && fetched.sha256 === backup.sha256, `${kind}: ${JSON.stringify(fetched)}`);
      assert.deepEqual(await runDelete({ destination, credentialsDir, key: backup.key }), { ok: true, key: backup.key });
      const again = await runFetch({ destination, credentialsDir, key: backup.key, out: join(scratch, `fetch-${kind}-again`, 'snapshot.db') });
      assert.ok(!again.ok && again.reason === 'ObjectNotFound', `${kind}: ${JSON.stringify(again)}`);
    }
  });

  test("a restore's fetch waits for a store that answers only after a moment (a name resolving late)", async () => {
    const [source, destination, credentials] = destinations()[0]!;
    const credentialsDir = await credentials();
    const backup = succeeded(await runBackup({ endpoint, cluster: 'c1', member: 'm0', destination, credentialsDir }));
    // A proxy to MinIO that listens only after 1.5 s: until then every connection is refused.
    const [port] = await freePorts(1);
    const target = new URL(minio.endpoint);
    const sockets = new Set<Socket>();
    const proxy = createServer((client) => {
      const upstream = connect(Number(target.port), target.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => { client.destroy(); upstream.destroy(); });
      }
      client.pipe(upstream).pipe(client);
    });
    const late = sleep(1500).then(() => new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve)));
    try {
      const viaProxy: Destination = { s3: { ...destination.s3!, endpoint: `http://127.0.0.1:${port}` } };
      const started = Date.now();
      const fetched = await runFetch({ destination: viaProxy, credentialsDir, key: backup.key, sha256: backup.sha256, out: join(scratch, 'fetch-late', 'snapshot.db'), storeOptions: { maxAttempts: 1 }, reachBoundMs: 20_000 });
      assert.ok(fetched.ok && !fetched.skipped && fetched.sha256 === backup.sha256, `${source}: ${JSON.stringify(fetched)}`);
      assert.ok(Date.now() - started >= 1500, 'it was refused first');
    } finally {
      await late;
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  test("past its bound a restore's fetch fails as StorageUnreachable, counting the attempts", async () => {
    const [port] = await freePorts(1);
    const destination: Destination = { s3: { bucket: 'quorum', prefix: 'backups', endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true, credentialsSecret: 'minio' } };
    const credentialsDir = await mountSecret(scratch, 'minio', { accessKeyId: MINIO_USER, secretAccessKey: MINIO_PASSWORD });
    const fetched = await runFetch({ destination, credentialsDir, key: 'backups/c1.db', out: join(scratch, 'fetch-nowhere', 'snapshot.db'), storeOptions: { maxAttempts: 1 }, reachBoundMs: 2000 });
    assert.ok(!fetched.ok, JSON.stringify(fetched));
    assert.equal(fetched.reason, 'StorageUnreachable');
    assert.match(fetched.message, new RegExp(`^cannot reach http://127\\.0\\.0\\.1:${port}.*ECONNREFUSED.* \\([2-4] attempts over [0-2] s\\)$`));
  });

  test('refused credentials fail the backup with AccessDenied, naming the Secret and the server', async () => {
    const destination: Destination = { s3: { bucket: 'quorum', prefix: 'backups', endpoint: minio.endpoint, forcePathStyle: true, credentialsSecret: 'minio-wrong' } };
    const credentialsDir = await mountSecret(scratch, 'minio-wrong', { accessKeyId: MINIO_USER, secretAccessKey: 'wrong-password' });
    const result = await runBackup({ endpoint, cluster: 'c1', member: 'm0', destination, credentialsDir, storeOptions: { maxAttempts: 1 } });
    assert.ok(!result.ok, JSON.stringify(result));
    assert.equal(result.reason, 'AccessDenied');
    assert.match(result.message, new RegExp(`^access denied: the credentials in Secret minio-wrong were refused by ${minio.endpoint}: SignatureDoesNotMatch: `));
  });

  test('a missing bucket fails the backup with BucketNotFound', async () => {
    const destination: Destination = { azure: { container: 'quorum-missing', credentialsSecret: 'azure' } };
    const credentialsDir = await mountSecret(scratch, 'azure', { connectionString: azuriteConnectionString(azurite.endpoint) });
    const result = await runBackup({ endpoint, cluster: 'c1', member: 'm0', destination, credentialsDir, storeOptions: { maxAttempts: 1 } });
    assert.ok(!result.ok, JSON.stringify(result));
    assert.equal(result.reason, 'BucketNotFound');
    assert.equal(result.message, `container quorum-missing does not exist at ${azurite.endpoint}`);
  });

  test('a store that stops answering fails the backup at its deadline (Timeout), not when its sockets time out', async () => {
    // Accepts connections and never answers.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      const destination: Destination = { s3: { bucket: 'quorum', prefix: 'backups', endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true, credentialsSecret: 'minio' } };
      const credentialsDir = await mountSecret(scratch, 'minio', { accessKeyId: MINIO_USER, secretAccessKey: MINIO_PASSWORD });
      const started = Date.now();
      const result = await runBackup({ endpoint, cluster: 'c1', member: 'm0', destination, credentialsDir, timing: { baseMs: 1500, bytesPerSecond: 1024 ** 4 } });
      assert.ok(!result.ok, JSON.stringify(result));
      assert.equal(result.reason, 'Timeout');
      assert.match(result.message, /^the backup did not finish within 2 s \(2 s plus \d+\.\d MiB at 1048576\.0 MiB\/s\)$/);
      assert.ok(Date.now() - started < 10_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });
});

describe('a cluster without quorum', () => {
  let cluster: LocalEtcdCluster;
  before(async () => {
    cluster = await startLocalEtcd({ members: 3, version: '3.5.35' });
  });
  after(() => cluster?.stop());

  test('fails at once with NoQuorum, not after a timeout', async () => {
    const survivor = cluster.members[0]!;
    await Promise.all(cluster.members.slice(1).map((m) => m.stop(false)));
    // Within an election timeout (500 ms here) the survivor stops believing in its leader.
    const client = new EtcdClient({ endpoint: survivor.clientURL });
    for (let i = 0; i < 50 && (await client.status()).leaderId !== '0'; i++) await sleep(100);
    client.close();
    const pvcRoot = await mkdtemp(join(scratch, 'noquorum-'));
    const started = Date.now();
    const result = await runBackup({ endpoint: survivor.clientURL, cluster: 'c1', member: survivor.name, destination: { pvc: { claimName: 'b' } }, pvcRoot });
    assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
    assert.ok(!result.ok, JSON.stringify(result));
    assert.equal(result.reason, 'NoQuorum');
    assert.match(result.message, /no quorum/);
    assert.deepEqual(await readdir(pvcRoot), []);
  });
});

describe('a member that still names a leader the others lost', () => {
  let cluster: LocalEtcdCluster;
  before(async () => {
    // A 5 s election timeout: for that long after its peers die, a survivor still names its old leader.
    cluster = await startLocalEtcd({ members: 3, version: '3.6.16', electionTimeoutMs: 5000 });
  });
  after(() => cluster?.stop());

  test('fails with NoQuorum from the linearizable read, within its bound, not as a Timeout', async () => {
    const survivor = cluster.members[0]!;
    await Promise.all(cluster.members.slice(1).map((m) => m.stop(false)));
    const client = new EtcdClient({ endpoint: survivor.clientURL });
    try {
      const pvcRoot = await mkdtemp(join(scratch, 'stale-leader-'));
      const started = Date.now();
      const result = await runBackup({ endpoint: survivor.clientURL, cluster: 'c1', member: survivor.name, destination: { pvc: { claimName: 'b' } }, pvcRoot, quorumCheckMs: 1000 });
      const took = Date.now() - started;
      // The window this closes: the member's own status still names a leader after the backup gave up.
      const later = await client.status();
      assert.notEqual(later.leaderId, '0', 'the survivor stopped naming a leader: the test did not exercise the window');
      assert.ok(!result.ok, JSON.stringify(result));
      assert.equal(result.reason, 'NoQuorum');
      assert.match(result.message, new RegExp(`^no quorum: member ${survivor.name} \\(.*\\) names leader [0-9a-f]+, but a linearizable read through it got no answer within 1 s, which only a quorum can give`));
      assert.ok(took < 4000, `took ${took} ms`);
      assert.deepEqual(await readdir(pvcRoot), []);
    } finally {
      client.close();
    }
  });
});

describe('a member that cannot be reached for a moment (a name resolving late, a member restarting)', () => {
  test('is tried again with growing pauses until it answers, within the bound', async () => {
    const [port] = await freePorts(1);
    // Nothing listens for the first 1.2 s: connection refused, as from a member whose etcd is restarting.
    const server = createHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ header: { cluster_id: '1', member_id: '2', revision: '7' }, version: '3.6.16', dbSize: '20480', leader: '3', raftIndex: '9', raftTerm: '3' }));
    });
    const late = sleep(1200).then(() => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)));
    const client = new EtcdClient({ endpoint: `http://127.0.0.1:${port}`, timeoutMs: 1000 });
    try {
      const reached = await reachMember(client, 10_000, new AbortController().signal);
      assert.ok(reached.ok, 'reached once it listens');
      assert.equal(reached.value.leaderId, '3');
    } finally {
      client.close();
      await late;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test('past the bound it is EtcdUnreachable, counting the attempts', async () => {
    const [port] = await freePorts(1);
    const client = new EtcdClient({ endpoint: `http://127.0.0.1:${port}`, timeoutMs: 1000 });
    try {
      const reached = await reachMember(client, 2000, new AbortController().signal);
      assert.ok(!reached.ok);
      assert.ok(reached.attempts >= 2 && reached.attempts <= 4, `${reached.attempts} attempts`);
      assert.ok(reached.ms < 2000, `${reached.ms} ms`);
    } finally {
      client.close();
    }
  });
});

describe('the quorum check against a scripted etcd (its status names a leader; its linearizable read does not answer)', () => {
  type Answer = { code: number; message: string } | 'silence';
  let answer: Answer = 'silence';
  const reads: unknown[] = [];
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v3/maintenance/status') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ header: { cluster_id: '1', member_id: '2', revision: '7' }, version: '3.6.16', dbSize: '20480', leader: '3', raftIndex: '9', raftTerm: '3' }));
        return;
      }
      if (req.url !== '/v3/kv/range') {
        res.writeHead(404).end();
        return;
      }
      reads.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      // Silence: as a member whose read index never comes back from its leader.
      if (answer === 'silence') return;
      res.writeHead(answer.code === 14 ? 503 : 500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: answer.code, message: answer.message, error: answer.message }));
    });
  });
  let endpoint = '';
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const backup = async (): Promise<Awaited<ReturnType<typeof runBackup>>> => {
    const pvcRoot = await mkdtemp(join(scratch, 'scripted-'));
    const result = await runBackup({ endpoint, cluster: 'c1', member: 'm0', destination: { pvc: { claimName: 'b' } }, pvcRoot, quorumCheckMs: 300 });
    assert.deepEqual(await readdir(pvcRoot), [], 'nothing stored');
    return result;
  };

  for (const message of ['etcdserver: request timed out', 'etcdserver: request timed out, possibly due to previous leader failure', 'etcdserver: no leader', 'etcdserver: leader changed']) {
    test(`etcd's "${message}" is NoQuorum, in etcd's words`, async () => {
      answer = { code: 14, message };
      const result = await backup();
      assert.ok(!result.ok, JSON.stringify(result));
      assert.equal(result.reason, 'NoQuorum');
      assert.equal(result.message, `no quorum: member m0 (${endpoint}) names leader 3, but etcd refused a linearizable read through it: ${message}; the cluster has lost quorum or is electing a leader, and a snapshot now could miss committed writes`);
    });
  }

  test('no answer within the bound is NoQuorum, saying so (not a Timeout)', async () => {
    answer = 'silence';
    reads.length = 0;
    const started = Date.now();
    const result = await backup();
    assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
    assert.ok(!result.ok, JSON.stringify(result));
    assert.equal(result.reason, 'NoQuorum');
    assert.match(result.message, /names leader 3, but a linearizable read through it got no answer within 0\.3 s, which only a quorum can give/);
    // One read, of one key nobody writes, and not serializable (which the member would answer alone).
    assert.deepEqual(reads, [{ key: Buffer.from(QUORUM_CHECK_KEY).toString('base64') }]);
  });

  test('refusals that are not about the quorum keep their own reason', async () => {
    for (const [code, message] of [[7, 'etcdserver: permission denied'], [14, 'etcdserver: request timed out, waiting for the applied index took too long']] as const) {
      answer = { code, message };
      const result = await backup();
      assert.ok(!result.ok, JSON.stringify(result));
      assert.equal(result.reason, 'SnapshotFailed', message);
      assert.match(result.message, new RegExp(`^confirming through member m0 at .* that a quorum serves \\(a linearizable read\\): .*${message}`));
    }
  });
});
