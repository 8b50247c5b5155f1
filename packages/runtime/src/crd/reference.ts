// The tables of an API reference in Markdown, generated from a CRD's schema so the reference cannot disagree
// with what the API server enforces: every field with its type, default, constraints and description, the
// CEL rules met on the way, and the printer columns. The prose around the tables is each operator's own.
import type { PrinterColumn } from './definition.ts';
import type { SchemaNode } from './schema.ts';

/** One row of a field table. */
export interface FieldRow {
  field: string;
  type: string;
  default: string;
  constraints: string[];
  description: string;
}

/** A CEL rule with the field it is declared on (`''` for the object itself). */
export interface RuleRow {
  field: string;
  rule: string;
  message: string;
}

/** The kinds of constraint the Constraints column lists. */
export type ConstraintKind = 'required' | 'enum' | 'range' | 'minLength' | 'maxLength' | 'pattern' | 'minItems' | 'maxItems' | 'listType' | 'atomicList' | 'cel';

export interface ReferenceOptions {
  /** Defaults applied in code rather than in the schema, by field (`spec.repository`): shown where the schema has none. */
  codeDefaults?: Readonly<Record<string, string>>;
  /** Constraint kinds left out of the Constraints column (`atomicList`: the default list type, `list type atomic`). */
  omitConstraints?: readonly ConstraintKind[];
}

/** Text safe inside a GFM table cell, where `|` would end the cell (code spans included). */
export function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

/** Prose (not code) for a cell: `<x>` would otherwise vanish as an HTML tag. */
export function prose(text: string): string {
  return cell(text.replaceAll('<', '&lt;').replaceAll('>', '&gt;'));
}

/** A value as a code span. */
export function code(value: unknown): string {
  // An empty string would give an empty code span, which renders as two backticks.
  return `\`${value === '' ? '""' : typeof value === 'string' ? value : JSON.stringify(value)}\``;
}

function typeOf(node: SchemaNode): string {
  if (node.type === 'array') return `[]${node.items ? typeOf(node.items) : 'any'}`;
  if (node.type === 'object' && node.additionalProperties) return `map[string]${typeOf(node.additionalProperties)}`;
  if (node.type === 'object' && node['x-kubernetes-preserve-unknown-fields']) return 'object (passed through)';
  return node.format ? `${node.type ?? 'any'} (${node.format})` : (node.type ?? 'any');
}

function constraintsOf(node: SchemaNode, required: boolean, omit: ReadonlySet<ConstraintKind>): string[] {
  const out: string[] = [];
  const add = (kind: ConstraintKind, text: string): void => {
    if (!omit.has(kind)) out.push(text);
  };
  if (required) add('required', 'required');
  if (node.enum) add('enum', `one of ${node.enum.map((v) => code(v)).join(', ')}`);
  if (node.minimum !== undefined && node.maximum !== undefined) add('range', `${node.minimum}–${node.maximum}`);
  else if (node.minimum !== undefined) add('range', `≥ ${node.minimum}`);
  else if (node.maximum !== undefined) add('range', `≤ ${node.maximum}`);
  if (node.minLength !== undefined) add('minLength', `min length ${node.minLength}`);
  if (node.maxLength !== undefined) add('maxLength', `max length ${node.maxLength}`);
  if (node.pattern !== undefined) add('pattern', `pattern ${code(node.pattern)}`);
  if (node.minItems !== undefined) add('minItems', `min items ${node.minItems}`);
  if (node.maxItems !== undefined) add('maxItems', `max items ${node.maxItems}`);
  const listType = node['x-kubernetes-list-type'];
  if (listType === 'map') add('listType', `list map keyed by ${(node['x-kubernetes-list-map-keys'] ?? []).map((k) => code(k)).join(', ')}`);
  else if (listType === 'atomic') add('atomicList', 'list type atomic');
  else if (listType) add('listType', `list type ${listType}`);
  if (node['x-kubernetes-validations']?.length) add('cel', 'CEL rules below');
  return out;
}

/**
 * The rows for the fields below `node` (depth first, in key order, named from `field`; `[]` marks list items)
 * and the CEL rules met on the way, `node`'s own included. An absent node has neither.
 */
export function schemaReference(node: SchemaNode | undefined, field: string, options: ReferenceOptions = {}): { rows: FieldRow[]; rules: RuleRow[] } {
  const rows: FieldRow[] = [];
  const rules: RuleRow[] = [];
  const codeDefaults = options.codeDefaults ?? {};
  const omit = new Set(options.omitConstraints);
  const walk = (node: SchemaNode, field: string): void => {
    for (const { rule, message } of node['x-kubernetes-validations'] ?? []) rules.push({ field, rule, message });
    if (node.items) {
      walk(node.items, `${field}[]`);
      return;
    }
    for (const [name, child] of Object.entries(node.properties ?? {})) {
      const key = field ? `${field}.${name}` : name;
      rows.push({
        field: key,
        type: typeOf(child),
        default: child.default !== undefined ? code(child.default) : (codeDefaults[key] ?? ''),
        constraints: constraintsOf(child, node.required?.includes(name) ?? false, omit),
        description: child.description ?? '',
      });
      walk(child, key);
    }
  };
  if (node) walk(node, field);
  return { rows, rules };
}

/** A field table: Field, Type, Default, Constraints, Description. */
export function fieldTable(rows: readonly FieldRow[]): string[] {
  return [
    '| Field | Type | Default | Constraints | Description |',
    '|---|---|---|---|---|',
    ...rows.map((r) => `| \`${r.field}\` | ${cell(r.type)} | ${cell(r.default)} | ${cell(r.constraints.join('; '))} | ${prose(r.description)} |`),
  ];
}

/** A CEL rules table: Field, Message, Rule; a rule on the object itself shows as `(object)`. */
export function celRulesTable(rules: readonly RuleRow[]): string[] {
  return [
    '| Field | Message | Rule |',
    '|---|---|---|',
    ...rules.map((r) => `| \`${r.field || '(object)'}\` | ${prose(r.message)} | ${cell(code(r.rule))} |`),
  ];
}

/** A conditions table: Condition, Reason, Meaning, from each condition type's reasons and what they mean. */
export function conditionReasonsTable(reasons: Readonly<Record<string, Readonly<Record<string, string>>>>): string[] {
  return [
    '| Condition | Reason | Meaning |',
    '|---|---|---|',
    ...Object.entries(reasons).flatMap(([type, byReason]) => Object.entries(byReason).map(([reason, meaning]) => `| ${type} | \`${reason}\` | ${prose(meaning)} |`)),
  ];
}

/** A printer columns table: Column, JSONPath, and whether it is shown always or with `-o wide`. */
export function printerColumnsTable(columns: readonly PrinterColumn[]): string[] {
  return [
    '| Column | JSONPath | Shown |',
    '|---|---|---|',
    ...columns.map((c) => `| ${c.name} | \`${cell(c.jsonPath)}\` | ${c.priority ? '`-o wide`' : 'always'} |`),
  ];
}
