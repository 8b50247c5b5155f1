// The work queue keeps client-go's guarantees: dedup, one worker per key, dirty re-queue, delays and shutdown.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WorkQueue, type RateLimiter, type WorkQueueMetrics, type WorkQueueOptions } from '../../src/queue/index.ts';

/** Lets every pending promise callback run. */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Exposes whether a promise has settled yet, without awaiting it. */
function watch<T>(promise: Promise<T>): { settled: boolean; value: T | undefined } {
  const state: { settled: boolean; value: T | undefined } = { settled: false, value: undefined };
  void promise.then((value) => {
    state.settled = true;
    state.value = value;
  });
  return state;
}

/** A queue whose rate limiter never delays, so tests that do not need one stay free of timers. */
function queue<K = string>(options: WorkQueueOptions<K> = {}): WorkQueue<K> {
  return new WorkQueue<K>({ rateLimiter: fixedDelayLimiter(0), ...options });
}

function fixedDelayLimiter<K>(delayMs: number): RateLimiter<K> & { failures: Map<K, number> } {
  const failures = new Map<K, number>();
  return {
    failures,
    when: (item) => {
      failures.set(item, (failures.get(item) ?? 0) + 1);
      return delayMs;
    },
    forget: (item) => void failures.delete(item),
    retries: (item) => failures.get(item) ?? 0,
  };
}

/** get() with a deadline, so a regression fails the test instead of leaving it waiting forever. */
function take<K>(q: WorkQueue<K>): Promise<K | undefined> {
  return q.get(AbortSignal.timeout(2000));
}

function activeTimeouts(): number {
  return process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
}

test('an item waiting in the queue is not added twice', async () => {
  const q = queue();
  q.add('a');
  q.add('b');
  q.add('a');
  assert.equal(q.len(), 2);
  assert.equal(await take(q), 'a');
  assert.equal(await take(q), 'b');
  assert.equal(q.len(), 0);
});

test('items come out in the order they were first added', async () => {
  const q = queue<number>();
  for (let i = 0; i < 1000; i++) q.add(i);
  const seen: (number | undefined)[] = [];
  for (let i = 0; i < 1000; i++) seen.push(await take(q));
  assert.deepEqual(seen, Array.from({ length: 1000 }, (_, i) => i));
});

test('an item added while in flight is re-queued exactly once, when it is done', async () => {
  const q = queue();
  q.add('a');
  assert.equal(await take(q), 'a');
  q.add('a');
  q.add('a');
  q.add('a');
  assert.equal(q.len(), 0, 'not queued while a worker holds it');
  q.done('a');
  assert.equal(q.len(), 1);
  assert.equal(await take(q), 'a');
  q.done('a');
  assert.equal(q.len(), 0, 'the repeated adds collapsed into one');
  q.done('a'); // a stray done is harmless
  assert.equal(q.len(), 0);
});

test('an in-flight item is not handed to a second waiting worker until it is done', async () => {
  const q = queue();
  q.add('a');
  assert.equal(await take(q), 'a');
  const second = watch(q.get());
  q.add('a');
  await flush();
  assert.equal(second.settled, false);
  q.done('a');
  await flush();
  assert.deepEqual(second, { settled: true, value: 'a' });
});

test('concurrent waiters each receive a distinct item, in the order they asked', async () => {
  const q = queue();
  const waiters = [watch(q.get()), watch(q.get()), watch(q.get())];
  q.add('a');
  q.add('b');
  q.add('a');
  q.add('c');
  await flush();
  assert.deepEqual(
    waiters.map((w) => w.value),
    ['a', 'b', 'c'],
  );
});

test('four workers never process the same key at once, and the last add of each key is processed', async () => {
  const q = queue();
  const keys = ['k0', 'k1', 'k2', 'k3', 'k4'];
  const active = new Map<string, number>();
  let maxPerKey = 0;
  let maxOverall = 0;
  let running = 0;
  let processed = 0;
  /** Per key: the number of adds so far, and how many of them the latest processing had seen when it started. */
  const addCount = new Map<string, number>();
  const seenAtStart = new Map<string, number>();
  // A fixed-seed LCG: varied interleavings, identical on every run.
  let seed = 42;
  const random = (n: number): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed % n;
  };

  const worker = async (): Promise<void> => {
    for (;;) {
      const key = await q.get();
      if (key === undefined) return;
      const now = (active.get(key) ?? 0) + 1;
      active.set(key, now);
      running++;
      maxPerKey = Math.max(maxPerKey, now);
      maxOverall = Math.max(maxOverall, running);
      seenAtStart.set(key, addCount.get(key) ?? 0);
      for (let ticks = random(4); ticks > 0; ticks--) await Promise.resolve();
      if (random(3) === 0) await flush();
      active.set(key, now - 1);
      running--;
      processed++;
      q.done(key);
    }
  };
  const workers = Array.from({ length: 4 }, worker);

  try {
    for (let i = 0; i < 3000; i++) {
      const key = keys[random(keys.length)]!;
      addCount.set(key, (addCount.get(key) ?? 0) + 1);
      q.add(key);
      if (random(5) === 0) await Promise.resolve();
      if (random(40) === 0) await flush();
    }
    for (let rounds = 0; running > 0 || q.len() > 0; rounds++) {
      assert.ok(rounds < 10_000, 'the workers never caught up');
      await flush();
    }
  } finally {
    // Stops the workers even when an assertion above failed, so a broken queue cannot keep them spinning.
    q.shutDown();
  }
  await Promise.all(workers);

  assert.equal(maxPerKey, 1, 'a key was processed by two workers at once');
  assert.ok(maxOverall > 1, 'the workers did run concurrently');
  assert.ok(processed < 3000, 'duplicate adds were coalesced');
  for (const key of keys) assert.equal(seenAtStart.get(key), addCount.get(key), `${key}'s last add was processed`);
});

test('addAfter releases items in ready-time order, and zero or negative delays add at once', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const q = queue({ now: () => Date.now() });
  q.addAfter('c', 30);
  q.addAfter('a', 10);
  q.addAfter('b', 20);
  q.addAfter('now', 0);
  q.addAfter('past', -5);
  assert.equal(q.len(), 2);
  const order: string[] = [];
  const drain = (): void => {
    // len() counts what a get would hand out synchronously; reading it keeps the test free of awaits.
    while (q.len() > 0) {
      void q.get().then((item) => {
        order.push(item!);
        q.done(item!);
      });
    }
  };
  drain();
  t.mock.timers.tick(9);
  assert.equal(q.len(), 0);
  t.mock.timers.tick(1);
  assert.equal(q.len(), 1);
  drain();
  t.mock.timers.tick(10);
  drain();
  t.mock.timers.tick(10);
  drain();
  return flush().then(() => assert.deepEqual(order, ['now', 'past', 'a', 'b', 'c']));
});

test('equal ready times keep the order of the addAfter calls', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const q = queue({ now: () => Date.now() });
  for (const item of ['x', 'y', 'z', 'w']) q.addAfter(item, 50);
  t.mock.timers.tick(50);
  assert.equal(q.len(), 4);
  return Promise.all([q.get(), q.get(), q.get(), q.get()]).then((items) => assert.deepEqual(items, ['x', 'y', 'z', 'w']));
});

test('a repeated addAfter keeps the earlier ready time and releases the item once', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const q = queue({ now: () => Date.now() });
  q.addAfter('earlier-second', 100);
  q.addAfter('earlier-second', 40);
  q.addAfter('earlier-first', 40);
  q.addAfter('earlier-first', 100);
  t.mock.timers.tick(39);
  assert.equal(q.len(), 0);
  t.mock.timers.tick(1);
  assert.equal(q.len(), 2);
  t.mock.timers.tick(200);
  assert.equal(q.len(), 2, 'the later duplicate was not released again');
});

test('addRateLimited delays by the limiter, counts retries, and forget resets them', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const limiter = fixedDelayLimiter<string>(25);
  let retries = 0;
  const metrics = recordingMetrics();
  metrics.retry = () => void retries++;
  const q = queue({ now: () => Date.now(), rateLimiter: limiter, metrics });
  q.addRateLimited('a');
  q.addRateLimited('a');
  assert.equal(q.numRequeues('a'), 2);
  assert.equal(retries, 2);
  t.mock.timers.tick(24);
  assert.equal(q.len(), 0);
  t.mock.timers.tick(1);
  assert.equal(q.len(), 1);
  q.forget('a');
  assert.equal(q.numRequeues('a'), 0);
});

test('shutDown wakes every waiting worker with undefined and refuses further work', async () => {
  const q = queue();
  const waiters = [watch(q.get()), watch(q.get())];
  q.shutDown();
  await flush();
  assert.deepEqual(waiters, [
    { settled: true, value: undefined },
    { settled: true, value: undefined },
  ]);
  assert.equal(q.shuttingDown(), true);
  q.add('late');
  q.addRateLimited('late');
  assert.equal(q.len(), 0);
  assert.equal(await take(q), undefined);
});

test('shutDown drops waiting and delayed items and clears the delay timer', async () => {
  const q = queue();
  const before = activeTimeouts();
  q.add('waiting');
  q.addAfter('delayed', 60_000);
  assert.equal(activeTimeouts(), before + 1);
  q.shutDown();
  assert.equal(activeTimeouts(), before, 'a pending delay would keep the process alive');
  assert.equal(q.len(), 0);
  assert.equal(await take(q), undefined);
});

test('get resolves undefined when its signal aborts, and the aborted waiter takes no item', async () => {
  const q = queue();
  const controller = new AbortController();
  const aborted = watch(q.get(controller.signal));
  controller.abort();
  await flush();
  assert.deepEqual(aborted, { settled: true, value: undefined });
  q.add('a');
  assert.equal(q.len(), 1, 'the item waits for a live worker');
  assert.equal(await q.get(AbortSignal.abort()), undefined);
  assert.equal(await q.get(new AbortController().signal), 'a');
});

test('shutDownWithDrain resolves only after in-flight items are done, and hands out nothing more', async () => {
  const q = queue();
  q.add('a');
  q.add('b');
  q.add('c');
  assert.equal(await take(q), 'a');
  assert.equal(await take(q), 'b');
  const drained = watch(q.shutDownWithDrain());
  await flush();
  assert.equal(drained.settled, false);
  assert.equal(await take(q), undefined, 'queued c is not handed out');
  q.done('a');
  q.add('a');
  await flush();
  assert.equal(drained.settled, false, 'b is still in flight');
  q.done('b');
  await flush();
  assert.equal(drained.settled, true);
  assert.equal(q.len(), 0);
});

test('shutDownWithDrain resolves at once when nothing is in flight', async () => {
  const q = queue();
  q.add('a');
  await q.shutDownWithDrain();
  assert.equal(q.shuttingDown(), true);
});

type Recorded = { hook: string; value?: number };

function recordingMetrics(): WorkQueueMetrics & { calls: Recorded[] } {
  const calls: Recorded[] = [];
  return {
    calls,
    add: () => void calls.push({ hook: 'add' }),
    depth: (_name, depth) => void calls.push({ hook: 'depth', value: depth }),
    queueLatency: (_name, seconds) => void calls.push({ hook: 'queueLatency', value: seconds }),
    workDuration: (_name, seconds) => void calls.push({ hook: 'workDuration', value: seconds }),
    retry: () => void calls.push({ hook: 'retry' }),
  };
}

test('metrics see accepted adds, every depth change, queue latency and work duration', async () => {
  let nowMs = 0;
  const names = new Set<string>();
  const metrics = recordingMetrics();
  const q = queue({
    name: 'widgets',
    now: () => nowMs,
    metrics: {
      ...metrics,
      add: (name) => {
        names.add(name);
        metrics.add(name);
      },
    },
  });
  q.add('a');
  q.add('a'); // a duplicate is not an accepted add
  nowMs = 5000;
  assert.equal(await take(q), 'a');
  nowMs = 7000;
  q.add('a'); // while in flight: counted, but depth is unchanged until done
  nowMs = 7500;
  q.done('a');
  nowMs = 8000;
  assert.equal(await take(q), 'a');
  nowMs = 8250;
  q.done('a');
  assert.deepEqual(metrics.calls, [
    { hook: 'add' },
    { hook: 'depth', value: 1 },
    { hook: 'depth', value: 0 },
    { hook: 'queueLatency', value: 5 },
    { hook: 'add' },
    { hook: 'workDuration', value: 2.5 },
    { hook: 'depth', value: 1 },
    { hook: 'depth', value: 0 },
    { hook: 'queueLatency', value: 1 },
    { hook: 'workDuration', value: 0.25 },
  ]);
  assert.deepEqual([...names], ['widgets']);
});

test('unfinished work is reported periodically while items are in flight, and stops after shutdown', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  let nowMs = 0;
  const reports: number[] = [];
  const q = queue({ now: () => nowMs, metrics: { ...recordingMetrics(), unfinishedWork: (_name, seconds) => void reports.push(seconds) } });
  q.add('a');
  q.add('b');
  await take(q);
  nowMs = 1000;
  await take(q);
  nowMs = 3000;
  t.mock.timers.tick(500);
  assert.deepEqual(reports, [3 + 2]);
  q.done('a');
  q.done('b');
  t.mock.timers.tick(500);
  assert.deepEqual(reports, [5, 0]);
  q.shutDown();
  t.mock.timers.tick(5000);
  assert.deepEqual(reports, [5, 0]);
});
