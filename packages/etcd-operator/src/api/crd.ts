// The EtcdCluster CustomResourceDefinition, built from the TypeBox schemas in etcdcluster-schema.ts (and the other kinds' -schema.ts) by the runtime's
// CRD tooling; what is the operator's own is here: names, scope, subresources and printer columns.
import { crdYAML, customResourceDefinition, schemaDataModule, type CustomResourceDefinition, type PrinterColumn, type SchemaNode } from '@quorum/runtime/crd';
import { BACKUP_KIND, BACKUP_LIST_KIND, BACKUP_PLURAL, BACKUP_SHORT_NAMES, BACKUP_SINGULAR } from './etcdbackup.ts';
import { EtcdBackupSchema } from './etcdbackup-schema.ts';
import { SCHEDULE_KIND, SCHEDULE_LIST_KIND, SCHEDULE_PLURAL, SCHEDULE_SHORT_NAMES, SCHEDULE_SINGULAR } from './etcdbackupschedule.ts';
import { EtcdBackupScheduleSchema } from './etcdbackupschedule-schema.ts';
import { GROUP, KIND, LIST_KIND, PLURAL, SHORT_NAMES, SINGULAR, VERSION } from './etcdcluster.ts';
import { EtcdClusterSchema, EtcdClusterSpecSchema } from './etcdcluster-schema.ts';
import { RESTORE_KIND, RESTORE_LIST_KIND, RESTORE_PLURAL, RESTORE_SHORT_NAMES, RESTORE_SINGULAR } from './etcdrestore.ts';
import { EtcdRestoreSchema } from './etcdrestore-schema.ts';

/** The files the generator writes, relative to packages/etcd-operator. */
export const CRD_FILE = `deploy/crds/${GROUP}_${PLURAL}.yaml`;
export const BACKUP_CRD_FILE = `deploy/crds/${GROUP}_${BACKUP_PLURAL}.yaml`;
export const SCHEDULE_CRD_FILE = `deploy/crds/${GROUP}_${SCHEDULE_PLURAL}.yaml`;
export const RESTORE_CRD_FILE = `deploy/crds/${GROUP}_${RESTORE_PLURAL}.yaml`;
export const GENERATE_COMMAND = 'node packages/etcd-operator/scripts/generate.ts';

export const PRINTER_COLUMNS: PrinterColumn[] = [
  { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', description: 'Desired number of members.' },
  { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Members that are ready.' },
  { name: 'Version', type: 'string', jsonPath: '.status.currentVersion', description: 'The etcd version every member runs (the old one until a rolling update is done).' },
  { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Summary of the cluster lifecycle.' },
  { name: 'Leader', type: 'string', jsonPath: '.status.leader', description: 'Member that is the raft leader.', priority: 1 },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the cluster was created.' },
];

/** The CRD object, ready to apply (server-side apply or `kubectl apply -f`). */
export function etcdClusterCRD(): CustomResourceDefinition {
  return customResourceDefinition({
    group: GROUP,
    names: { kind: KIND, listKind: LIST_KIND, plural: PLURAL, singular: SINGULAR, shortNames: SHORT_NAMES, categories: ['quorum'] },
    scope: 'Namespaced',
    labels: { 'app.kubernetes.io/name': 'quorum', 'app.kubernetes.io/part-of': 'quorum' },
    versions: [
      {
        name: VERSION,
        schema: EtcdClusterSchema,
        // No labelSelectorPath: the HorizontalPodAutoscaler has no business resizing a consensus cluster.
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
        printerColumns: PRINTER_COLUMNS,
      },
    ],
  });
}

/** The CRD as the YAML file in deploy/crds: a generated-file header, then the object. */
export function etcdClusterCRDYAML(): string {
  return crdYAML(etcdClusterCRD(), { source: 'packages/etcd-operator/src/api/etcdcluster-schema.ts', command: GENERATE_COMMAND });
}

export const BACKUP_PRINTER_COLUMNS: PrinterColumn[] = [
  { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'The EtcdCluster backed up.' },
  { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Pending, Running, Succeeded or Failed.' },
  { name: 'Size', type: 'integer', jsonPath: '.status.sizeBytes', description: 'Size of the stored snapshot in bytes.' },
  { name: 'Revision', type: 'integer', jsonPath: '.status.revision', description: 'Every write up to this revision is in the snapshot.' },
  { name: 'Location', type: 'string', jsonPath: '.status.location', description: 'Where the snapshot is stored.', priority: 1 },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the backup was created.' },
];

export function etcdBackupCRD(): CustomResourceDefinition {
  return customResourceDefinition({
    group: GROUP,
    names: { kind: BACKUP_KIND, listKind: BACKUP_LIST_KIND, plural: BACKUP_PLURAL, singular: BACKUP_SINGULAR, shortNames: BACKUP_SHORT_NAMES, categories: ['quorum'] },
    scope: 'Namespaced',
    labels: { 'app.kubernetes.io/name': 'quorum', 'app.kubernetes.io/part-of': 'quorum' },
    versions: [{ name: VERSION, schema: EtcdBackupSchema, subresources: { status: {} }, printerColumns: BACKUP_PRINTER_COLUMNS }],
  });
}

export function etcdBackupCRDYAML(): string {
  return crdYAML(etcdBackupCRD(), { source: 'packages/etcd-operator/src/api/etcdbackup-schema.ts', command: GENERATE_COMMAND });
}

export const SCHEDULE_PRINTER_COLUMNS: PrinterColumn[] = [
  { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'The EtcdCluster backed up.' },
  { name: 'Schedule', type: 'string', jsonPath: '.spec.schedule', description: 'The cron expression (UTC).' },
  { name: 'Suspend', type: 'boolean', jsonPath: '.spec.suspend', description: 'Whether new backups are suspended.' },
  { name: 'Active', type: 'string', jsonPath: '.status.active', description: 'The backup running now.', priority: 1 },
  { name: 'Last Success', type: 'date', jsonPath: '.status.lastSuccessfulTime', description: 'Time since the newest successful backup completed.' },
  { name: 'Next', type: 'string', jsonPath: '.status.nextScheduleTime', description: 'The next scheduled time.', priority: 1 },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the schedule was created.' },
];

export function etcdBackupScheduleCRD(): CustomResourceDefinition {
  return customResourceDefinition({
    group: GROUP,
    names: { kind: SCHEDULE_KIND, listKind: SCHEDULE_LIST_KIND, plural: SCHEDULE_PLURAL, singular: SCHEDULE_SINGULAR, shortNames: SCHEDULE_SHORT_NAMES, categories: ['quorum'] },
    scope: 'Namespaced',
    labels: { 'app.kubernetes.io/name': 'quorum', 'app.kubernetes.io/part-of': 'quorum' },
    versions: [{ name: VERSION, schema: EtcdBackupScheduleSchema, subresources: { status: {} }, printerColumns: SCHEDULE_PRINTER_COLUMNS }],
  });
}

export function etcdBackupScheduleCRDYAML(): string {
  return crdYAML(etcdBackupScheduleCRD(), { source: 'packages/etcd-operator/src/api/etcdbackupschedule-schema.ts', command: GENERATE_COMMAND });
}

export const RESTORE_PRINTER_COLUMNS: PrinterColumn[] = [
  { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'The EtcdCluster the restore creates.' },
  { name: 'Backup', type: 'string', jsonPath: '.spec.backupName', description: 'The EtcdBackup restored (unset when restoring a key).' },
  { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Pending, Restoring, Succeeded or Failed.' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the restore was created.' },
];

export function etcdRestoreCRD(): CustomResourceDefinition {
  return customResourceDefinition({
    group: GROUP,
    names: { kind: RESTORE_KIND, listKind: RESTORE_LIST_KIND, plural: RESTORE_PLURAL, singular: RESTORE_SINGULAR, shortNames: RESTORE_SHORT_NAMES, categories: ['quorum'] },
    scope: 'Namespaced',
    labels: { 'app.kubernetes.io/name': 'quorum', 'app.kubernetes.io/part-of': 'quorum' },
    versions: [{ name: VERSION, schema: EtcdRestoreSchema, subresources: { status: {} }, printerColumns: RESTORE_PRINTER_COLUMNS }],
  });
}

export function etcdRestoreCRDYAML(): string {
  return crdYAML(etcdRestoreCRD(), { source: 'packages/etcd-operator/src/api/etcdrestore-schema.ts', command: GENERATE_COMMAND });
}

/** The EtcdCluster's spec and metadata schemas as data (schema-data.ts), relative to packages/etcd-operator. */
export const SCHEMA_DATA_FILE = 'src/api/schema-data.ts';

/** schema-data.ts: what defaults.ts reads at run time (defaults, validation) without building the schemas. */
export function schemaDataSource(): string {
  const metadata = (EtcdClusterSchema as SchemaNode).properties?.['metadata'];
  if (metadata === undefined) throw new Error('the EtcdCluster schema has no metadata node');
  return schemaDataModule({ EtcdClusterSpecSchemaData: EtcdClusterSpecSchema as SchemaNode, EtcdClusterMetadataSchemaData: metadata }, GENERATE_COMMAND, 'packages/etcd-operator/src/api/etcdcluster-schema.ts');
}
