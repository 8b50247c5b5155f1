// The RBACDefinition API (rbac.quorum.dev/v1alpha1), declared once: the TypeScript types, the CRD's structural
// schema (crd.ts), the checks the manager mirrors in code (validate.ts) and the API section of docs/rbac.md
// (src/reference/api.ts) all come from the schemas in schema.ts. This file holds the names, rules and types the manager uses at
// run time; the schemas, which need TypeBox at run time, are apart so that the manager's process does not load it
// (about 4 MiB, docs/memory.md): the types below are taken from them with `import type`, which costs nothing.
//
// The shape is FairwindsOps rbac-manager's (rbacmanager.reactiveops.io/v1beta1): `rbacBindings` at the top
// level, no `spec`, so a definition written for it is valid here once its apiVersion says rbac.quorum.dev
// (`quorum rbac import` does that). What is new is optional: the time window of a binding, and a status.
import type { Static } from '@sinclair/typebox';
import type { ObjectMeta } from '@quorum/runtime';
import type { CelRule } from '@quorum/runtime/crd';
import type { BindingStatusSchema, LabelSelectorSchema, RBACBindingSchema, RBACDefinitionStatusSchema, RoleBindingSchema, SkippedSchema, SubjectSchema } from './schema.ts';

export const GROUP = 'rbac.quorum.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'RBACDefinition';
export const LIST_KIND = 'RBACDefinitionList';
export const PLURAL = 'rbacdefinitions';
export const SINGULAR = 'rbacdefinition';
export const SHORT_NAMES: readonly string[] = ['rbacdef'];

export const SUBJECT_KINDS = ['User', 'Group', 'ServiceAccount'] as const;
export const SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;
export const BINDING_STATES = ['Active', 'Pending', 'Expired'] as const;
export const SKIP_REASONS = ['NamespaceNotFound', 'RoleNotFound', 'NameTaken', 'Refused', 'Withheld'] as const;

/** A namespace name (DNS-1123 label). */
export const NAMESPACE_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
/** A duration: a whole number of seconds, minutes, hours or days (`90m`, `8h`, `7d`). */
export const DURATION_PATTERN = '^[1-9][0-9]*(s|m|h|d)$';
/** A binding's name: it becomes part of the names of the objects it makes. */
export const BINDING_NAME_PATTERN = '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$';

/** The CRD's CEL rules; validate.ts mirrors each one under the same message. */
export const RULES = {
  roleExactlyOne: {
    rule: '(has(self.clusterRole) ? 1 : 0) + (has(self.role) ? 1 : 0) == 1',
    message: 'a roleBinding sets exactly one of clusterRole or role',
  },
  namespaceExactlyOne: {
    // `namespace` is a CEL keyword: the API server's CEL spells the field __namespace__.
    rule: '(has(self.__namespace__) ? 1 : 0) + (has(self.namespaceSelector) ? 1 : 0) == 1',
    message: 'a roleBinding sets exactly one of namespace or namespaceSelector',
  },
  serviceAccountNamespace: {
    rule: "self.kind == 'ServiceAccount' ? has(self.__namespace__) : true",
    message: 'a ServiceAccount subject needs its namespace',
  },
  serviceAccountOnly: {
    rule: "self.kind == 'ServiceAccount' || (!has(self.imagePullSecrets) && !has(self.automountServiceAccountToken))",
    message: 'imagePullSecrets and automountServiceAccountToken belong to ServiceAccount subjects only',
  },
  expiryAtMostOne: {
    rule: '!(has(self.expiresAt) && has(self.expiresAfter))',
    message: 'a binding sets at most one of expiresAt or expiresAfter',
  },
  expiryAfterStart: {
    rule: '!has(self.expiresAt) || !has(self.notBefore) || timestamp(self.expiresAt) > timestamp(self.notBefore)',
    message: 'expiresAt must be after notBefore',
  },
  expressionValues: {
    rule: "self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0 : !has(self.values) || size(self.values) == 0",
    message: 'a matchExpressions entry needs values with In and NotIn, and none with Exists and DoesNotExist',
  },
} as const satisfies Record<string, CelRule>;

export type Subject = Static<typeof SubjectSchema>;
export type LabelSelector = Static<typeof LabelSelectorSchema>;
export type RoleBindingSpec = Static<typeof RoleBindingSchema>;
export type RBACBinding = Static<typeof RBACBindingSchema>;
export type BindingStatus = Static<typeof BindingStatusSchema>;
export type Skipped = Static<typeof SkippedSchema>;
export type SkipReason = (typeof SKIP_REASONS)[number];
export type RBACDefinitionStatus = Static<typeof RBACDefinitionStatusSchema>;

/** An RBACDefinition as read from the API server. */
export interface RBACDefinition {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  rbacBindings?: RBACBinding[];
  status?: RBACDefinitionStatus;
}
