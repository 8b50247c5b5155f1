// Generic walks over the structural OpenAPI v3 subset a CRD schema uses: defaulting and validation with the
// semantics of the API server, so an operator and its webhooks behave like the CRD even when the CRD's own
// checks did not run (webhooks off, an object stored before a default or a rule existed).

/** A CEL rule: one `x-kubernetes-validations` item. */
export interface CelRule {
  rule: string;
  message: string;
  /**
   * A CEL expression, evaluated only when the rule fails, whose string becomes the error instead of `message`
   * (which stays the fallback, and what a reference documents): for an error that names the offending value.
   */
  messageExpression?: string;
}

/** One node of a structural OpenAPI v3 schema, as far as the tooling here reads it. */
export interface SchemaNode {
  type?: string;
  format?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  /** Carried for the API server (and a schema as data, schema-data.ts); the walks here do not check them. */
  minProperties?: number;
  maxProperties?: number;
  nullable?: boolean;
  required?: string[];
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode;
  items?: SchemaNode;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-validations'?: CelRule[];
}

/** A validation error or warning, addressed like the API server does (`spec.storage`, `spec.etcd.extraArgs[2]`). */
export interface FieldError {
  field: string;
  message: string;
}

/** A path into an object: property names and array indexes. */
export type Path = readonly (string | number)[];

/** A path as the API server writes it in field errors: dotted names, `[i]` for indexes and odd keys. */
export function formatPath(path: Path): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(part)) out += out ? `.${part}` : part;
    else out += `[${part}]`;
  }
  return out;
}

/** The value at `path`, or undefined where the path leaves the value. */
export function valueAt(value: unknown, path: Path): unknown {
  let current = value;
  for (const part of path) {
    if (typeof part === 'number') current = Array.isArray(current) ? (current as unknown[])[part] : undefined;
    else current = isPlainObject(current) ? current[part] : undefined;
  }
  return current;
}

/** A JSON object: not null, not an array. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON equality, ignoring key order. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/**
 * `value` with the schema's defaults filled in, as the API server does: an absent (or null, non-nullable)
 * value takes a copy of its default, then defaulting continues inside it, so nested defaults apply to a
 * defaulted parent too. A null, non-nullable value without a default is pruned to undefined, as the API
 * server prunes it. Returns a new value; the input is not modified.
 */
export function applySchemaDefaults(node: SchemaNode, value: unknown): unknown {
  const start = value === undefined || (value === null && !node.nullable) ? node.default : value;
  return defaultInside(node, structuredClone(start));
}

function defaultInside(node: SchemaNode, value: unknown): unknown {
  if (Array.isArray(value)) {
    if (node.items) for (let i = 0; i < value.length; i++) value[i] = defaultInside(node.items, value[i]);
    return value;
  }
  if (!isPlainObject(value)) return value;
  for (const [key, prop] of Object.entries(node.properties ?? {})) {
    if (value[key] === null && !prop.nullable) delete value[key]; // the API server prunes such nulls
    if (value[key] === undefined && prop.default !== undefined) value[key] = structuredClone(prop.default);
  }
  for (const [key, child] of Object.entries(value)) {
    const prop = node.properties ? node.properties[key] : node.additionalProperties;
    if (prop) value[key] = defaultInside(prop, child);
  }
  return value;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function show(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/**
 * A problem found at a path. Kept apart from FieldError so that a caller can ratchet on the path (drop
 * problems with values that did not change on update) before formatting it.
 */
export interface Issue {
  path: Path;
  message: string;
}

/** An Issue whose message starts with the field it is about, as the API server words its errors. */
export function issue(path: Path, message: string): Issue {
  return { path, message: `${formatPath(path)} ${message}` };
}

/**
 * The OpenAPI (non-CEL) errors of `value` against `node`, as the API server's schema validation reports them,
 * plus unknown fields, which strict field validation rejects instead of pruning. CEL rules are not evaluated
 * here: each operator mirrors its own in code.
 */
export function validateAgainstSchema(node: SchemaNode, value: unknown, path: Path): Issue[] {
  const issues: Issue[] = [];
  const fail = (message: string): void => {
    issues.push(issue(path, message));
  };
  if (value === undefined || value === null) return issues; // absent, or a null the API server prunes

  const actual = typeName(value);
  const expected = node.type;
  if (expected !== undefined && expected !== actual && !(expected === 'number' && actual === 'integer')) {
    fail(`must be of type ${expected} (got ${actual})`);
    return issues;
  }

  if (node.enum && !node.enum.some((e) => deepEqual(e, value))) {
    fail(`must be one of ${node.enum.map((e) => show(e)).join(', ')} (got ${show(value)})`);
  }
  if (typeof value === 'number') {
    if (node.minimum !== undefined && value < node.minimum) fail(`must be at least ${node.minimum} (got ${value})`);
    if (node.maximum !== undefined && value > node.maximum) fail(`must be at most ${node.maximum} (got ${value})`);
  }
  if (typeof value === 'string') {
    const length = [...value].length; // the API server counts characters, not UTF-16 units
    if (node.minLength !== undefined && length < node.minLength) fail(`must be at least ${node.minLength} characters long`);
    if (node.maxLength !== undefined && length > node.maxLength) fail(`must be at most ${node.maxLength} characters long`);
    if (node.pattern !== undefined && !new RegExp(node.pattern).test(value)) fail(`must match ${node.pattern} (got ${show(value)})`);
    if (node.format === 'date-time' && Number.isNaN(Date.parse(value))) fail(`must be an RFC 3339 date-time (got ${show(value)})`);
  }
  if (Array.isArray(value)) {
    if (node.minItems !== undefined && value.length < node.minItems) fail(`must have at least ${node.minItems} items`);
    if (node.maxItems !== undefined && value.length > node.maxItems) fail(`must have at most ${node.maxItems} items`);
    const listType = node['x-kubernetes-list-type'];
    if (listType === 'set' || listType === 'map') {
      const keys = node['x-kubernetes-list-map-keys'] ?? [];
      const seen = new Set<string>();
      value.forEach((item: unknown, i) => {
        const id = JSON.stringify(listType === 'map' && isPlainObject(item) ? keys.map((k) => item[k]) : item);
        if (seen.has(id)) issues.push(issue([...path, i], `duplicates an earlier entry (${id})`));
        seen.add(id);
      });
    }
    const items = node.items;
    if (items) value.forEach((item: unknown, i) => issues.push(...validateAgainstSchema(items, item, [...path, i])));
  }
  if (isPlainObject(value)) {
    for (const key of node.required ?? []) {
      if (value[key] === undefined || value[key] === null) issues.push(issue([...path, key], 'is required'));
    }
    const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
    for (const [key, child] of Object.entries(value)) {
      const prop = node.properties ? node.properties[key] : node.additionalProperties;
      if (prop) issues.push(...validateAgainstSchema(prop, child, [...path, key]));
      else if (!preserve) issues.push(issue([...path, key], 'is not a known field'));
    }
  }
  return issues;
}
