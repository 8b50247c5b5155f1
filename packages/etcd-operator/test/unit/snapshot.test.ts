// Snapshot streaming over gRPC (node:http2) against real etcd 3.6 and 3.5 members on 127.0.0.1: the bytes
// are etcdctl's, a corrupted byte and a member stopped mid-stream fail the stream, and etcd's own errors
// come through in its words.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { openSnapshot, SnapshotDecoder, SnapshotError, SNAPSHOT_TRAILER_BYTES } from '../../src/backup/snapshot.ts';
import { eventually } from '@quorum/runtime/testing';
import { EtcdClient } from '../../src/etcd/client.ts';
import { startCorruptingProxy } from '../support/corrupting-proxy.ts';
import { fillEtcd } from '../support/etcd-data.ts';
import { etcdBinary, ETCD_VERSIONS, startLocalEtcd, type LocalEtcdCluster } from '../support/local-etcd.ts';

const run = promisify(execFile);

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

async function etcdctlSnapshot(version: string, endpoint: string, file: string): Promise<void> {
  await run(join(dirname(etcdBinary(version)), 'etcdctl'), [`--endpoints=${endpoint}`, 'snapshot', 'save', file], { timeout: 60_000 });
}

/** What `etcdutl snapshot status` says of a file (it checks etcd's trailer too). */
async function etcdutlStatus(version: string, file: string): Promise<{ hash: number; revision: number; totalKey: number; totalSize: number }> {
  const { stdout } = await run(join(dirname(etcdBinary(version)), 'etcdutl'), ['snapshot', 'status', file, '--write-out=json'], { timeout: 60_000 });
  return JSON.parse(stdout) as { hash: number; revision: number; totalKey: number; totalSize: number };
}

async function storageVersionSet(endpoint: string): Promise<void> {
  const client = new EtcdClient({ endpoint });
  await eventually(`etcd at ${endpoint} to report a storage version`, async () => (await client.status()).storageVersion || undefined, { timeoutMs: 30_000, intervalMs: 200 });
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quorum-snapshot-test-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

for (const version of ETCD_VERSIONS) {
  describe(`etcd ${version}`, () => {
    let etcd: LocalEtcdCluster;
    let endpoint: string;
    before(async () => {
      etcd = await startLocalEtcd({ members: 1, version });
      endpoint = etcd.endpoints[0]!;
      // About 2 MiB: many 32 KiB messages, and a trailer at an arbitrary offset.
      await fillEtcd(endpoint, 2 * 1024 * 1024, { valueBytes: 100_000 });
      // etcd 3.6 writes its storage version into the backend a while after it starts (later on a loaded
      // machine); the snapshot carries it only from then on, so wait until the member says it has one.
      if (version.startsWith('3.6')) await storageVersionSet(endpoint);
    });
    after(() => etcd.stop());

    test('streams what etcdctl snapshot save writes (same contents and size, trailer included), its size known up front', async () => {
      const ours = join(dir, `ours-${version}.db`);
      const theirs = join(dir, `etcdctl-${version}.db`);
      const snapshot = await openSnapshot({ endpoint });
      assert.equal(snapshot.sizeBytes, snapshot.dbBytes + SNAPSHOT_TRAILER_BYTES);
      assert.ok(snapshot.dbBytes > 2 * 1024 * 1024, `dbBytes ${snapshot.dbBytes}`);
      assert.equal(snapshot.storageVersion, version.startsWith('3.6') ? '3.6.0' : '');
      await pipeline(snapshot.body, createWriteStream(ours));
      await etcdctlSnapshot(version, endpoint, theirs);

      const [a, b] = await Promise.all([readFile(ours), readFile(theirs)]);
      assert.equal(a.length, snapshot.sizeBytes);
      // Both end in etcd's trailer: the last 32 bytes are the SHA-256 of the rest.
      assert.equal(a.subarray(-32).toString('hex'), sha256(a.subarray(0, -32)));
      assert.equal(b.subarray(-32).toString('hex'), sha256(b.subarray(0, -32)));
      // Two snapshots are never byte-identical: each Snapshot RPC commits the backend first (backend.Snapshot),
      // which rewrites bbolt's meta page, and that commit may allocate a page for the freelist (seen with 3.5:
      // 4 KiB apart). Their contents are: etcdutl's hash covers every bucket's keys and values.
      assert.ok(Math.abs(a.length - b.length) <= 4 * 4096, `ours ${a.length} bytes, etcdctl's ${b.length}`);
      const [mine, etcdctl] = await Promise.all([etcdutlStatus(version, ours), etcdutlStatus(version, theirs)]);
      // totalSize is the file's size, which the page above may change; the hash, revision and keys are the contents.
      const contents = ({ hash, revision, totalKey }: typeof mine): object => ({ hash, revision, totalKey });
      assert.deepEqual(contents(mine), contents(etcdctl));
      assert.ok(mine.totalKey > 20, JSON.stringify(mine));
    });

    test('a byte corrupted in transit fails the stream with SnapshotCorrupted, and it never ends', async () => {
      const proxy = await startCorruptingProxy(endpoint, 10);
      try {
        const snapshot = await openSnapshot({ endpoint: proxy.url });
        let ended = false;
        snapshot.body.on('end', () => {
          ended = true;
        });
        await assert.rejects(pipeline(snapshot.body, createWriteStream(join(dir, 'corrupt.db'))), (err: unknown) => {
          assert.ok(err instanceof SnapshotError, String(err));
          assert.equal(err.reason, 'SnapshotCorrupted');
          assert.match(err.message, /corrupted: its \d+ bytes hash to sha256 [0-9a-f]{64}, but etcd sent [0-9a-f]{64}/);
          return true;
        });
        assert.ok(proxy.flipped);
        assert.equal(ended, false);
      } finally {
        await proxy.close();
      }
    });
  });
}

describe('etcd 3.6.16, failures', () => {
  let etcd: LocalEtcdCluster;
  before(async () => {
    etcd = await startLocalEtcd({ members: 1, version: '3.6.16' });
    await fillEtcd(etcd.endpoints[0]!, 8 * 1024 * 1024, { valueBytes: 500_000 });
  });
  after(() => etcd.stop());

  test('a member stopped mid-stream fails the stream with SnapshotTruncated', async () => {
    // A small window, so most of the snapshot is still in etcd when it stops.
    const snapshot = await openSnapshot({ endpoint: etcd.endpoints[0]!, windowBytes: 256 * 1024 });
    const body = snapshot.body;
    let received = 0;
    const failed = new Promise<Error>((resolve) => body.once('error', resolve));
    const first = await new Promise<Buffer>((resolve) => body.once('data', resolve));
    received += first.length;
    body.pause();
    await etcd.members[0]!.stop(false);
    body.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    body.resume();
    const err = await failed;
    assert.ok(err instanceof SnapshotError, String(err));
    assert.equal(err.reason, 'SnapshotTruncated');
    assert.match(err.message, /truncated: .* after \d+ of \d+ bytes/);
    assert.ok(received < snapshot.dbBytes, `received ${received} of ${snapshot.dbBytes}`);
  });

  test('an unreachable member fails openSnapshot at once, saying why', async () => {
    await assert.rejects(openSnapshot({ endpoint: etcd.endpoints[0]! }), (err: unknown) => {
      assert.ok(err instanceof SnapshotError, String(err));
      assert.equal(err.reason, 'SnapshotFailed');
      assert.match(err.message, /cannot stream a snapshot from etcd at http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/);
      return true;
    });
  });
});

describe('etcd 3.6.16 with authentication on', () => {
  let etcd: LocalEtcdCluster;
  before(async () => {
    etcd = await startLocalEtcd({ members: 1, version: '3.6.16' });
    const endpoint = etcd.endpoints[0]!;
    for (const [path, body] of [
      ['/v3/auth/role/add', { name: 'root' }],
      ['/v3/auth/user/add', { name: 'root', password: 'secret' }],
      ['/v3/auth/user/grant', { user: 'root', role: 'root' }],
      ['/v3/auth/enable', {}],
    ] as const) {
      const res = await fetch(`${endpoint}${path}`, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(5000) });
      assert.equal(res.status, 200, `${path}: ${await res.text()}`);
    }
  });
  after(() => etcd.stop());

  test('a snapshot without a token fails with etcd\'s own message', async () => {
    await assert.rejects(openSnapshot({ endpoint: etcd.endpoints[0]! }), (err: unknown) => {
      assert.ok(err instanceof SnapshotError, String(err));
      assert.equal(err.reason, 'SnapshotFailed');
      assert.match(err.message, /failed the snapshot: etcdserver: .+ \(gRPC status \d+\)/);
      assert.match(err.etcdMessage ?? '', /^etcdserver: /);
      return true;
    });
  });
});

/** A SnapshotResponse as etcd's Go encoder writes it (fields in number order, zeros omitted), with its gRPC prefix. */
function message(fields: { remaining?: number; blob?: Buffer; version?: string; header?: boolean }): Buffer {
  const varint = (n: number): number[] => {
    const out: number[] = [];
    for (; n >= 128; n = Math.floor(n / 128)) out.push((n % 128) | 128);
    out.push(n);
    return out;
  };
  const bytes: number[] = [];
  if (fields.header) bytes.push(0x0a, 0x04, 0x08, 0x01, 0x10, 0x02); // header { cluster_id: 1, member_id: 2 }
  if (fields.remaining) bytes.push(0x10, ...varint(fields.remaining));
  if (fields.blob?.length) bytes.push(0x1a, ...varint(fields.blob.length), ...fields.blob);
  if (fields.version) bytes.push(0x22, ...varint(fields.version.length), ...Buffer.from(fields.version));
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(bytes.length, 1);
  return Buffer.concat([prefix, Buffer.from(bytes)]);
}

/** A whole response for `data` in `pieces` messages, and a trailer (etcd's, or `trailer`). */
function response(data: Buffer, pieces: number, trailer?: Buffer): Buffer {
  const size = Math.ceil(data.length / pieces);
  const parts: Buffer[] = [];
  for (let at = 0; at < data.length; at += size) {
    const blob = data.subarray(at, at + size);
    parts.push(message({ header: true, remaining: data.length - at - blob.length, blob, version: '3.6.0' }));
  }
  parts.push(message({ header: true, blob: trailer ?? createHash('sha256').update(data).digest(), version: '3.6.0' }));
  return Buffer.concat(parts);
}

async function decode(wire: Buffer, trailers: Record<string, string>, chunkBytes: number): Promise<{ data: Buffer; decoder: SnapshotDecoder }> {
  const decoder = new SnapshotDecoder('http://etcd.test:2379');
  const out: Buffer[] = [];
  decoder.on('data', (c: Buffer) => out.push(c));
  const done = new Promise<void>((resolve, reject) => {
    decoder.on('end', resolve);
    decoder.on('error', reject);
  });
  try {
    for (let at = 0; at < wire.length; at += chunkBytes) decoder.feed(wire.subarray(at, at + chunkBytes));
    decoder.finish(trailers);
  } catch (err) {
    decoder.destroy(err as Error);
  }
  await done;
  return { data: Buffer.concat(out), decoder };
}

describe('SnapshotDecoder', () => {
  const data = randomBytes(3000);

  for (const chunkBytes of [1, 7, 100_000]) {
    test(`yields the database and its trailer, fed ${chunkBytes} byte(s) at a time`, async () => {
      const { data: out, decoder } = await decode(response(data, 4), { 'grpc-status': '0' }, chunkBytes);
      assert.deepEqual(out, Buffer.concat([data, createHash('sha256').update(data).digest()]));
      assert.equal(decoder.dbBytes, 3000);
      assert.equal(decoder.storageVersion, '3.6.0');
    });
  }

  test('a wrong trailer is SnapshotCorrupted', async () => {
    await assert.rejects(decode(response(data, 3, Buffer.alloc(32)), { 'grpc-status': '0' }, 64), { reason: 'SnapshotCorrupted' });
  });

  test('a stream that ends before the trailer is SnapshotTruncated', async () => {
    const wire = response(data, 3);
    await assert.rejects(decode(wire.subarray(0, wire.length - 60), { 'grpc-status': '0' }, 64), (err: unknown) => {
      assert.ok(err instanceof SnapshotError);
      assert.equal(err.reason, 'SnapshotTruncated');
      assert.match(err.message, /is truncated: etcd ended the stream early after 2999 of 3000 bytes/);
      return true;
    });
  });

  test("etcd's 'no leader' is NoQuorum, in its words", async () => {
    await assert.rejects(decode(Buffer.alloc(0), { 'grpc-status': '14', 'grpc-message': 'etcdserver%3A no leader' }, 64), (err: unknown) => {
      assert.ok(err instanceof SnapshotError);
      assert.equal(err.reason, 'NoQuorum');
      assert.equal(err.message, 'no quorum: etcd at http://etcd.test:2379 failed the snapshot: etcdserver: no leader (gRPC status 14)');
      return true;
    });
  });

  test('remaining_bytes that do not add up are refused', async () => {
    const wire = Buffer.concat([message({ remaining: 100, blob: Buffer.alloc(10) }), message({ remaining: 10, blob: Buffer.alloc(10) })]);
    await assert.rejects(decode(wire, { 'grpc-status': '0' }, 64), /remaining_bytes 10 after 20 of 110 bytes/);
  });
});
