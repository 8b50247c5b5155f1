// The Redis CustomResourceDefinition, built from the TypeBox schema in redis.ts by the runtime's CRD tooling;
// what is the operator's own is here: names, scope, subresources and printer columns.
import { crdYAML, customResourceDefinition, schemaDataModule, type CustomResourceDefinition, type PrinterColumn, type SchemaNode } from '@quorum/runtime/crd';
import { BACKUP_KIND, BACKUP_LIST_KIND, BACKUP_PLURAL, BACKUP_SHORT_NAMES, BACKUP_SINGULAR } from './backup.ts';
import { RedisBackupSchema, RedisBackupSpecSchema } from './backup-schema.ts';
import { GROUP, KIND, LIST_KIND, PLURAL, SHORT_NAMES, SINGULAR, VERSION } from './redis.ts';
import { RedisSchema, RedisSpecSchema } from './redis-schema.ts';
import { SCHEDULE_KIND, SCHEDULE_LIST_KIND, SCHEDULE_PLURAL, SCHEDULE_SHORT_NAMES, SCHEDULE_SINGULAR } from './schedule.ts';
import { RedisBackupScheduleSchema } from './schedule-schema.ts';

/** The files the generator writes, relative to packages/redis-operator. */
export const CRD_FILE = `deploy/crds/${GROUP}_${PLURAL}.yaml`;
export const BACKUP_CRD_FILE = `deploy/crds/${GROUP}_${BACKUP_PLURAL}.yaml`;
export const SCHEDULE_CRD_FILE = `deploy/crds/${GROUP}_${SCHEDULE_PLURAL}.yaml`;
export const GENERATE_COMMAND = 'node packages/redis-operator/scripts/generate.ts';

export const PRINTER_COLUMNS: PrinterColumn[] = [
  { name: 'Engine', type: 'string', jsonPath: '.spec.engine', description: 'redis or valkey.' },
  { name: 'Version', type: 'string', jsonPath: '.spec.version', description: 'The server version.' },
  { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', description: 'Replicas of the primary.' },
  { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Instances (primary included) whose pod is Ready.' },
  { name: 'Primary', type: 'string', jsonPath: '.status.primary', description: 'The instance the `<name>` Service selects.' },
  { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Summary of the lifecycle.' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the Redis was created.' },
];

/**
 * A property with a default is always present once the API server has defaulted the object, so listing it as
 * required adds nothing, and would make a parent's own `default: {}` (spec, spec.sentinel…) fail validation
 * before its children's defaults fill it. The code validates the defaulted spec against the full schema.
 */
function withoutDefaultedRequired(node: SchemaNode): void {
  const props = node.properties ?? {};
  if (node.required) {
    const required = node.required.filter((key) => props[key]?.default === undefined);
    if (required.length > 0) node.required = required;
    else delete node.required;
  }
  for (const child of [...Object.values(props), ...(node.items ? [node.items] : [])]) withoutDefaultedRequired(child);
}

/** The CRD object, ready to apply (server-side apply or `kubectl apply -f`). */
export function redisCRD(): CustomResourceDefinition {
  const crd = customResourceDefinition({
    group: GROUP,
    names: { kind: KIND, listKind: LIST_KIND, plural: PLURAL, singular: SINGULAR, shortNames: SHORT_NAMES, categories: ['quorum'] },
    scope: 'Namespaced',
    labels: { 'app.kubernetes.io/name': 'quorum-redis', 'app.kubernetes.io/part-of': 'quorum' },
    versions: [{ name: VERSION, schema: RedisSchema, subresources: { status: {} }, printerColumns: PRINTER_COLUMNS }],
  });
  for (const version of crd.spec.versions) withoutDefaultedRequired(version.schema.openAPIV3Schema);
  return crd;
}

/** The CRD as the YAML file in deploy/crds: a generated-file header, then the object. */
export function redisCRDYAML(): string {
  return crdYAML(redisCRD(), { source: 'packages/redis-operator/src/api/redis-schema.ts', command: GENERATE_COMMAND });
}

export const BACKUP_PRINTER_COLUMNS: PrinterColumn[] = [
  { name: 'Redis', type: 'string', jsonPath: '.spec.redisName', description: 'The Redis backed up.' },
  { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Pending, Running, Succeeded or Failed.' },
  { name: 'Source', type: 'string', jsonPath: '.status.source', description: 'The instance the RDB was streamed from.' },
  { name: 'Size', type: 'integer', jsonPath: '.status.sizeBytes', description: 'Bytes stored.' },
  { name: 'Location', type: 'string', jsonPath: '.status.location', description: 'Where the RDB is.', priority: 1 },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the RedisBackup was created.' },
];

export function redisBackupCRD(): CustomResourceDefinition {
  return customResourceDefinition({
    group: GROUP,
    names: { kind: BACKUP_KIND, listKind: BACKUP_LIST_KIND, plural: BACKUP_PLURAL, singular: BACKUP_SINGULAR, shortNames: BACKUP_SHORT_NAMES, categories: ['quorum'] },
    scope: 'Namespaced',
    labels: { 'app.kubernetes.io/name': 'quorum-redis', 'app.kubernetes.io/part-of': 'quorum' },
    versions: [{ name: VERSION, schema: RedisBackupSchema, subresources: { status: {} }, printerColumns: BACKUP_PRINTER_COLUMNS }],
  });
}

export function redisBackupCRDYAML(): string {
  return crdYAML(redisBackupCRD(), { source: 'packages/redis-operator/src/api/backup-schema.ts', command: GENERATE_COMMAND });
}

export const SCHEDULE_PRINTER_COLUMNS: PrinterColumn[] = [
  { name: 'Redis', type: 'string', jsonPath: '.spec.redisName', description: 'The Redis backed up.' },
  { name: 'Schedule', type: 'string', jsonPath: '.spec.schedule', description: 'The cron expression (UTC).' },
  { name: 'Suspend', type: 'boolean', jsonPath: '.spec.suspend', description: 'Whether new backups are taken.' },
  { name: 'Last Schedule', type: 'date', jsonPath: '.status.lastScheduleTime', description: 'The scheduled time of the newest backup.' },
  { name: 'Last Success', type: 'date', jsonPath: '.status.lastSuccessfulTime', description: 'When the newest successful backup completed.' },
  { name: 'Active', type: 'string', jsonPath: '.status.active', description: 'The backup running now.', priority: 1 },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the RedisBackupSchedule was created.' },
];

export function redisBackupScheduleCRD(): CustomResourceDefinition {
  return customResourceDefinition({
    group: GROUP,
    names: { kind: SCHEDULE_KIND, listKind: SCHEDULE_LIST_KIND, plural: SCHEDULE_PLURAL, singular: SCHEDULE_SINGULAR, shortNames: SCHEDULE_SHORT_NAMES, categories: ['quorum'] },
    scope: 'Namespaced',
    labels: { 'app.kubernetes.io/name': 'quorum-redis', 'app.kubernetes.io/part-of': 'quorum' },
    versions: [{ name: VERSION, schema: RedisBackupScheduleSchema, subresources: { status: {} }, printerColumns: SCHEDULE_PRINTER_COLUMNS }],
  });
}

export function redisBackupScheduleCRDYAML(): string {
  return crdYAML(redisBackupScheduleCRD(), { source: 'packages/redis-operator/src/api/schedule-schema.ts', command: GENERATE_COMMAND });
}

/** The Redis and RedisBackup specs' schemas as data (schema-data.ts), relative to packages/redis-operator. */
export const SCHEMA_DATA_FILE = 'src/api/schema-data.ts';

/** schema-data.ts: what defaults.ts reads at run time (defaults, validation) without building the schemas. */
export function schemaDataSource(): string {
  return schemaDataModule({ RedisSpecSchemaData: RedisSpecSchema as SchemaNode, RedisBackupSpecSchemaData: RedisBackupSpecSchema as SchemaNode }, GENERATE_COMMAND, 'packages/redis-operator/src/api/redis-schema.ts and backup-schema.ts');
}
