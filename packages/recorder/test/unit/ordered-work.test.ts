// Writes in order per object, in parallel across objects, retried in place when they fail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OrderedWork } from '../../src/recorder/ordered-work.ts';

const tick = (ms = 1): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const fastBackoff = { initialMs: 1, maxMs: 2, jitter: 0 };

test('jobs of one key run one after another in order; other keys run meanwhile, up to the limit', async () => {
  const log: string[] = [];
  let running = 0;
  let most = 0;
  const work = new OrderedWork({ concurrency: 2, onFailure: () => undefined, backoff: fastBackoff });
  const job = (name: string, ms: number) => async (): Promise<void> => {
    running++;
    most = Math.max(most, running);
    log.push(`start ${name}`);
    await tick(ms);
    log.push(`end ${name}`);
    running--;
  };
  work.add('a', job('a1', 20));
  work.add('a', job('a2', 1));
  work.add('b', job('b1', 5));
  work.add('c', job('c1', 1));
  assert.equal(work.pending, 4);
  await work.idle();
  assert.equal(most, 2, 'never more than the limit at once');
  assert.ok(log.indexOf('end a1') < log.indexOf('start a2'), 'a2 waits for a1');
  assert.ok(log.indexOf('start b1') < log.indexOf('end a1'), 'b does not wait for a');
  assert.equal(work.pending, 0);
});

test('a failing job is retried before anything after it of the same key, and its failures are told', async () => {
  const done: string[] = [];
  const failures: string[] = [];
  let recovered = 0;
  let attempts = 0;
  const work = new OrderedWork({ concurrency: 4, onFailure: (key, err) => failures.push(`${key}: ${(err as Error).message}`), onRecovery: () => recovered++, backoff: fastBackoff });
  work.add('a', () => {
    attempts++;
    if (attempts < 3) return Promise.reject(new Error('ENOSPC'));
    done.push('a1');
    return Promise.resolve();
  });
  work.add('a', () => Promise.resolve(void done.push('a2')));
  await work.idle();
  assert.deepEqual(done, ['a1', 'a2']);
  assert.deepEqual(failures, ['a: ENOSPC', 'a: ENOSPC']);
  assert.equal(recovered, 1);
});

test('stop drops what is queued, lets the running job finish, and takes nothing more', async () => {
  const done: string[] = [];
  const work = new OrderedWork({ concurrency: 1, onFailure: () => undefined, backoff: fastBackoff });
  work.add('a', async () => {
    await tick(10);
    done.push('a1');
  });
  work.add('a', () => Promise.resolve(void done.push('a2')));
  work.add('b', () => Promise.resolve(void done.push('b1')));
  await tick(1);
  await work.stop();
  work.add('c', () => Promise.resolve(void done.push('c1')));
  await work.idle();
  assert.deepEqual(done, ['a1']);
});

test('stop interrupts a job waiting to be retried', async () => {
  const work = new OrderedWork({ concurrency: 1, onFailure: () => undefined, backoff: { initialMs: 60_000, jitter: 0 } });
  work.add('a', () => Promise.reject(new Error('EIO')));
  await tick(5);
  const started = Date.now();
  await work.stop();
  assert.ok(Date.now() - started < 1000);
});

test('pending counts jobs queued and running, down as they finish or are dropped; whenBelow resolves when it is short enough', async () => {
  const work = new OrderedWork({ concurrency: 1, onFailure: () => undefined, backoff: fastBackoff });
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  work.add('a', () => gate);
  for (const key of ['a', 'b', 'c']) work.add(key, () => Promise.resolve());
  assert.equal(work.pending, 4);
  let below = false;
  void work.whenBelow(1).then(() => (below = true));
  await tick(5);
  assert.equal(below, false, 'four waiting: not yet');
  release();
  await work.idle();
  assert.equal(work.pending, 0);
  assert.equal(below, true);
  work.add('d', () => new Promise(() => undefined));
  work.add('d', () => Promise.resolve());
  await tick(1);
  void work.stop();
  await tick(1);
  assert.equal(work.pending, 1, 'the queued job dropped, the running one still counted');
});
