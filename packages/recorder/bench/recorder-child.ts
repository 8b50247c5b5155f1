// The recorder process of recorder.bench.ts, run with --expose-gc: the recorder as main.ts builds it (the
// ChangeRecorder controller on the leader, a Lease to hold it; no history endpoint, which makes no requests of
// its own), with a silent log. It answers the bench over IPC: its heap after a full GC, and the API requests it
// has made so far, by kind (watch opens, Lease calls, everything else).
import { Writable } from 'node:stream';
import { Client, createLogger } from '@quorum/runtime';
import { LEASE_NAME } from '../src/operator/config.ts';
import { createRecorder } from '../src/operator/recorder.ts';

export type ChildRequest = { type: 'heap' } | { type: 'requests' } | { type: 'stop' };
export type ChildReply =
  | { type: 'ready'; heapUsed: number }
  | { type: 'heap'; heapUsed: number }
  | { type: 'requests'; watches: number; lease: number; other: number; byMethod: Record<string, number> }
  | { type: 'stopped' };

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc || !process.send) throw new Error('run by recorder.bench.ts: node --expose-gc, with an IPC channel');
const send = (reply: ChildReply): void => void process.send!(reply);
const settle = async (): Promise<number> => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 100));
  }
  return process.memoryUsage().heapUsed;
};

const storageRoot = process.env['STORAGE_ROOT'];
const namespace = process.env['LEASE_NAMESPACE'];
if (!storageRoot || !namespace) throw new Error('STORAGE_ROOT and LEASE_NAMESPACE are required');

const client = await Client.connect({ kubeconfig: process.env['KUBECONFIG'] });
const requests = { watches: 0, lease: 0, other: 0, byMethod: {} as Record<string, number> };
client.observe((method, path) => {
  requests.byMethod[method] = (requests.byMethod[method] ?? 0) + 1;
  if (method === 'WATCH') requests.watches++;
  else if (path.includes('/leases/') || path.endsWith('/leases')) requests.lease++;
  else requests.other++;
});
const logger = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
const { manager } = await createRecorder({
  storageRoot,
  // The Secret of the stores' redaction keys goes beside the Lease.
  namespace,
  logger,
  instance: 'recorder-bench',
  manager: { client, gracefulShutdownMs: 5000, leaderElection: { name: LEASE_NAME, namespace, identity: 'recorder-bench' } },
});
const stop = new AbortController();
const running = manager.start(stop.signal);
process.on('message', (message: ChildRequest) => {
  void (async () => {
    switch (message.type) {
      case 'heap':
        send({ type: 'heap', heapUsed: await settle() });
        return;
      case 'requests':
        send({ type: 'requests', ...structuredClone(requests) });
        return;
      case 'stop':
        stop.abort();
        await running;
        client.close();
        // Exit once the reply is on its way: an exit right after send() may drop it.
        process.send!({ type: 'stopped' } satisfies ChildReply, () => process.exit(0));
    }
  })();
});

// Leader, its ChangeRecorder informer synced: the baseline before any ChangeRecorder exists.
await new Promise((r) => setTimeout(r, 5000));
send({ type: 'ready', heapUsed: await settle() });
