// The work queue and the rate limiters that pace its retries.
export {
  ExponentialBackoffRateLimiter,
  MaxOfRateLimiter,
  TokenBucketRateLimiter,
  defaultControllerRateLimiter,
  type ExponentialBackoffOptions,
  type RateLimiter,
  type TokenBucketOptions,
} from './rate-limiter.ts';
export { WorkQueue, noopMetrics, type WorkQueueMetrics, type WorkQueueOptions } from './workqueue.ts';
