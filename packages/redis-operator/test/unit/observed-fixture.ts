// The planner's input for the unit tests: a Redis `cache` in namespace `ns` (1 primary, 2 replicas, 3 Sentinels by
// the defaults) with its Services and claims made and nothing else observed; each test adds what it reads.
import { applyDefaults } from '../../src/api/defaults.ts';
import type { Observed, PodFacts } from '../../src/plan/types.ts';
import { redisConf, sentinelConf } from '../../src/render/config.ts';

export const host = (pod: string): string => `${pod}.cache-headless.ns.svc`;

/** What pods made from the spec carry (the config-hash annotation), by component. */
export const HASH = { redis: 'redis-hash', sentinel: 'sentinel-hash' };

export const pod = (name: string, over: Partial<PodFacts> = {}): [string, PodFacts] => {
  const component = name.includes('sentinel') ? 'sentinel' : 'redis';
  return [name, { name, component, phase: 'Running', ready: true, deleting: false, hash: HASH[component], ...over }];
};

export function observed(spec: unknown = {}, over: Partial<Observed> = {}): Observed {
  const s = applyDefaults(spec);
  const desired = { redisConf: redisConf(s), sentinelConf: (p: string) => sentinelConf('cache', s, host(p)) };
  return {
    redis: 'cache',
    namespace: 'ns',
    spec: s,
    auth: 'ok',
    config: { redisConf: desired.redisConf, sentinelConf: desired.sentinelConf('cache-0'), primary: 'cache-0' },
    desired,
    services: new Set(['cache', 'cache-replicas', 'cache-sentinel', 'cache-headless']),
    missingServices: [],
    claims: new Set(['data-cache-0', 'data-cache-1', 'data-cache-2']),
    pods: new Map(),
    instances: new Map(),
    sentinels: new Map(),
    desiredHash: { redis: HASH.redis, sentinel: HASH.sentinel },
    rollout: {},
    ...over,
  };
}
