// The RBACDefinition's schemas (TypeBox): the CRD's structural schema (crd.ts) and the API section of docs/rbac.md
// (docs.ts) are generated from them, and rbacdefinition.ts takes its types from them. Loaded by the generators and
// the installers, never by the manager's reconcile path (docs/memory.md).
import { Type } from '@sinclair/typebox';
import type { Condition, ObjectMeta } from '@quorum/runtime';
import { conditionSchema } from '@quorum/runtime/crd';
import { labelMap, stringEnum } from '@quorum/kit/schema';
import { API_VERSION, BINDING_NAME_PATTERN, BINDING_STATES, DURATION_PATTERN, KIND, NAMESPACE_PATTERN, RULES, SELECTOR_OPERATORS, SKIP_REASONS, SUBJECT_KINDS } from './rbacdefinition.ts';

const roleName = (what: string): ReturnType<typeof Type.String> => Type.String({ description: what, minLength: 1, maxLength: 253 });

export const LabelSelectorSchema = Type.Object(
  {
    matchLabels: Type.Optional(labelMap({ description: 'Labels a namespace must have, all of them.', maxProperties: 64 })),
    matchExpressions: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: Type.String({ description: 'The label key.', minLength: 1, maxLength: 317 }),
            operator: stringEnum(SELECTOR_OPERATORS, { description: 'How the label relates to values.' }),
            values: Type.Optional(Type.Array(Type.String({ maxLength: 63 }), { description: 'The values for In and NotIn; none for Exists and DoesNotExist.', maxItems: 32, 'x-kubernetes-list-type': 'atomic' })),
          },
          { description: 'One label requirement (metav1.LabelSelectorRequirement).', 'x-kubernetes-validations': [RULES.expressionValues] },
        ),
        { description: 'Label requirements a namespace must meet, all of them.', maxItems: 16, 'x-kubernetes-list-type': 'atomic' },
      ),
    ),
  },
  {
    description:
      'Namespaces whose labels match (metav1.LabelSelector), now and later: a namespace created or relabelled into the selector gets the binding at once, one relabelled out of it loses it. An empty selector matches every namespace.',
  },
);

export const SubjectSchema = Type.Object(
  {
    kind: stringEnum(SUBJECT_KINDS, { description: 'User, Group or ServiceAccount.' }),
    name: Type.String({ description: 'The user, group or service account name.', minLength: 1, maxLength: 253 }),
    namespace: Type.Optional(Type.String({ description: "The ServiceAccount's namespace (required for ServiceAccount, unused otherwise).", pattern: NAMESPACE_PATTERN, maxLength: 63 })),
    apiGroup: Type.Optional(Type.String({ description: 'rbac.authorization.k8s.io for User and Group (the default); empty for ServiceAccount.', maxLength: 253 })),
    imagePullSecrets: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
        description: 'ServiceAccount only: the manager creates (or keeps) the ServiceAccount with these pull secrets.',
        maxItems: 32,
        'x-kubernetes-list-type': 'atomic',
      }),
    ),
    automountServiceAccountToken: Type.Optional(Type.Boolean({ description: "ServiceAccount only: the created ServiceAccount's automountServiceAccountToken." })),
  },
  { description: 'Who is granted the roles (rbacv1.Subject, plus what a created ServiceAccount carries).', 'x-kubernetes-validations': [RULES.serviceAccountNamespace, RULES.serviceAccountOnly] },
);

export const ClusterRoleBindingSchema = Type.Object(
  { clusterRole: roleName('The ClusterRole granted cluster-wide (a ClusterRoleBinding).') },
  { description: 'A ClusterRole bound across the cluster.' },
);

export const RoleBindingSchema = Type.Object(
  {
    clusterRole: Type.Optional(roleName('A ClusterRole granted within the namespaces.')),
    role: Type.Optional(roleName('A Role of that name in each of the namespaces.')),
    namespace: Type.Optional(Type.String({ description: 'One namespace, by name. One that does not exist yet is reported in status and bound once it appears.', pattern: NAMESPACE_PATTERN, maxLength: 63 })),
    namespaceSelector: Type.Optional(LabelSelectorSchema),
  },
  { description: 'A ClusterRole or Role bound in a namespace or in every namespace a selector matches (RoleBindings).', 'x-kubernetes-validations': [RULES.roleExactlyOne, RULES.namespaceExactlyOne] },
);

export const RBACBindingSchema = Type.Object(
  {
    name: Type.String({ description: 'Unique in the definition; part of the name of every object it makes.', pattern: BINDING_NAME_PATTERN, minLength: 1, maxLength: 63 }),
    subjects: Type.Array(SubjectSchema, { description: 'Who is granted the roles.', minItems: 1, maxItems: 256, 'x-kubernetes-list-type': 'atomic' }),
    clusterRoleBindings: Type.Optional(Type.Array(ClusterRoleBindingSchema, { description: 'ClusterRoles granted cluster-wide.', maxItems: 64, 'x-kubernetes-list-type': 'atomic' })),
    roleBindings: Type.Optional(Type.Array(RoleBindingSchema, { description: 'Roles granted in namespaces.', maxItems: 64, 'x-kubernetes-list-type': 'atomic' })),
    notBefore: Type.Optional(Type.String({ description: 'The grant starts at this time (RFC 3339); until then nothing of this binding exists.', format: 'date-time' })),
    expiresAt: Type.Optional(Type.String({ description: 'The grant ends at this time (RFC 3339): its bindings are deleted within seconds, also when the manager was down at that moment (it catches up at start).', format: 'date-time' })),
    expiresAfter: Type.Optional(
      Type.String({ description: "The grant ends this long after it starts (notBefore, else the definition's creation), e.g. 8h or 90m.", pattern: DURATION_PATTERN, maxLength: 16 }),
    ),
  },
  { description: 'One grant: subjects, and the roles they get where, optionally for a window of time.', 'x-kubernetes-validations': [RULES.expiryAtMostOne, RULES.expiryAfterStart] },
);

// ---- status ----

export const ConditionSchema = Type.Unsafe<Condition>(conditionSchema({ description: 'Condition type: Ready or Degraded.', maxLength: 316 }));

export const SkippedSchema = Type.Object(
  {
    kind: stringEnum(['ClusterRoleBinding', 'RoleBinding', 'ServiceAccount'] as const, { description: 'What was not made.' }),
    namespace: Type.Optional(Type.String({ description: 'Where it would have been (none for a ClusterRoleBinding).' })),
    name: Type.String({ description: 'The name it would have had.' }),
    reason: stringEnum(SKIP_REASONS, { description: 'NamespaceNotFound, RoleNotFound, NameTaken (an object the manager did not make has the name), Refused (the API server refused the write) or Withheld (not created or updated while the escalation webhook is not in place).' }),
    message: Type.String({ description: 'The details, in the words of whoever refused.' }),
  },
  { description: 'Something a binding asks for that is not in place, and why.' },
);

export const BindingStatusSchema = Type.Object(
  {
    name: Type.String({ description: 'The binding.' }),
    state: stringEnum(BINDING_STATES, { description: 'Active (within its window), Pending (before notBefore) or Expired (past its end).' }),
    clusterRoleBindings: Type.Optional(Type.Array(Type.String(), { description: 'The ClusterRoleBindings in place.', 'x-kubernetes-list-type': 'atomic' })),
    namespaces: Type.Optional(Type.Array(Type.String(), { description: 'The namespaces where all its RoleBindings are in place.', 'x-kubernetes-list-type': 'atomic' })),
    skipped: Type.Optional(Type.Array(SkippedSchema, { description: 'What is not in place, and why.', 'x-kubernetes-list-type': 'atomic' })),
    startsAt: Type.Optional(Type.String({ description: 'When the grant starts (Pending bindings).', format: 'date-time' })),
    expiresAt: Type.Optional(Type.String({ description: 'When the grant ends (or ended).', format: 'date-time' })),
  },
  { description: 'What one binding has in place now.' },
);

export const RBACDefinitionStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(Type.Integer({ description: 'metadata.generation the status was computed from.', format: 'int64', minimum: 0 })),
    conditions: Type.Optional(
      Type.Array(ConditionSchema, {
        description: 'Ready (everything asked for within its window is in place) and Degraded (something is skipped).',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
      }),
    ),
    bindings: Type.Optional(Type.Array(BindingStatusSchema, { description: 'Per binding, what is in place and what is not.', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] })),
    nextTransition: Type.Optional(Type.String({ description: 'The next time a binding starts or ends: the manager acts then.', format: 'date-time' })),
  },
  { description: 'What the definition has in place, written by the manager.' },
);

export const RBACDefinitionSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String({ description: `APIVersion of this object: ${API_VERSION}.` })),
    kind: Type.Optional(Type.String({ description: `Kind of this object: ${KIND}.` })),
    metadata: Type.Optional(Type.Unsafe<ObjectMeta>({ type: 'object' })),
    rbacBindings: Type.Optional(
      Type.Array(RBACBindingSchema, { description: 'The grants.', maxItems: 64, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] }),
    ),
    status: Type.Optional(RBACDefinitionStatusSchema),
  },
  {
    description:
      'Access as code: RoleBindings, ClusterRoleBindings and ServiceAccounts made, kept and removed to match, in every namespace the moment it appears, optionally for a window of time. Nobody can grant through it more than they could bind themselves.',
  },
);
