// docs/api.md, generated from the CRD's schema (so the reference cannot disagree with what the API server
// enforces): every field with its type, default, constraints and description, then the CEL rules.
import { etcdClusterCRD, GENERATE_COMMAND, PRINTER_COLUMNS } from './crd.ts';
import { API_VERSION, DEFAULT_REPOSITORY, KIND, PLURAL, RESERVED_SPEC_FIELDS, SHORT_NAMES } from './etcdcluster.ts';
import type { SchemaNode } from './schema.ts';

/** The file the generator writes, relative to the repository root. */
export const DOCS_FILE = 'docs/api.md';

/** Defaults the operator applies in code rather than in the schema (see applyDefaults and etcdImage). */
const OPERATOR_DEFAULTS: Record<string, string> = {
  'spec.repository': `\`${DEFAULT_REPOSITORY}\` when \`image\` is unset (used by the operator, never stored)`,
};

interface Row {
  field: string;
  type: string;
  default: string;
  constraints: string[];
  description: string;
}

interface Rule {
  field: string;
  rule: string;
  message: string;
}

/** Text safe inside a GFM table cell, where `|` would end the cell (code spans included). */
function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

/** Prose (not code) for a cell: `<x>` would otherwise vanish as an HTML tag. */
function prose(text: string): string {
  return cell(text.replaceAll('<', '&lt;').replaceAll('>', '&gt;'));
}

function code(value: unknown): string {
  return `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
}

function typeOf(node: SchemaNode): string {
  if (node.type === 'array') return `[]${node.items ? typeOf(node.items) : 'any'}`;
  if (node.type === 'object' && node.additionalProperties) return `map[string]${typeOf(node.additionalProperties)}`;
  if (node.type === 'object' && node['x-kubernetes-preserve-unknown-fields']) return 'object (passed through)';
  return node.format ? `${node.type ?? 'any'} (${node.format})` : (node.type ?? 'any');
}

function constraintsOf(node: SchemaNode, required: boolean): string[] {
  const out: string[] = [];
  if (required) out.push('required');
  if (node.enum) out.push(`one of ${node.enum.map((v) => code(v === '' ? '""' : v)).join(', ')}`);
  if (node.minimum !== undefined && node.maximum !== undefined) out.push(`${node.minimum}–${node.maximum}`);
  else if (node.minimum !== undefined) out.push(`≥ ${node.minimum}`);
  else if (node.maximum !== undefined) out.push(`≤ ${node.maximum}`);
  if (node.minLength !== undefined) out.push(`min length ${node.minLength}`);
  if (node.maxLength !== undefined) out.push(`max length ${node.maxLength}`);
  if (node.pattern !== undefined) out.push(`pattern ${code(node.pattern)}`);
  if (node.minItems !== undefined) out.push(`min items ${node.minItems}`);
  if (node.maxItems !== undefined) out.push(`max items ${node.maxItems}`);
  const listType = node['x-kubernetes-list-type'];
  if (listType === 'map') out.push(`list map keyed by ${(node['x-kubernetes-list-map-keys'] ?? []).map((k) => code(k)).join(', ')}`);
  else if (listType) out.push(`list type ${listType}`);
  if (node['x-kubernetes-validations']?.length) out.push('CEL rules below');
  return out;
}

/** Rows for `node`'s fields (depth first, in key order) and the CEL rules met on the way; `[]` marks list items. */
function walk(node: SchemaNode, field: string, rows: Row[], rules: Rule[]): void {
  for (const { rule, message } of node['x-kubernetes-validations'] ?? []) rules.push({ field, rule, message });
  if (node.items) {
    walk(node.items, `${field}[]`, rows, rules);
    return;
  }
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const key = field ? `${field}.${name}` : name;
    rows.push({
      field: key,
      type: typeOf(child),
      default: child.default !== undefined ? code(child.default) : (OPERATOR_DEFAULTS[key] ?? ''),
      constraints: constraintsOf(child, node.required?.includes(name) ?? false),
      description: child.description ?? '',
    });
    walk(child, key, rows, rules);
  }
}

function table(rows: Row[]): string[] {
  return [
    '| Field | Type | Default | Constraints | Description |',
    '|---|---|---|---|---|',
    ...rows.map((r) => `| \`${r.field}\` | ${cell(r.type)} | ${cell(r.default)} | ${cell(r.constraints.join('; '))} | ${prose(r.description)} |`),
  ];
}

/** The whole of docs/api.md. */
export function apiReferenceMarkdown(): string {
  const crd = etcdClusterCRD();
  const version = crd.spec.versions[0];
  if (!version) throw new Error('the CRD has no version');
  const root = version.schema.openAPIV3Schema;
  const section = (name: 'spec' | 'status'): { rows: Row[]; rules: Rule[] } => {
    const rows: Row[] = [];
    const rules: Rule[] = [];
    const node = root.properties?.[name];
    if (node) walk(node, name, rows, rules);
    return { rows, rules };
  };
  const spec = section('spec');
  const status = section('status');
  const rootRules: Rule[] = (root['x-kubernetes-validations'] ?? []).map((r) => ({ field: '', ...r }));
  const nameNode = root.properties?.metadata?.properties?.name;

  const lines = [
    `<!-- Generated from packages/etcd-operator/src/api/etcdcluster.ts by \`${GENERATE_COMMAND}\`; do not edit. -->`,
    '',
    `# ${KIND} API reference (\`${API_VERSION}\`)`,
    '',
    `${root.description ?? ''} Namespaced; plural \`${PLURAL}\`, short name ${SHORT_NAMES.map((n) => `\`${n}\``).join(', ')}.`,
    'The same schema produces the CRD in `packages/etcd-operator/deploy/crds/`, the TypeScript types, and the defaults',
    'and validation the operator and its admission webhooks apply (`src/api/defaults.ts`), so the webhooks being off',
    'changes nothing. Unknown fields are rejected (with `kubectl`\'s default strict field validation) or pruned.',
    '',
    '```yaml',
    `apiVersion: ${API_VERSION}`,
    `kind: ${KIND}`,
    'metadata:',
    '  name: example',
    'spec:',
    '  replicas: 3',
    '  version: 3.6.16',
    '  storage:',
    '    volumeClaimTemplate:',
    '      resources:',
    '        requests:',
    '          storage: 8Gi',
    '```',
    '',
    '## metadata',
    '',
    `\`metadata.name\`: ${prose(nameNode?.description ?? '')} Pattern ${code(nameNode?.pattern ?? '')}.`,
    '',
    '## spec',
    '',
    ...table(spec.rows),
    '',
    '### Reserved fields',
    '',
    'Planned, and not accepted yet, so that a manifest using them fails loudly instead of being silently ignored:',
    '',
    ...RESERVED_SPEC_FIELDS.map((r) => `- \`${r.field}\`: ${r.description}`),
    '',
    '## status',
    '',
    'Written by the operator through the `/status` subresource.',
    '',
    ...table(status.rows),
    '',
    '## Validation rules (CEL)',
    '',
    'Checked by the API server on every create and update (rules using `oldSelf` on updates only), and again by the',
    'operator and the validating webhook with the same messages.',
    '',
    '| Field | Message | Rule |',
    '|---|---|---|',
    ...[...rootRules, ...spec.rules, ...status.rules].map((r) => `| \`${r.field || '(object)'}\` | ${prose(r.message)} | ${cell(code(r.rule))} |`),
    '',
    '## Printer columns',
    '',
    '| Column | JSONPath | Shown |',
    '|---|---|---|',
    ...PRINTER_COLUMNS.map((c) => `| ${c.name} | \`${c.jsonPath}\` | ${c.priority ? '`-o wide`' : 'always'} |`),
    '',
    '## Subresources',
    '',
    `- \`status\`: the operator writes status only through it; users cannot change it with the main resource.`,
    `- \`scale\`: \`${version.subresources.scale.specReplicasPath}\` ↔ \`${version.subresources.scale.statusReplicasPath}\`, so \`kubectl scale ${SHORT_NAMES[0] ?? PLURAL}/NAME --replicas=5\` works.`,
    '',
  ];
  return lines.join('\n');
}
