// The API reference section of docs/redis.md, generated from the CRD's schema (so the reference cannot disagree
// with what the API server enforces): every field with its type, default, constraints and description, then
// the CEL rules. The rest of docs/redis.md is written by hand; withReference() replaces only what lies between
// the two markers.
import { celRulesTable, fieldTable, printerColumnsTable, schemaReference, storageVersion } from '@quorum/runtime/crd';
import { BACKUP_PRINTER_COLUMNS, GENERATE_COMMAND, PRINTER_COLUMNS, redisBackupCRD, redisCRD } from './crd.ts';
import { BACKUP_KIND } from './backup.ts';
import { ALLOWED_CONFIG, API_VERSION, KIND, STRUCTURED_CONFIG } from './redis.ts';

export const DOCS_FILE = 'docs/redis.md';
export const BEGIN_MARKER = `<!-- BEGIN API REFERENCE: generated from packages/redis-operator/src/api/redis.ts by \`${GENERATE_COMMAND}\`; do not edit. -->`;
export const END_MARKER = '<!-- END API REFERENCE -->';

const CODE_DEFAULTS = { 'spec.minReplicasToWrite': '1 when `replicas` > 0, else 0 (applied by the operator, never stored)' };

/** The generated section, markers included. */
export function apiReferenceSection(): string[] {
  const root = storageVersion(redisCRD()).schema.openAPIV3Schema;
  const spec = schemaReference(root.properties?.spec, 'spec', { codeDefaults: CODE_DEFAULTS });
  const status = schemaReference(root.properties?.status, 'status');
  return [
    BEGIN_MARKER,
    '',
    `### ${KIND} (\`${API_VERSION}\`)`,
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
    'operator with the same messages. A refused `spec.config` directive is named by its path (`spec.config[0].name`).',
    '',
    ...celRulesTable([...spec.rules, ...status.rules]),
    '',
    `Directives \`spec.config\` accepts: ${ALLOWED_CONFIG.map((d) => `\`${d}\``).join(', ')}. Directives with a field of`,
    `their own are refused with that field named: ${Object.entries(STRUCTURED_CONFIG).map(([d, f]) => `\`${d}\` → \`${f}\``).join(', ')}.`,
    '',
    '#### Printer columns',
    '',
    ...printerColumnsTable(PRINTER_COLUMNS),
    '',
    ...backupReference(),
    END_MARKER,
  ];
}

/** The RedisBackup's part of the reference. */
function backupReference(): string[] {
  const root = storageVersion(redisBackupCRD()).schema.openAPIV3Schema;
  const spec = schemaReference(root.properties?.spec, 'spec');
  const status = schemaReference(root.properties?.status, 'status');
  return [
    `### ${BACKUP_KIND} (\`${API_VERSION}\`)`,
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
    ...celRulesTable([...spec.rules, ...status.rules]),
    '',
    '#### Printer columns',
    '',
    ...printerColumnsTable(BACKUP_PRINTER_COLUMNS),
    '',
  ];
}

/** `doc` with its generated section replaced (or appended when it has none yet). */
export function withReference(doc: string): string {
  const section = apiReferenceSection().join('\n');
  const begin = doc.indexOf('<!-- BEGIN API REFERENCE');
  const end = doc.indexOf(END_MARKER);
  if (begin < 0 || end < begin) return `${doc.trimEnd()}\n\n${section}\n`;
  return doc.slice(0, begin) + section + doc.slice(end + END_MARKER.length);
}
