// @quorum/runtime/crd: the kind-independent part of declaring a Kubernetes API from a schema. An operator
// keeps its schema, CEL rules, names and printer columns; this builds the CRD and its YAML, applies the
// schema's defaults and validates against it as the API server does, and writes the API reference tables.
export {
  applySchemaDefaults,
  deepEqual,
  formatPath,
  isPlainObject,
  issue,
  validateAgainstSchema,
  valueAt,
  type CelRule,
  type FieldError,
  type Issue,
  type Path,
  type SchemaNode,
} from './schema.ts';
export {
  crdYAML,
  customResourceDefinition,
  storageVersion,
  toOpenAPI,
  type CRDOptions,
  type CRDVersionOptions,
  type CustomResourceDefinition,
  type GeneratedFrom,
  type PrinterColumn,
  type ScaleSubresource,
  type Subresources,
} from './definition.ts';
export { conditionSchema } from './condition.ts';
export { cell, celRulesTable, code, conditionReasonsTable, fieldTable, printerColumnsTable, prose, schemaReference, type ConstraintKind, type FieldRow, type ReferenceOptions, type RuleRow } from './reference.ts';
export { writeGenerated } from './generate.ts';
export { schemaDataModule } from './schema-data.ts';
