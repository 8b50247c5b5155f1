// A CustomResourceDefinition built from a TypeBox (or plain JSON) schema: only the OpenAPI keywords a
// structural schema allows are kept (an unexpected keyword is an error, not silently dropped), and keys are
// sorted so the generated YAML is byte-for-byte stable.
import { createRequire } from 'node:module';
import { formatPath, isPlainObject, type Path, type SchemaNode } from './schema.ts';

export interface PrinterColumn {
  name: string;
  type: 'integer' | 'number' | 'string' | 'boolean' | 'date';
  jsonPath: string;
  description: string;
  /** 0 (or unset): always shown; higher: only with `-o wide`. */
  priority?: number;
}

export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface Subresources {
  status: Record<string, never>;
  scale?: ScaleSubresource;
}

// A type alias, not an interface: it is then assignable to the runtime's OpenObject for client.apply().
export type CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames: string[]; categories: string[] };
    scope: 'Namespaced' | 'Cluster';
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: SchemaNode };
      subresources: Subresources;
      additionalPrinterColumns: PrinterColumn[];
    }[];
  };
};

export interface CRDVersionOptions {
  name: string;
  /** Default true. */
  served?: boolean;
  /** Default: true when it is the only version. Exactly one version must be the storage version. */
  storage?: boolean;
  /** The whole object's schema: a TypeBox schema (its symbols are dropped) or a plain SchemaNode. */
  schema: object;
  subresources: Subresources;
  printerColumns: readonly PrinterColumn[];
}

export interface CRDOptions {
  group: string;
  names: { kind: string; listKind: string; plural: string; singular: string; shortNames: readonly string[]; categories: readonly string[] };
  scope: 'Namespaced' | 'Cluster';
  labels: Readonly<Record<string, string>>;
  versions: readonly CRDVersionOptions[];
}

/** The CRD object, ready to apply (server-side apply or `kubectl apply -f`). */
export function customResourceDefinition(options: CRDOptions): CustomResourceDefinition {
  const { group, names } = options;
  const versions = options.versions.map((v) => ({
    name: v.name,
    served: v.served ?? true,
    storage: v.storage ?? options.versions.length === 1,
    schema: { openAPIV3Schema: toOpenAPI(v.schema) },
    subresources: v.subresources,
    additionalPrinterColumns: [...v.printerColumns],
  }));
  // The API server refuses any other count; failing here names the mistake before an apply does.
  if (versions.filter((v) => v.storage).length !== 1) throw new Error(`${names.plural}.${group}: exactly one version must be the storage version`);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${names.plural}.${group}`, labels: { ...options.labels } },
    spec: {
      group,
      // Spelled out, not spread: the key order is the YAML's, whatever order the caller wrote.
      names: { kind: names.kind, listKind: names.listKind, plural: names.plural, singular: names.singular, shortNames: [...names.shortNames], categories: [...names.categories] },
      scope: options.scope,
      versions,
    },
  };
}

/** The storage version of a CRD: the one whose schema the API reference describes. */
export function storageVersion(crd: CustomResourceDefinition): CustomResourceDefinition['spec']['versions'][number] {
  const version = crd.spec.versions.find((v) => v.storage);
  if (!version) throw new Error(`${crd.metadata.name}: the CRD has no storage version`);
  return version;
}

export interface GeneratedFrom {
  /** The file the definition is declared in, relative to the repository root. */
  source: string;
  /** The command that regenerates the file. */
  command: string;
}

/** The CRD as a YAML file: a generated-file header naming its source and command, then the object. */
export function crdYAML(crd: CustomResourceDefinition, from: GeneratedFrom): string {
  const header = `# ${crd.spec.group}/${storageVersion(crd).name} ${crd.spec.names.kind}. Generated from ${from.source} by\n# \`${from.command}\`; do not edit.\n`;
  // lineWidth 0: long CEL rules and descriptions stay on one line instead of being folded. YAML 1.1 quoting,
  // because Kubernetes tooling reads YAML 1.1, where a plain `yes` or `on` would be a boolean.
  return `${header}${yaml().stringify(crd, { lineWidth: 0, version: '1.1' })}`;
}

/**
 * yaml, loaded when a CRD is first rendered as a file (generators, installers), not with this module: every
 * operator process imports its CRD definitions at start and never renders one, and yaml is 72 modules, about
 * 1.5 MiB of RSS (issue 24). Required, not imported, because crdYAML is synchronous; yaml's Node entry is
 * CommonJS, the module every `import 'yaml'` gets as well.
 */
function yaml(): typeof import('yaml') {
  return createRequire(import.meta.url)('yaml') as typeof import('yaml');
}

/** OpenAPI keywords a CRD schema may carry (JSONSchemaProps), minus those a structural schema forbids. */
const KEYWORDS = new Set([
  'description',
  'type',
  'format',
  'default',
  'nullable',
  'enum',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'required',
  'properties',
  'additionalProperties',
  'items',
  'example',
]);

/**
 * A TypeBox schema as a structural OpenAPI v3 schema: symbols (TypeBox's Kind, Optional) dropped, keys sorted,
 * `required` sorted, and any keyword outside KEYWORDS and `x-kubernetes-*` rejected.
 */
export function toOpenAPI(schema: object, path: Path = []): SchemaNode {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(schema).sort()) {
    const value: unknown = (schema as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (key === 'properties' && isPlainObject(value)) {
      const properties: Record<string, SchemaNode> = {};
      for (const name of Object.keys(value).sort()) properties[name] = toOpenAPI(value[name] as SchemaNode, [...path, name]);
      out[key] = properties;
    } else if ((key === 'items' || key === 'additionalProperties') && isPlainObject(value)) {
      out[key] = toOpenAPI(value, [...path, key === 'items' ? 0 : '*']);
    } else if (key === 'required' && Array.isArray(value)) {
      out[key] = [...(value as string[])].sort();
    } else if (KEYWORDS.has(key) || key.startsWith('x-kubernetes-')) {
      out[key] = sortedKeys(value);
    } else {
      throw new Error(`${formatPath(path) || '<root>'}: keyword ${key} cannot go into a CRD schema`);
    }
  }
  return out;
}

/** A deep copy with every object's keys in sorted order (defaults, CEL rules), for stable output. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortedKeys(value[k])]));
}
