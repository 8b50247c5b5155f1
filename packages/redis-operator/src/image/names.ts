// The server image's name, apart from its assembly (redis.ts, a build-time module that loads @quorum/images),
// so that the operator process names images without loading what builds them.
import { DEFAULT_VERSION } from '../api/redis.ts';

/** The reference pods run; the tag is the upstream version, as users of the Redis images are used to. */
export const redisImage = (version: string = DEFAULT_VERSION): string => `quorum.dev/redis:${version}`;
