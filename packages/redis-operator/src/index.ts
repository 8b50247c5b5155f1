// @quorum/redis-operator: Redis (and, later, Valkey) as a service (issue 21). The Redis API, the pure planner,
// the reconciler and operator, the manifests and the CLI commands.
export * from './api/redis.ts';
export * from './api/redis-schema.ts';
export { redisCRD, redisCRDYAML } from './api/crd.ts';
export { applyDefaults, validateSpec, type DefaultedSpec } from './api/defaults.ts';
export { Redises, type RedisObject } from './resources.ts';
export { plan } from './plan/plan.ts';
export type { Action, Observed } from './plan/types.ts';
export { createRedisOperator, type RedisOperatorOptions } from './operator/operator.ts';
export { operatorManifests, OPERATOR_IMAGE, type ManifestOptions } from './deploy/manifests.ts';
export { install, uninstall, type InstallOptions } from './deploy/install.ts';
export { redisImage, serverImage } from './image/names.ts';
export { commands } from './cli/commands.ts';
