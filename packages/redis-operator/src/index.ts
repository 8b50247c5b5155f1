// @quorum/redis-operator: Redis and Valkey as a service (issue 21).
export {};
