// Polling for conditions that take time: localkube waits with the runtime's own `eventually` (its testing
// entry, which depends on no test cluster), so the two never drift apart.
export { eventually, type EventuallyOptions } from '@quorum/runtime/testing';
