// The RBACDefinition CustomResourceDefinition, built from the TypeBox schema in rbacdefinition.ts by the
// runtime's CRD tooling; what is the manager's own is here: names, scope, subresources and printer columns.
import { crdYAML, customResourceDefinition, type CustomResourceDefinition, type PrinterColumn } from '@quorum/runtime/crd';
import { GROUP, KIND, LIST_KIND, PLURAL, SHORT_NAMES, SINGULAR, VERSION } from './rbacdefinition.ts';
import { RBACDefinitionSchema } from './schema.ts';

/** The file the generator writes, relative to packages/rbac-manager. */
export const CRD_FILE = `deploy/crds/${GROUP}_${PLURAL}.yaml`;
export const GENERATE_COMMAND = 'node packages/rbac-manager/scripts/generate.ts';

export const PRINTER_COLUMNS: PrinterColumn[] = [
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status', description: 'Whether everything asked for within its window is in place.' },
  { name: 'Degraded', type: 'string', jsonPath: '.status.conditions[?(@.type=="Degraded")].status', description: 'Whether something asked for is skipped (see status.bindings[].skipped).' },
  { name: 'Next Transition', type: 'date', jsonPath: '.status.nextTransition', description: 'When a binding next starts or ends.' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the definition was created.' },
];

export const CRD_LABELS = { 'app.kubernetes.io/name': 'quorum-rbac-manager', 'app.kubernetes.io/part-of': 'quorum' } as const;

/** The CRD object, ready to apply. */
export function rbacDefinitionCRD(): CustomResourceDefinition {
  return customResourceDefinition({
    group: GROUP,
    names: { kind: KIND, listKind: LIST_KIND, plural: PLURAL, singular: SINGULAR, shortNames: SHORT_NAMES, categories: ['quorum'] },
    // Cluster-scoped, as FairwindsOps' is: one definition grants in many namespaces and cluster-wide.
    scope: 'Cluster',
    labels: CRD_LABELS,
    versions: [{ name: VERSION, schema: RBACDefinitionSchema, subresources: { status: {} }, printerColumns: PRINTER_COLUMNS }],
  });
}

/** The CRD as the YAML file in deploy/crds: a generated-file header, then the object. */
export function rbacDefinitionCRDYAML(): string {
  return crdYAML(rbacDefinitionCRD(), { source: 'packages/rbac-manager/src/api/rbacdefinition.ts', command: GENERATE_COMMAND });
}
