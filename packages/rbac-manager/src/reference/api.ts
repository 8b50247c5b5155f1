// The API section of docs/rbac.md, generated from the CRD's schema so the reference cannot disagree with what
// the API server enforces. The rest of the document is prose, kept by hand around the markers. It sits above
// api/ and plan/ because it documents both (the conditions' reasons are the planner's, plan/status.ts), as the
// etcd operator's reference/api.ts does; inside api/ it made api/ and plan/ import each other.
import { celRulesTable, conditionReasonsTable, fieldTable, printerColumnsTable, schemaReference, storageVersion } from '@quorum/runtime/crd';
import { rbacDefinitionCRD, GENERATE_COMMAND, PRINTER_COLUMNS } from '../api/crd.ts';
import { API_VERSION, KIND, PLURAL, SHORT_NAMES } from '../api/rbacdefinition.ts';
import { REASONS } from '../plan/status.ts';

export const DOCS_FILE = 'docs/rbac.md';
export const BEGIN = '<!-- BEGIN GENERATED API REFERENCE -->';
export const END = '<!-- END GENERATED API REFERENCE -->';

/** The generated API section (without its markers). */
export function apiReferenceMarkdown(): string {
  const root = storageVersion(rbacDefinitionCRD()).schema.openAPIV3Schema;
  const bindings = schemaReference(root.properties?.rbacBindings, 'rbacBindings');
  const status = schemaReference(root.properties?.status, 'status');
  return [
    `<!-- Generated from packages/rbac-manager/src/api/rbacdefinition.ts by \`${GENERATE_COMMAND}\`; do not edit between the markers. -->`,
    '',
    `## API reference: ${KIND} (\`${API_VERSION}\`)`,
    '',
    `${root.description ?? ''} Cluster-scoped; plural \`${PLURAL}\`, short name ${SHORT_NAMES.map((n) => `\`${n}\``).join(', ')}, category \`quorum\`.`,
    'Like FairwindsOps\' `rbacmanager.reactiveops.io/v1beta1`, the bindings sit at the top level (no `spec`).',
    '',
    '### rbacBindings',
    '',
    ...fieldTable(bindings.rows),
    '',
    '### status',
    '',
    'Written by the manager through the `/status` subresource.',
    '',
    ...fieldTable(status.rows),
    '',
    '### Validation rules (CEL)',
    '',
    'Checked by the API server on every create and update, and again by the admission webhook and the manager (`src/api/validate.ts`).',
    '',
    ...celRulesTable([...bindings.rules, ...status.rules]),
    '',
    '### Conditions and their reasons',
    '',
    ...conditionReasonsTable(REASONS),
    '',
    '### Printer columns',
    '',
    ...printerColumnsTable(PRINTER_COLUMNS),
    '',
  ].join('\n');
}

/** `doc` with the text between the markers replaced by the generated API section. */
export function withGeneratedReference(doc: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${DOCS_FILE}: the generated API reference markers are missing`);
  return `${doc.slice(0, start + BEGIN.length)}\n${apiReferenceMarkdown()}${doc.slice(end)}`;
}
