// Rate limiters follow client-go's workqueue: per-item exponential backoff, a global token bucket, and max-of.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ExponentialBackoffRateLimiter,
  MaxOfRateLimiter,
  TokenBucketRateLimiter,
  defaultControllerRateLimiter,
  type RateLimiter,
} from '../../src/queue/index.ts';

test('exponential backoff doubles from the base delay and stops at the maximum', () => {
  const limiter = new ExponentialBackoffRateLimiter<string>({ baseDelayMs: 5, maxDelayMs: 100 });
  const delays = Array.from({ length: 8 }, () => limiter.when('a'));
  assert.deepEqual(delays, [5, 10, 20, 40, 80, 100, 100, 100]);
  assert.equal(limiter.retries('a'), 8);
});

test('exponential backoff defaults to 5 ms doubling up to 1000 s, and stays finite after many failures', () => {
  const limiter = new ExponentialBackoffRateLimiter<string>();
  assert.deepEqual([limiter.when('a'), limiter.when('a'), limiter.when('a'), limiter.when('a')], [5, 10, 20, 40]);
  let last = 0;
  for (let i = 0; i < 2000; i++) last = limiter.when('a');
  assert.equal(last, 1_000_000);
});

test('exponential backoff counts each item separately and forget resets only that item', () => {
  const limiter = new ExponentialBackoffRateLimiter<string>({ baseDelayMs: 1, maxDelayMs: 1000 });
  limiter.when('a');
  limiter.when('a');
  limiter.when('a');
  assert.equal(limiter.when('b'), 1);
  assert.equal(limiter.retries('a'), 3);
  limiter.forget('a');
  assert.equal(limiter.retries('a'), 0);
  assert.equal(limiter.when('a'), 1);
  assert.equal(limiter.retries('b'), 1);
});

test('the token bucket lets a burst through, then spaces reservations at 1/qps', () => {
  let nowMs = 0;
  const limiter = new TokenBucketRateLimiter<string>({ qps: 10, burst: 100, now: () => nowMs });
  for (let i = 0; i < 100; i++) assert.equal(limiter.when(`item-${i}`), 0, `reservation ${i} is within the burst`);
  assert.deepEqual([limiter.when('x'), limiter.when('y'), limiter.when('z')], [100, 200, 300]);

  // One second refills 10 tokens; 3 of them pay back the reservations above.
  nowMs += 1000;
  for (let i = 0; i < 7; i++) assert.equal(limiter.when(`later-${i}`), 0);
  assert.equal(limiter.when('over'), 100);
  assert.equal(limiter.retries('over'), 0);
});

test('the token bucket refills no more than its burst, and a clock stepping back mints nothing', () => {
  let nowMs = 1_000;
  const limiter = new TokenBucketRateLimiter<string>({ qps: 2, burst: 3, now: () => nowMs });
  assert.deepEqual([limiter.when('a'), limiter.when('a'), limiter.when('a'), limiter.when('a')], [0, 0, 0, 500]);
  nowMs += 3_600_000;
  assert.deepEqual([limiter.when('a'), limiter.when('a'), limiter.when('a'), limiter.when('a')], [0, 0, 0, 500]);
  nowMs -= 10_000;
  assert.equal(limiter.when('a'), 1000);
  limiter.forget('a'); // no per-item state, so nothing to forget
  assert.equal(limiter.when('a'), 1500);
});

test('the token bucket rejects settings that could never hand out a token', () => {
  assert.throws(() => new TokenBucketRateLimiter({ qps: 0 }), RangeError);
  assert.throws(() => new TokenBucketRateLimiter({ burst: 0 }), RangeError);
});

class RecordingLimiter implements RateLimiter<string> {
  readonly forgotten: string[] = [];
  whenCalls = 0;
  readonly #delayMs: number;
  readonly #retries: number;

  constructor(delayMs: number, retries: number) {
    this.#delayMs = delayMs;
    this.#retries = retries;
  }

  when(_item: string): number {
    this.whenCalls++;
    return this.#delayMs;
  }

  forget(item: string): void {
    this.forgotten.push(item);
  }

  retries(_item: string): number {
    return this.#retries;
  }
}

test('max-of returns the longest delay and the most retries, and consults every limiter', () => {
  const short = new RecordingLimiter(10, 7);
  const long = new RecordingLimiter(250, 2);
  const limiter = new MaxOfRateLimiter(short, long);
  assert.equal(limiter.when('a'), 250);
  assert.equal(short.whenCalls, 1);
  assert.equal(long.whenCalls, 1);
  assert.equal(limiter.retries('a'), 7);
  limiter.forget('a');
  assert.deepEqual(short.forgotten, ['a']);
  assert.deepEqual(long.forgotten, ['a']);
});

test('max-of combines real limiters: per-item backoff until the shared bucket runs dry', () => {
  const limiter = new MaxOfRateLimiter<string>(
    new ExponentialBackoffRateLimiter({ baseDelayMs: 5, maxDelayMs: 1_000_000 }),
    new TokenBucketRateLimiter({ qps: 10, burst: 2, now: () => 0 }),
  );
  assert.equal(limiter.when('a'), 5);
  assert.equal(limiter.when('a'), 10);
  assert.equal(limiter.when('b'), 100); // bucket empty: 1/qps beats b's first backoff
  assert.equal(limiter.retries('a'), 2);
  limiter.forget('a');
  assert.equal(limiter.retries('a'), 0);
});

test("the default controller limiter backs off per item from 5 ms and is capped globally at 10 qps after a burst of 100", () => {
  const limiter = defaultControllerRateLimiter<string>();
  assert.deepEqual([limiter.when('a'), limiter.when('a'), limiter.when('a')], [5, 10, 20]);
  for (let i = 0; i < 97; i++) limiter.when(`item-${i}`);
  // The bucket is empty now; its next token is ~100 ms away (less whatever real time the loop above took).
  const delayMs = limiter.when('fresh');
  assert.ok(delayMs > 50 && delayMs <= 100, `delay ${delayMs} ms`);
  limiter.forget('a');
  assert.equal(limiter.retries('a'), 0);
});
