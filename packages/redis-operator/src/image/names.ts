// The server image's name, apart from its assembly (redis.ts and valkey.ts, build-time modules that load
// @quorum/images), so that the operator process names images without loading what builds them.
import { DEFAULT_VERSION } from '../api/redis.ts';

/** The reference pods run; the tag is the upstream version, as users of the Redis images are used to. */
export const redisImage = (version: string = DEFAULT_VERSION): string => `quorum.dev/redis:${version}`;

/** The image of an engine (`redis`, `valkey`) at a version: `quorum.dev/<engine>:<version>`. */
export const serverImage = (engine: string, version: string): string => `quorum.dev/${engine}:${version}`;
