// The API reference section of docs/redis.md, generated from the CRD's schema (so the reference cannot disagree
// with what the API server enforces): every field with its type, default, constraints and description, then
// the CEL rules. The rest of docs/redis.md is written by hand; withReference() replaces only what lies between
// the two markers.
import { celRulesTable, fieldTable, printerColumnsTable, schemaReference, storageVersion, type CustomResourceDefinition, type PrinterColumn } from '@quorum/runtime/crd';
import { BACKUP_PRINTER_COLUMNS, GENERATE_COMMAND, PRINTER_COLUMNS, redisBackupCRD, redisBackupScheduleCRD, redisCRD, SCHEDULE_PRINTER_COLUMNS } from './crd.ts';
import { SCHEDULE_KIND } from './schedule.ts';
import { BACKUP_KIND } from './backup.ts';
import { ALLOWED_CONFIG, API_VERSION, KIND, STRUCTURED_CONFIG } from './redis.ts';

export const DOCS_FILE = 'docs/redis.md';
export const BEGIN_MARKER = `<!-- BEGIN API REFERENCE: generated from packages/redis-operator/src/api/redis.ts by \`${GENERATE_COMMAND}\`; do not edit. -->`;
export const END_MARKER = '<!-- END API REFERENCE -->';

const CODE_DEFAULTS = { 'spec.minReplicasToWrite': '1 when `replicas` > 0, else 0 (applied by the operator, never stored)' };

/** One kind's reference: its fields, its CEL rules (with what the kind says of them), its printer columns. */
function kindReference(crd: CustomResourceDefinition, kind: string, columns: PrinterColumn[], rulesText: string[], codeDefaults: Record<string, string> = {}): string[] {
  const root = storageVersion(crd).schema.openAPIV3Schema;
  const spec = schemaReference(root.properties?.spec, 'spec', { codeDefaults });
  const status = schemaReference(root.properties?.status, 'status');
  return [
    `### ${kind} (\`${API_VERSION}\`)`,
    '',
    root.description ?? '',
    '',
    '#### spec',
    '',
    ...fieldTable(spec.rows),
    '',
    '#### status',
    '',
    ...fieldTable(status.rows),
    '',
    '#### Validation rules (CEL)',
    '',
    'Checked by the API server on every create and update (rules using `oldSelf` on updates only), and again by the',
    'operator with the same messages.',
    '',
    ...celRulesTable([...spec.rules, ...status.rules]),
    '',
    ...rulesText,
    '#### Printer columns',
    '',
    ...printerColumnsTable(columns),
    '',
  ];
}

/** The generated section, markers included. */
export function apiReferenceSection(): string[] {
  const configText = [
    'A refused `spec.config` directive is named by its path (`spec.config[0].name`).',
    `Directives \`spec.config\` accepts: ${ALLOWED_CONFIG.map((d) => `\`${d}\``).join(', ')}. Directives with a field of`,
    `their own are refused with that field named: ${Object.entries(STRUCTURED_CONFIG).map(([d, f]) => `\`${d}\` → \`${f}\``).join(', ')}.`,
    '',
  ];
  return [BEGIN_MARKER, '', ...kindReference(redisCRD(), KIND, PRINTER_COLUMNS, configText, CODE_DEFAULTS), ...kindReference(redisBackupCRD(), BACKUP_KIND, BACKUP_PRINTER_COLUMNS, []), ...kindReference(redisBackupScheduleCRD(), SCHEDULE_KIND, SCHEDULE_PRINTER_COLUMNS, []), END_MARKER];
}

/** `doc` with its generated section replaced (or appended when it has none yet). */
export function withReference(doc: string): string {
  const section = apiReferenceSection().join('\n');
  const begin = doc.indexOf('<!-- BEGIN API REFERENCE');
  const end = doc.indexOf(END_MARKER);
  if (begin < 0 || end < begin) return `${doc.trimEnd()}\n\n${section}\n`;
  return doc.slice(0, begin) + section + doc.slice(end + END_MARKER.length);
}
