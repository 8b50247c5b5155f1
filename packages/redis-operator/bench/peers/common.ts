// What every peer's Redis shares with Quorum's defaults, so that the peers differ only in how they manage Redis.
import { DEFAULT_DOWN_AFTER_MS, DEFAULT_FAILOVER_TIMEOUT_MS, DEFAULT_STORAGE_SIZE } from '../../src/api/redis.ts';

/** One claim per instance of Quorum's default size, on the default StorageClass. */
export const PEER_STORAGE_SIZE = DEFAULT_STORAGE_SIZE;
/** Sentinel's down-after-milliseconds and failover-timeout: Quorum's defaults, for every peer. */
export const PEER_DOWN_AFTER_MS = DEFAULT_DOWN_AFTER_MS;
export const PEER_FAILOVER_TIMEOUT_MS = DEFAULT_FAILOVER_TIMEOUT_MS;
/** The image's non-root user; fsGroup makes the claims writable to it. */
export const PEER_POD_SECURITY = { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532 } as const;
