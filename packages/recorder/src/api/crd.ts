// The ChangeRecorder CustomResourceDefinition, built from the TypeBox schema in schema.ts by the runtime's CRD
// tooling; what is the recorder's own is here: names, scope, subresources and printer columns. And the spec's
// schema as data (schema-data.ts), which the recorder's defaulting reads at run time.
import { crdYAML, customResourceDefinition, schemaDataModule, type CustomResourceDefinition, type PrinterColumn, type SchemaNode } from '@quorum/runtime/crd';
import { GROUP, KIND, LIST_KIND, PLURAL, SHORT_NAMES, SINGULAR, VERSION } from './changerecorder.ts';
import { ChangeRecorderSchema, ChangeRecorderSpecSchema } from './schema.ts';

/** The file the generator writes, relative to packages/recorder. */
export const CRD_FILE = `deploy/crds/${GROUP}_${PLURAL}.yaml`;
export const GENERATE_COMMAND = 'node packages/recorder/scripts/generate.ts';
/** The spec's schema as data, relative to packages/recorder. */
export const SCHEMA_DATA_FILE = 'src/api/schema-data.ts';

export const PRINTER_COLUMNS: PrinterColumn[] = [
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status', description: 'Whether every kind asked for is served and being recorded.' },
  { name: 'Objects', type: 'integer', jsonPath: '.status.objects', description: 'Objects being watched.' },
  { name: 'Records', type: 'integer', jsonPath: '.status.records', description: 'Records kept in storage.' },
  { name: 'Last Record', type: 'date', jsonPath: '.status.lastRecordTime', description: 'When the newest record was written.' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the recorder was created.' },
];

/** The CRD object, ready to apply. */
export function changeRecorderCRD(): CustomResourceDefinition {
  return customResourceDefinition({
    group: GROUP,
    names: { kind: KIND, listKind: LIST_KIND, plural: PLURAL, singular: SINGULAR, shortNames: SHORT_NAMES, categories: ['quorum'] },
    // Cluster-scoped: one recorder may watch many namespaces, which a namespaced object should not grant.
    scope: 'Cluster',
    labels: { 'app.kubernetes.io/name': 'quorum-recorder', 'app.kubernetes.io/part-of': 'quorum' },
    versions: [{ name: VERSION, schema: ChangeRecorderSchema, subresources: { status: {} }, printerColumns: PRINTER_COLUMNS }],
  });
}

/** The CRD as the YAML file in deploy/crds: a generated-file header, then the object. */
export function changeRecorderCRDYAML(): string {
  return crdYAML(changeRecorderCRD(), { source: 'packages/recorder/src/api/schema.ts', command: GENERATE_COMMAND });
}

/** schema-data.ts: the spec's schema as a plain object, for applyDefaults without TypeBox at run time. */
export function schemaDataSource(): string {
  return schemaDataModule({ ChangeRecorderSpecSchemaData: ChangeRecorderSpecSchema as SchemaNode }, GENERATE_COMMAND, 'packages/recorder/src/api/schema.ts');
}
