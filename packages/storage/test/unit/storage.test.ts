// Every storage driver against a real server (MinIO, fake-gcs-server, Azurite, a folder): the round trip,
// that an interrupted upload leaves nothing that looks complete, and that each kind of refusal is named
// (reason and a message a person can act on).
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { ListMultipartUploadsCommand, S3Client } from '@aws-sdk/client-s3';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import { isPvcKey, locationKind, locationPrefix, locationURI, openStore, StorageError, type Location, type ObjectStore, type StorageFailureReason } from '../../src/index.ts';
import { PvcStore } from '../../src/pvc.ts';
import { guardedUpload } from '../../src/store.ts';
import {
  AZURITE_ACCOUNT,
  AZURITE_KEY,
  azuriteConnectionString,
  createGcsBucket,
  createMinioBucket,
  credentialsDir,
  freePorts,
  MINIO_PASSWORD,
  MINIO_USER,
  startAzurite,
  startFakeGcs,
  startMinio,
  type StorageServer,
} from '@quorum/localkube/testing/storage';

const MiB = 1024 * 1024;
const BUCKET = 'quorum-test';
const SECRET = 'backup-credentials';

/** A body of `bytes` pseudo-random bytes in 64 KiB chunks; with `failAfter`, it errors once that many were read. */
function body(bytes: number, options: { failAfter?: number } = {}): { stream: Readable; sha256: string } {
  const block = randomBytes(MiB);
  const hash = createHash('sha256');
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < bytes; offset += 64 * 1024) {
    const size = Math.min(64 * 1024, bytes - offset);
    const start = (offset / 1024) % (MiB - size);
    const chunk = Buffer.from(block.subarray(start, start + size));
    chunk.writeUInt32BE(offset >>> 0, 0);
    hash.update(chunk);
    chunks.push(chunk);
  }
  let sent = 0;
  const stream = new Readable({
    read() {
      if (options.failAfter !== undefined && sent >= options.failAfter) {
        this.destroy(new Error('the snapshot broke off'));
        return;
      }
      const chunk = chunks.shift();
      sent += chunk?.length ?? 0;
      this.push(chunk ?? null);
    },
  });
  return { stream, sha256: hash.digest('hex') };
}

async function drain(stream: Readable): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest('hex') };
}

async function rejectsWith(promise: Promise<unknown>, reason: StorageFailureReason, message: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof StorageError, `expected a StorageError, got ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
    assert.equal(err.reason, reason, err.message);
    assert.match(err.message, message);
    return true;
  });
}

/** What a backend's tests need: how to name a destination on it, and how to see past the driver. */
interface Backend {
  name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  destination(options?: { bucket?: string; prefix?: string; endpoint?: string }): Location;
  /** The credentials folder for `destination()`; `wrong` gives credentials the server refuses. */
  credentials(wrong?: boolean): Promise<string | undefined>;
  pvcRoot?: string;
  endpoint: string;
  /** Whether the server checks credentials at all (fake-gcs-server does not). */
  checksCredentials: boolean;
  /** Anything an interrupted upload may have left behind, by the backend's own means (multipart uploads, partial files). */
  leftovers(prefix: string): Promise<string[]>;
}

let scratch: string;
before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'quorum-storage-test-'));
});
after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

function minioBackend(): Backend {
  let server: StorageServer;
  const backend: Backend = {
    name: 's3 (MinIO)',
    endpoint: '',
    checksCredentials: true,
    async start() {
      server = await startMinio();
      backend.endpoint = server.endpoint;
      await createMinioBucket(server.endpoint, BUCKET);
    },
    stop: () => server.stop(),
    destination: (o = {}) => ({ s3: { bucket: o.bucket ?? BUCKET, prefix: o.prefix ?? 'backups', endpoint: o.endpoint ?? backend.endpoint, forcePathStyle: true, credentialsSecret: SECRET } }),
    credentials: (wrong = false) => credentialsDir(scratch, `s3-${wrong ? 'wrong' : 'right'}`, { accessKeyId: MINIO_USER, secretAccessKey: wrong ? 'not-the-password' : MINIO_PASSWORD }),
    async leftovers(prefix) {
      const client = new S3Client({ endpoint: backend.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: MINIO_USER, secretAccessKey: MINIO_PASSWORD } });
      try {
        const out = await client.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: prefix }));
        return (out.Uploads ?? []).map((u) => `multipart upload of ${u.Key}`);
      } finally {
        client.destroy();
      }
    },
  };
  return backend;
}

function gcsBackend(): Backend {
  let server: StorageServer;
  const backend: Backend = {
    name: 'gcs (fake-gcs-server)',
    endpoint: '',
    checksCredentials: false,
    async start() {
      server = await startFakeGcs();
      backend.endpoint = server.endpoint;
      await createGcsBucket(server.endpoint, BUCKET);
    },
    stop: () => server.stop(),
    destination: (o = {}) => ({ gcs: { bucket: o.bucket ?? BUCKET, prefix: o.prefix ?? 'backups', endpoint: o.endpoint ?? backend.endpoint, credentialsSecret: SECRET } }),
    // An emulator needs no service account: the Secret may be empty.
    credentials: () => credentialsDir(scratch, 'gcs', {}),
    leftovers: () => Promise.resolve([]),
  };
  return backend;
}

function azuriteBackend(): Backend {
  let server: StorageServer;
  const backend: Backend = {
    name: 'azure (Azurite)',
    endpoint: '',
    checksCredentials: true,
    async start() {
      server = await startAzurite();
      backend.endpoint = server.endpoint;
      const service = new BlobServiceClient(server.endpoint, new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY));
      await service.getContainerClient(BUCKET).create();
    },
    stop: () => server.stop(),
    destination: (o = {}) => ({ azure: { container: o.bucket ?? BUCKET, prefix: o.prefix ?? 'backups', ...(o.endpoint ? { endpoint: o.endpoint } : {}), credentialsSecret: SECRET } }),
    credentials: (wrong = false) =>
      credentialsDir(scratch, `azure-${wrong ? 'wrong' : 'right'}`, { connectionString: azuriteConnectionString(backend.endpoint, wrong ? Buffer.from('not the key').toString('base64') : AZURITE_KEY) }),
    async leftovers(prefix) {
      // Uncommitted blocks may stay (invisible, collected by the service); a committed blob must not.
      const service = new BlobServiceClient(backend.endpoint, new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY));
      const found: string[] = [];
      for await (const blob of service.getContainerClient(BUCKET).listBlobsFlat({ prefix })) found.push(`committed blob ${blob.name}`);
      return found;
    },
  };
  return backend;
}

function pvcBackend(): Backend {
  const backend: Backend = {
    name: 'pvc (a folder)',
    endpoint: '',
    checksCredentials: false,
    async start() {
      backend.pvcRoot = await mkdtemp(join(scratch, 'pvc-'));
    },
    stop: () => Promise.resolve(),
    destination: (o = {}) => ({ pvc: { claimName: 'backups', path: o.prefix ?? 'backups' } }),
    credentials: () => Promise.resolve(undefined),
    async leftovers(prefix) {
      const names = await readdir(join(backend.pvcRoot!, prefix), { recursive: true }).catch(() => [] as string[]);
      return names.map(String);
    },
  };
  return backend;
}

const BACKENDS = [pvcBackend(), azuriteBackend(), minioBackend(), gcsBackend()];

for (const backend of BACKENDS) {
  describe(backend.name, () => {
    let store: ObjectStore;
    before(async () => {
      await backend.start();
      store = await openStore(backend.destination(), await backend.credentials(), backend.pvcRoot, { maxAttempts: 2 });
    });
    after(async () => {
      store?.close();
      await backend.stop();
    });

    test('uploads (in several parts), lists, downloads and deletes', async () => {
      const key = 'backups/roundtrip/c1-20261123T105301Z-rev42.db';
      const { stream, sha256 } = body(12 * MiB + 32);
      const stored = await store.upload(key, stream, { sizeHint: 12 * MiB + 32 });
      assert.deepEqual(stored, { key, sizeBytes: 12 * MiB + 32, sha256 });
      const small = await store.upload('backups/roundtrip/small.db', body(1000).stream);
      assert.equal(small.sizeBytes, 1000);

      const listed = await store.list('backups/roundtrip/');
      assert.deepEqual(listed.map((o) => [o.key, o.sizeBytes]).sort(), [[key, 12 * MiB + 32], ['backups/roundtrip/small.db', 1000]]);
      assert.ok(listed.every((o) => Date.now() - o.lastModified.getTime() < 10 * 60_000), 'lastModified is recent');

      assert.deepEqual(await drain(await store.download(key)), { bytes: 12 * MiB + 32, sha256 });

      await store.delete(key);
      await store.delete(key);
      assert.deepEqual((await store.list('backups/roundtrip/')).map((o) => o.key), ['backups/roundtrip/small.db']);
      await rejectsWith(store.download(key), 'ObjectNotFound', /does not exist/);
    });

    for (const [when, failAfter] of [
      ['within the first part', 1 * MiB],
      ['after several parts were sent', 20 * MiB],
    ] as const) {
      test(`a body that fails ${when} leaves nothing that looks complete`, async () => {
        const prefix = `backups/interrupted-${failAfter}/`;
        const key = `${prefix}c1.db`;
        await assert.rejects(store.upload(key, body(32 * MiB, { failAfter }).stream, { sizeHint: 32 * MiB }), /the snapshot broke off/);
        assert.deepEqual(await store.list(prefix), []);
        await rejectsWith(store.download(key), 'ObjectNotFound', /does not exist/);
        assert.deepEqual(await backend.leftovers(prefix), []);
      });
    }

    test('an aborted upload leaves nothing, and rejects with the abort reason', async () => {
      const prefix = 'backups/aborted/';
      const abort = new AbortController();
      const { stream } = body(32 * MiB);
      let read = 0;
      stream.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= 10 * MiB) abort.abort(new Error('deadline passed'));
      });
      await assert.rejects(store.upload(`${prefix}c1.db`, stream, { signal: abort.signal }), /deadline passed/);
      assert.deepEqual(await store.list(prefix), []);
      // An abort returns at once; the driver's clean-up (abort the multipart upload, delete the partial file)
      // finishes in the background, within moments.
      let leftovers = await backend.leftovers(prefix);
      for (let i = 0; i < 50 && leftovers.length > 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        leftovers = await backend.leftovers(prefix);
      }
      assert.deepEqual(leftovers, []);
    });

    if (backend.name.startsWith('pvc')) {
      test('lists no partial file, and a missing mount is named', async () => {
        await writeFile(join(backend.pvcRoot!, 'backups', '.c9.db.partial'), 'half');
        assert.ok((await store.list('backups/')).every((o) => !o.key.includes('partial')));
        await rejectsWith(openStore(backend.destination(), undefined, join(scratch, 'not-mounted')), 'BucketNotFound', /PersistentVolumeClaim backups is not mounted: .*not-mounted is not a folder/);
      });
      return;
    }

    test('a missing bucket is named, with the server', async () => {
      const missing = await openStore(backend.destination({ bucket: 'quorum-missing' }), await backend.credentials(), undefined, { maxAttempts: 1 });
      try {
        const what = backend.name.startsWith('azure') ? 'container' : 'bucket';
        const expected = new RegExp(`^${what} quorum-missing does not exist at ${backend.endpoint.replace(/[.]/g, '\\.')}`);
        await rejectsWith(missing.upload('backups/c1.db', body(1000).stream), 'BucketNotFound', expected);
        await rejectsWith(missing.list('backups/'), 'BucketNotFound', expected);
      } finally {
        missing.close();
      }
    });

    test('an unreachable server is named', async () => {
      const [port] = await freePorts(1);
      const nowhere = `http://127.0.0.1:${port}${backend.name.startsWith('azure') ? `/${AZURITE_ACCOUNT}` : ''}`;
      const unreachable = await openStore(backend.destination({ endpoint: nowhere }), await backend.credentials(), undefined, { maxAttempts: 1 });
      try {
        await rejectsWith(unreachable.list('backups/'), 'StorageUnreachable', new RegExp(`^cannot reach http://127\\.0\\.0\\.1:${port}.*ECONNREFUSED`));
        await rejectsWith(unreachable.upload('backups/c1.db', body(1000).stream), 'StorageUnreachable', /ECONNREFUSED/);
      } finally {
        unreachable.close();
      }
    });

    if (backend.checksCredentials) {
      test('refused credentials are named: which Secret, which server, and what it said', async () => {
        const refused = await openStore(backend.destination(), await backend.credentials(true), undefined, { maxAttempts: 1 });
        try {
          const expected = new RegExp(`^access denied: the credentials in Secret ${SECRET} were refused by ${backend.endpoint.replace(/[.]/g, '\\.')}: \\S.+`);
          await rejectsWith(refused.upload('backups/c1.db', body(1000).stream), 'AccessDenied', expected);
          await rejectsWith(refused.list('backups/'), 'AccessDenied', expected);
          await rejectsWith(refused.download('backups/c1.db'), 'AccessDenied', expected);
        } finally {
          refused.close();
        }
      });

      test('a Secret without the keys is named', async () => {
        await rejectsWith(openStore(backend.destination(), await credentialsDir(scratch, 'empty', {})), 'CredentialsInvalid', new RegExp(`the credentials Secret ${SECRET} has no key`));
      });
    }
  });
}

test('a store that gives up and destroys the stream it reads: its own classified error wins, not the AbortError it left on the body', async () => {
  const body = Readable.from((function* () {
    for (let i = 0; i < 64; i++) yield Buffer.alloc(64 * 1024, i);
  })());
  const classified = new StorageError('StorageUnreachable', 'cannot reach http://s3.example:9000: socket hang up');
  const upload = guardedUpload(body, {}, async (stream) => {
    await new Promise((r) => stream.once('readable', r));
    // What lib-storage does when a part fails: it aborts, destroying the stream it reads, and rejects.
    stream.destroy(Object.assign(new Error('The operation was aborted'), { name: 'AbortError' }));
    throw classified;
  });
  await assert.rejects(upload, (err: unknown) => err === classified);
});

test('isPvcKey is the PVC store\'s own rule: the store refuses exactly the keys it rejects', async () => {
  const root = await mkdtemp(join(tmpdir(), 'quorum-pvc-'));
  try {
    const store = new PvcStore({ claimName: 'etcd-backups' }, root);
    for (const [key, ok] of [['a.db', true], ['a/b/c.db', true], ['.a.db', true], ['a..b', true], ['', false], ['/a', false], ['a//b', false], ['./a', false], ['a/./b', false], ['../a', false], ['a/..', false]] as const) {
      assert.equal(isPvcKey(key), ok, key);
      await store.delete(key).then(
        () => assert.ok(ok, `the store took ${JSON.stringify(key)}`),
        (err: unknown) => {
          assert.ok(!ok, `the store refused ${JSON.stringify(key)}: ${String(err)}`);
          assert.ok(err instanceof StorageError && err.reason === 'StorageFailed', String(err));
        },
      );
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('a location names its kind, its key prefix (with one trailing slash) and the URI objects are reported by', () => {
  const s3: Location = { s3: { bucket: 'b', prefix: 'prod/etcd', credentialsSecret: 'c' } };
  const gcs: Location = { gcs: { bucket: 'g', prefix: 'x/', credentialsSecret: 'c' } };
  const azure: Location = { azure: { container: 'a', credentialsSecret: 'c' } };
  const pvc: Location = { pvc: { claimName: 'claim', path: 'folder' } };
  assert.deepEqual([s3, gcs, azure, pvc].map(locationKind), ['s3', 'gcs', 'azure', 'pvc']);
  assert.deepEqual([s3, gcs, azure, pvc].map(locationPrefix), ['prod/etcd/', 'x/', '', 'folder/']);
  assert.deepEqual(
    [s3, gcs, azure, pvc].map((l) => locationURI(l, `${locationPrefix(l)}k.db`)),
    ['s3://b/prod/etcd/k.db', 'gs://g/x/k.db', 'azure://a/k.db', 'pvc://claim/folder/k.db'],
  );
  assert.throws(() => locationKind({}), /exactly one of s3, gcs, azure or pvc/);
});

test('against a server that accepts and never answers, every call of the GCS, Azure and S3 drivers ends when its signal aborts', async (t) => {
  const { createServer } = await import('node:net');
  const held: import('node:net').Socket[] = [];
  const server = createServer((socket) => void held.push(socket.on('error', () => undefined)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const socket of held) socket.destroy();
    server.close();
  });
  const address = server.address();
  assert.ok(typeof address === 'object' && address !== null);
  const endpoint = `http://127.0.0.1:${address.port}`;
  const scratch = await mkdtemp(join(tmpdir(), 'storage-hung-'));
  t.after(() => rm(scratch, { recursive: true, force: true }));
  const stores: [string, ObjectStore][] = [
    ['gcs', await openStore({ gcs: { bucket: BUCKET, endpoint, credentialsSecret: 'gcs' } }, await credentialsDir(join(scratch, 'g'), 'gcs', {}))],
    ['azure', await openStore({ azure: { container: BUCKET, credentialsSecret: 'az' } }, await credentialsDir(join(scratch, 'a'), 'az', { connectionString: azuriteConnectionString(endpoint) }))],
    ['s3', await openStore({ s3: { bucket: BUCKET, endpoint, forcePathStyle: true, credentialsSecret: 's3' } }, await credentialsDir(join(scratch, 's'), 's3', { accessKeyId: 'a', secretAccessKey: 'b' }))],
  ];
  for (const [name, store] of stores) {
    const calls: [string, (signal: AbortSignal) => Promise<unknown>][] = [
      ['list', (signal) => store.list('x/', { signal })],
      ['delete', (signal) => store.delete('x/y', { signal })],
      ['download', (signal) => store.download('x/y', { signal })],
      ['upload', (signal) => store.upload('x/y', Readable.from([Buffer.from('record')]), { signal, sizeHint: 6 })],
    ];
    for (const [what, call] of calls) {
      const started = Date.now();
      await assert.rejects(call(AbortSignal.timeout(300)), `${name} ${what} rejects`);
      assert.ok(Date.now() - started < 3000, `${name} ${what} ended ${Date.now() - started} ms after it began, its signal aborting at 300 ms`);
    }
    store.close();
  }
});

test('a GCS download given up before the bucket answers ends without an unhandled rejection when the answer comes late', async (t) => {
  // The SDK pipes a late answer into the stream it returned without checking it is open (googleapis/google-cloud-node#9242):
  // destroyed early, it threw ERR_STREAM_UNABLE_TO_PIPE as an unhandled rejection, which ends a process.
  const { createServer } = await import('node:http');
  const held: import('node:http').ServerResponse[] = [];
  let mediaAsked: () => void = () => undefined;
  const asked = new Promise<void>((resolve) => (mediaAsked = resolve));
  const server = createServer((req, res) => {
    if (req.url?.includes('alt=media')) {
      held.push(res);
      mediaAsked();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'storage#object', name: 'x/late', bucket: BUCKET, size: '6', generation: '1' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const address = server.address();
  assert.ok(typeof address === 'object' && address !== null);
  const scratch = await mkdtemp(join(tmpdir(), 'storage-late-'));
  t.after(() => rm(scratch, { recursive: true, force: true }));
  const store = await openStore({ gcs: { bucket: BUCKET, endpoint: `http://127.0.0.1:${address.port}`, credentialsSecret: 'gcs' } }, await credentialsDir(scratch, 'gcs', {}));
  t.after(() => store.close());
  const unhandled: unknown[] = [];
  const record = (err: unknown): void => void unhandled.push(err);
  process.on('unhandledRejection', record);
  t.after(() => process.off('unhandledRejection', record));

  const abort = new AbortController();
  const stream = await store.download('x/late', { signal: abort.signal });
  const read = (async () => {
    for await (const chunk of stream) void chunk;
  })();
  await asked;
  abort.abort(new Error('the store call timed out'));
  await assert.rejects(read, /timed out/);
  // The answer comes after the caller gave up; the client closing the connection is the sign it was taken in.
  const answer = held[0]!;
  const closed = new Promise<void>((resolve) => answer.on('close', () => resolve()));
  answer.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '6' }).write('rec');
  await closed;
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(unhandled, []);
});
