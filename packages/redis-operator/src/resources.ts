// Where the operator's kind lives in the API, for the runtime's typed client and informers.
import { resource, type KubeObject } from '@quorum/runtime';
import { API_VERSION, KIND, PLURAL, type RedisStatus } from './api/redis.ts';

/** A Redis as read from the API: the spec is defaulted and validated in code before use (api/defaults.ts). */
export type RedisObject = KubeObject & { spec?: unknown; status?: RedisStatus };

export const Redises = resource<RedisObject>(API_VERSION, KIND, PLURAL, true);
