// The EtcdCluster CustomResourceDefinition, built from the TypeBox schemas in etcdcluster.ts: only the OpenAPI
// keywords a structural schema allows are kept (an unexpected keyword is an error, not silently dropped), and
// keys are sorted so the generated YAML is byte-for-byte stable.
import type { TSchema } from '@sinclair/typebox';
import { stringify } from 'yaml';
import { API_VERSION, EtcdClusterSchema, GROUP, KIND, LIST_KIND, PLURAL, SHORT_NAMES, SINGULAR, VERSION } from './etcdcluster.ts';
import { formatPath, isPlainObject, type Path, type SchemaNode } from './schema.ts';

/** The file the generator writes, relative to packages/etcd-operator. */
export const CRD_FILE = `deploy/crds/${GROUP}_${PLURAL}.yaml`;
export const GENERATE_COMMAND = 'node packages/etcd-operator/scripts/generate.ts';

export type PrinterColumn = {
  name: string;
  type: 'integer' | 'number' | 'string' | 'boolean' | 'date';
  jsonPath: string;
  description: string;
  priority?: number;
};

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
      subresources: { status: Record<string, never>; scale: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string } };
      additionalPrinterColumns: PrinterColumn[];
    }[];
  };
};

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
export function toOpenAPI(schema: TSchema | SchemaNode, path: Path = []): SchemaNode {
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

export const PRINTER_COLUMNS: PrinterColumn[] = [
  { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', description: 'Desired number of members.' },
  { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Members that are ready.' },
  { name: 'Version', type: 'string', jsonPath: '.status.currentVersion', description: 'Lowest etcd version any member runs.' },
  { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Summary of the cluster lifecycle.' },
  { name: 'Leader', type: 'string', jsonPath: '.status.leader', description: 'Member that is the raft leader.', priority: 1 },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the cluster was created.' },
];

/** The CRD object, ready to apply (server-side apply or `kubectl apply -f`). */
export function etcdClusterCRD(): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${PLURAL}.${GROUP}`, labels: { 'app.kubernetes.io/name': 'quorum', 'app.kubernetes.io/part-of': 'quorum' } },
    spec: {
      group: GROUP,
      names: { kind: KIND, listKind: LIST_KIND, plural: PLURAL, singular: SINGULAR, shortNames: [...SHORT_NAMES], categories: ['quorum'] },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: toOpenAPI(EtcdClusterSchema) },
          // No labelSelectorPath: the HorizontalPodAutoscaler has no business resizing a consensus cluster.
          subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
          additionalPrinterColumns: PRINTER_COLUMNS,
        },
      ],
    },
  };
}

/** The CRD as the YAML file in deploy/crds: a generated-file header, then the object. */
export function etcdClusterCRDYAML(): string {
  const header = `# ${API_VERSION} ${KIND}. Generated from packages/etcd-operator/src/api/etcdcluster.ts by\n# \`${GENERATE_COMMAND}\`; do not edit.\n`;
  // lineWidth 0: long CEL rules and descriptions stay on one line instead of being folded. YAML 1.1 quoting,
  // because Kubernetes tooling reads YAML 1.1, where a plain `yes` or `on` would be a boolean.
  return `${header}${stringify(etcdClusterCRD(), { lineWidth: 0, version: '1.1' })}`;
}
