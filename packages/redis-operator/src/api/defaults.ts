// A Redis spec as the operator uses it: the schema's defaults applied in code (the object may predate a
// default, or the CRD may be older than this code), and each CEL rule mirrored under the same message, with
// the offending field named (a refused config directive by its own path, e.g. spec.config.replicaof).
import { destinationIssues, endpointAllowed, ENDPOINT_RULE, peerSelectorsWellFormed } from '@quorum/kit';
import { applySchemaDefaults, validateAgainstSchema } from '@quorum/runtime/crd';
import { BACKUP_RULES, type RedisBackupSpec } from './backup.ts';
import { ALLOWED_CONFIG, ENGINES, RULES, STRUCTURED_CONFIG, SUPPORTED_VERSIONS, type RedisSpec } from './redis.ts';
import { RedisBackupSpecSchemaData, RedisSpecSchemaData } from './schema-data.ts';

/** The spec after defaulting: minReplicasToWrite resolved too (1 with replicas, else 0). */
export type DefaultedSpec = RedisSpec & { minReplicasToWrite: number };

export function applyDefaults(spec: unknown): DefaultedSpec {
  const defaulted = applySchemaDefaults(RedisSpecSchemaData, spec ?? {}) as RedisSpec;
  return { ...defaulted, minReplicasToWrite: defaulted.minReplicasToWrite ?? (defaulted.replicas > 0 ? 1 : 0) };
}

/** Why each refused config directive is refused, by its path (the schema's enum says only what is allowed). */
export function configErrors(config: readonly { name: string }[] | undefined): string[] {
  const allowed: readonly string[] = ALLOWED_CONFIG;
  return (config ?? []).flatMap(({ name }, i) => {
    if (allowed.includes(name)) return [];
    const field = STRUCTURED_CONFIG[name];
    const why = field !== undefined ? `set ${field} instead` : 'the operator manages it, or it could break management';
    return [`spec.config[${i}].name ${JSON.stringify(name)} is not allowed: ${why}`];
  });
}

/**
 * Every problem with `spec`, schema and CEL rules alike, each message starting with the field it is about;
 * `old` is the stored spec on an update (for the transition rules).
 */
export function validateSpec(spec: DefaultedSpec, old?: DefaultedSpec): string[] {
  // The enum's own message for a refused directive is replaced by configErrors' (which says why).
  const errors = validateAgainstSchema(RedisSpecSchemaData, spec, ['spec']).filter((i) => !/^spec\.config\[\d+\]\.name /.test(i.message)).map((i) => i.message);
  if (ENGINES.includes(spec.engine) && !SUPPORTED_VERSIONS[spec.engine].includes(spec.version)) errors.push(RULES.supportedVersion.message);
  if (spec.minReplicasToWrite > spec.replicas) errors.push(RULES.minReplicasToWrite.message);
  errors.push(...configErrors(spec.config));
  if (spec.bootstrap !== undefined && spec.persistence.aof) errors.push(RULES.bootstrapWithoutAof.message);
  if (old !== undefined && old.engine === 'valkey' && spec.engine === 'redis') errors.push(RULES.engineForward.message);
  if (old !== undefined && JSON.stringify(spec.bootstrap) !== JSON.stringify(old.bootstrap)) errors.push(RULES.bootstrapImmutable.message);
  if (spec.tls.disabled === true && spec.tls.secretName !== undefined) errors.push(RULES.tlsOneSource.message);
  for (const user of spec.users ?? []) {
    if (user.name === 'default') errors.push(RULES.userNotDefault.message);
    if (/(^| )(nopass|resetpass|reset|off)( |$)/.test(user.rules)) errors.push(RULES.userRulesNoPassword.message);
  }
  if (!(spec.network?.clientsFrom ?? []).every(peerSelectorsWellFormed)) errors.push(RULES.selectorValues.message);
  if (old !== undefined && (spec.tls.disabled === true) !== (old.tls.disabled === true)) errors.push(RULES.tlsStaysOn.message);
  if (old !== undefined && (spec.storage.size !== old.storage.size || spec.storage.storageClassName !== old.storage.storageClassName)) {
    errors.push(RULES.storageImmutable.message);
  }
  return [...new Set(errors)];
}

/**
 * Every problem with a RedisBackup's spec (defaulted first: the destination's prefix), each message starting with
 * the field it is about; `old` is the stored spec on an update. The CEL rules of the destination (exactly one
 * kind, https endpoints) are mirrored under their messages.
 */
export function validateBackupSpec(spec: unknown, old?: unknown): { spec: RedisBackupSpec; errors: string[] } {
  const defaulted = applySchemaDefaults(RedisBackupSpecSchemaData, spec ?? {}) as RedisBackupSpec;
  const errors = validateAgainstSchema(RedisBackupSpecSchemaData, defaulted, ['spec']).map((i) => i.message);
  const destination = defaulted.destination as Record<string, unknown> | undefined;
  if (destination !== undefined && typeof destination === 'object') errors.push(...destinationIssues(destination, ['spec', 'destination']).map((i) => `spec.destination: ${i.message}`));
  for (const kind of ['s3', 'gcs', 'azure'] as const) {
    const endpoint = defaulted.destination?.[kind]?.endpoint;
    if (endpoint !== undefined && !endpointAllowed(endpoint)) errors.push(`spec.destination.${kind}.endpoint: ${ENDPOINT_RULE.message}`);
  }
  if (old !== undefined && JSON.stringify(spec) !== JSON.stringify(old)) errors.push(BACKUP_RULES.specImmutable.message);
  return { spec: defaulted, errors: [...new Set(errors)] };
}

