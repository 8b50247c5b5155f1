// The recorder with a bucket that stops answering: fake-gcs-server behind a TCP proxy that, once hung, accepts
// connections and never answers (and leaves the open ones silent). Every store call gives up after its timeout,
// the write queue stops at its bound instead of holding every change's versions, and the heap stays within
// that bound while thousands of changes arrive. Once the bucket answers again, the queue drains, every watch
// starts again, and the comparison at start finds the changes that were not queued: no object's newest version
// is lost.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ConfigMaps, type OpenObject } from '@quorum/runtime';
import { createGcsBucket, credentialsDir, startFakeGcs, type StorageServer } from '@quorum/localkube/testing/storage';
import type { Location } from '@quorum/storage';
import type { ResolvedKind } from '../../src/recorder/discovery.ts';
import { RecorderSession, type SessionSettings } from '../../src/recorder/session.ts';
import { openRecordStore } from '../../src/store/open-store.ts';
import { FakeApi, MemoryRedactionKeys, until } from './fake-api.ts';

const BUCKET = 'hung-records';
const OBJECTS = 40;
const UPDATES = 4_000;
const PAYLOAD_BYTES = 8 * 1024;
const BOUND = 200;
const CALL_TIMEOUT_MS = 400;
const SETTINGS: SessionSettings = { cleaning: { status: false, secrets: 'redact' }, retention: { maxVersionsPerObject: 5 }, exclude: [] };
const CM: ResolvedKind = { group: '', kind: 'ConfigMap', version: 'v1', resource: 'configmaps', namespaced: true, type: ConfigMaps };

/** A TCP proxy to `upstream` that can hang: new connections are accepted and never answered, open ones go silent. */
class HangingProxy {
  readonly #server: Server;
  readonly #silent = new Set<Socket>();
  readonly #piped = new Map<Socket, Socket>();
  #hung = false;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(upstreamPort: number): Promise<HangingProxy> {
    const server = createServer();
    const proxy = new HangingProxy(server);
    server.on('connection', (client: Socket) => proxy.#accept(client, upstreamPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get endpoint(): string {
    const address = this.#server.address();
    if (typeof address !== 'object' || address === null) throw new Error('the proxy is not listening');
    return `http://127.0.0.1:${address.port}`;
  }

  #accept(client: Socket, upstreamPort: number): void {
    client.on('error', () => undefined);
    if (this.#hung) {
      this.#silent.add(client);
      return;
    }
    const upstream = connect(upstreamPort, '127.0.0.1');
    upstream.on('error', () => client.destroy());
    client.pipe(upstream).pipe(client);
    this.#piped.set(client, upstream);
    client.on('close', () => {
      this.#piped.delete(client);
      upstream.destroy();
    });
  }

  hang(): void {
    this.#hung = true;
    for (const [client, upstream] of this.#piped) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      upstream.destroy();
      this.#silent.add(client);
    }
    this.#piped.clear();
  }

  /** Answers again: the silent connections are reset (the SDKs open new ones), new ones are forwarded. */
  resume(): void {
    this.#hung = false;
    for (const client of this.#silent) client.destroy();
    this.#silent.clear();
  }

  async close(): Promise<void> {
    this.resume();
    for (const client of this.#piped.keys()) client.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapAfterGc = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

let scratch: string;
let gcs: StorageServer;
let proxy: HangingProxy;
let credentials: string;

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'recorder-hung-bucket-'));
  gcs = await startFakeGcs();
  await createGcsBucket(gcs.endpoint, BUCKET);
  proxy = await HangingProxy.start(Number(new URL(gcs.endpoint).port));
  credentials = await credentialsDir(scratch, 'gcs', {});
});

after(async () => {
  await proxy?.close();
  await gcs?.stop();
  await rm(scratch, { recursive: true, force: true });
});

const configMap = (i: number, version: number): OpenObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: `cm-${i}`, namespace: 'default' },
  // Each version differs throughout, so no two share strings: what a queued change holds is its own.
  data: { version: String(version), payload: `${version}-${i}-`.repeat(PAYLOAD_BYTES / 8).slice(0, PAYLOAD_BYTES) },
});

test('with a bucket that never answers, store calls time out, the queue stops at its bound and the heap with it; nothing is lost once it answers', async (t) => {
  const api = new FakeApi();
  const location = (endpoint: string): Location => ({ gcs: { bucket: BUCKET, prefix: 'hung', endpoint, credentialsSecret: 'gcs' } });
  const keys = new MemoryRedactionKeys();
  const session = await RecorderSession.open({
    name: 'hung',
    location: { objectStore: location(proxy.endpoint), credentialsDir: credentials },
    client: api.asClient(),
    redactionKeys: keys,
    onActivity: () => undefined,
    onNamespacesChanged: () => undefined,
    maxQueuedChanges: BOUND,
    storeCallTimeoutMs: CALL_TIMEOUT_MS,
  });
  t.after(() => session.close());
  await session.configure(SETTINGS);
  for (let i = 0; i < OBJECTS; i++) api.create(ConfigMaps, configMap(i, 0));
  await session.watch([{ kind: CM, namespace: 'default' }]);
  await until('the watch live', () => session.report().watches.every((w) => w.ready));
  await session.idle();

  api.compact();
  const baseline = heapAfterGc();
  proxy.hang();
  const started = Date.now();
  for (let u = 1; u <= UPDATES; u++) {
    api.update(ConfigMaps, configMap(u % OBJECTS, u));
    // Let the informer take each batch as a real watch would deliver it.
    if (u % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  await until(
    'the queue full, and a store call timed out',
    () => {
      const r = session.report();
      return r.queueFull !== undefined && r.storageFailure !== undefined;
    },
    10_000,
  );
  const hung = session.report();
  // The fake API server's own history of events is the test's memory, not the recorder's.
  api.compact();
  const grown = heapAfterGc() - baseline;
  const unbounded = UPDATES * 2 * PAYLOAD_BYTES;
  process.stderr.write(`[hung-bucket] ${UPDATES} changes of ${PAYLOAD_BYTES} B in ${Date.now() - started} ms: ${hung.pending} writes queued (bound ${BOUND}), ${hung.queueFull?.dropped} not queued, heap +${(grown / 2 ** 20).toFixed(1)} MiB (unbounded: ~${(unbounded / 2 ** 20).toFixed(0)} MiB)\n`);
  assert.ok(hung.pending <= BOUND, `${hung.pending} writes queued, bound ${BOUND}`);
  assert.ok((hung.queueFull?.dropped ?? 0) >= UPDATES - BOUND, 'the changes past the bound are not queued');
  assert.match(hung.storageFailure?.message ?? '', /got no answer within 0\.4 s/, 'a store call gives up after its timeout');
  assert.ok(grown < 24 * 2 ** 20, `the heap grew ${(grown / 2 ** 20).toFixed(1)} MiB while the bucket hung; every change queued would hold ~${(unbounded / 2 ** 20).toFixed(0)} MiB`);

  proxy.resume();
  await until(
    'the queue drained and every watch compared again',
    () => {
      const r = session.report();
      return r.queueFull === undefined && r.storageFailure === undefined && r.pending === 0 && r.watches.every((w) => w.ready);
    },
    90_000,
  );
  await session.idle();
  // The bucket holds each object's newest version as its last-seen copy: the changes not queued were found.
  const check = await openRecordStore({ objectStore: location(gcs.endpoint), credentialsDir: credentials }, keys);
  try {
    for (let i = 0; i < OBJECTS; i++) {
      const newest = api.get(ConfigMaps, 'default', `cm-${i}`) as (OpenObject & { data: { version: string } }) | undefined;
      const seen = await check.readLastSeen({ group: '', kind: 'ConfigMap', namespace: 'default', name: `cm-${i}` });
      assert.equal((seen?.object as { data?: { version?: string } } | undefined)?.data?.version, newest?.data.version, `cm-${i}`);
    }
  } finally {
    check.close();
  }
});
