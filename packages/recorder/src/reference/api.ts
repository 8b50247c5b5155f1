// The API section of docs/recorder.md, generated from the CRD's schema so the reference cannot disagree with
// what the API server enforces: every field with its type, default, constraints and description, then the
// CEL rules and printer columns. The rest of the document is prose, kept by hand around the markers. Above api/ and
// recorder/ (whose condition reasons it prints), so that neither of those imports the other.
import { celRulesTable, conditionReasonsTable, fieldTable, printerColumnsTable, schemaReference, storageVersion, type ReferenceOptions } from '@quorum/runtime/crd';
import { changeRecorderCRD, GENERATE_COMMAND, PRINTER_COLUMNS } from '../api/crd.ts';
import { API_VERSION, KIND, PLURAL, SHORT_NAMES } from '../api/changerecorder.ts';
import { REASONS } from '../recorder/status.ts';

/**
 * The file the generator fills in, relative to the repository root. It lives in the package because this
 * package's sessions may only write below packages/recorder; moving it to the top-level docs/ is this line.
 */
export const DOCS_FILE = 'docs/recorder.md';
export const BEGIN = '<!-- BEGIN GENERATED API REFERENCE -->';
export const END = '<!-- END GENERATED API REFERENCE -->';

const REFERENCE: ReferenceOptions = {
  /** Defaults the recorder applies in code rather than in the schema. */
  codeDefaults: {
    'spec.storage.path': "the ChangeRecorder's name, when no object store is set",
    'spec.storage.s3.prefix': "the ChangeRecorder's name",
    'spec.storage.gcs.prefix': "the ChangeRecorder's name",
    'spec.storage.azure.prefix': "the ChangeRecorder's name",
    'spec.resources': "the default kinds (see the description), resolved at each reconcile, Quorum's only where served",
  },
  // This reference has never listed minimum lengths or the (default) atomic list type; listing them now would
  // change the published text for no gain in meaning.
  omitConstraints: ['minLength', 'atomicList'],
};

/** The generated API section (without its markers). */
export function apiReferenceMarkdown(): string {
  const crd = changeRecorderCRD();
  const root = storageVersion(crd).schema.openAPIV3Schema;
  // The category groups every Quorum kind: `kubectl get quorum` lists them all.
  const categories = crd.spec.names.categories.map((c) => `, category \`${c}\` (\`kubectl get ${c}\` lists the objects of every kind in it)`).join('');
  const spec = schemaReference(root.properties?.spec, 'spec', REFERENCE);
  const status = schemaReference(root.properties?.status, 'status', REFERENCE);
  const lines = [
    `<!-- Generated from packages/recorder/src/api/changerecorder.ts by \`${GENERATE_COMMAND}\`; do not edit between the markers. -->`,
    '',
    `## API reference: ${KIND} (\`${API_VERSION}\`)`,
    '',
    `${root.description ?? ''} Cluster-scoped; plural \`${PLURAL}\`, short name ${SHORT_NAMES.map((n) => `\`${n}\``).join(', ')}${categories}.`,
    'The same schema produces the CRD in `packages/recorder/deploy/crds/`, the TypeScript types, and the defaults the',
    'recorder applies in code (`src/api/defaults.ts`). Unknown fields are rejected (with `kubectl`\'s default strict',
    'field validation) or pruned.',
    '',
    '### spec',
    '',
    ...fieldTable(spec.rows),
    '',
    '### status',
    '',
    'Written by the recorder through the `/status` subresource.',
    '',
    ...fieldTable(status.rows),
    '',
    '### Validation rules (CEL)',
    '',
    'Checked by the API server on every create and update (`oldSelf` rules on updates only), and again by the recorder,',
    'which reports a failing rule in the Ready condition (reason `InvalidSpec`) and records nothing for that recorder.',
    '',
    ...celRulesTable([...spec.rules, ...status.rules]),
    '',
    '### Conditions and their reasons',
    '',
    ...conditionReasonsTable(REASONS),
    '',
    '### Printer columns',
    '',
    ...printerColumnsTable(PRINTER_COLUMNS),
    '',
  ];
  return lines.join('\n');
}

/** `doc` with the text between the markers replaced by the generated API section. */
export function withGeneratedReference(doc: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${DOCS_FILE}: the generated API reference markers are missing`);
  return `${doc.slice(0, start + BEGIN.length)}\n${apiReferenceMarkdown()}${doc.slice(end)}`;
}
