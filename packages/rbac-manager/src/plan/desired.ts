// What a definition asks for right now: the objects that must exist, what cannot be made and why, and each
// binding's window. Pure: the namespaces, the roles and the time are given.
import type { KubeObject, OpenObject } from '@quorum/runtime';
import type { RBACBinding, RBACDefinition, RoleBindingSpec, Skipped, Subject } from '../api/rbacdefinition.ts';
import { matchesSelector } from './selector.ts';
import { clusterRoleBindingName, managedLabels, MANAGED_PULL_SECRETS_ANNOTATION, ownerReference, roleBindingName, type DefinitionRef } from './names.ts';
import { bindingWindow, type BindingWindow } from './window.ts';

export const RBAC_API_VERSION = 'rbac.authorization.k8s.io/v1';
const RBAC_GROUP = 'rbac.authorization.k8s.io';

export type ObjectKind = 'ClusterRoleBinding' | 'RoleBinding' | 'ServiceAccount';

export interface NamespaceFacts {
  labels: Readonly<Record<string, string>>;
  /** Being deleted: nothing can be created in it. */
  terminating: boolean;
}

/** The cluster as the planner needs it. */
export interface World {
  namespaces: ReadonlyMap<string, NamespaceFacts>;
  clusterRoleExists(name: string): boolean;
  roleExists(namespace: string, name: string): boolean;
}

export interface DesiredObject {
  kind: ObjectKind;
  /** The binding it serves (the first, for a ServiceAccount several name). */
  binding: string;
  namespace?: string;
  name: string;
  object: OpenObject;
}

export interface BindingPlan {
  name: string;
  window: BindingWindow;
  skipped: Skipped[];
}

export interface DesiredState {
  definition: DefinitionRef;
  objects: DesiredObject[];
  bindings: BindingPlan[];
  /** ServiceAccounts (`namespace/name`) that only expired bindings name: their removal is an expiry. */
  expiredServiceAccounts: ReadonlySet<string>;
}

export function objectKey(kind: ObjectKind, namespace: string | undefined, name: string): string {
  return `${kind}/${namespace ?? ''}/${name}`;
}

export function keyOfDesired(d: DesiredObject): string {
  return objectKey(d.kind, d.namespace, d.name);
}

export function desiredState(definition: RBACDefinition, world: World, now: Date): DesiredState {
  const ref: DefinitionRef = { name: definition.metadata.name ?? '', uid: definition.metadata.uid ?? '' };
  const objects = new Map<string, DesiredObject>();
  const bindings: BindingPlan[] = [];
  const activeAccounts = new Set<string>();
  const expiredAccounts = new Set<string>();
  for (const binding of definition.rbacBindings ?? []) {
    const window = bindingWindow(binding, definition.metadata.creationTimestamp, now);
    const plan: BindingPlan = { name: binding.name, window, skipped: [] };
    bindings.push(plan);
    const accounts = binding.subjects.filter((s) => s.kind === 'ServiceAccount').map((s) => `${s.namespace ?? ''}/${s.name}`);
    if (window.state !== 'Active') {
      if (window.state === 'Expired') for (const a of accounts) expiredAccounts.add(a);
      continue;
    }
    for (const a of accounts) activeAccounts.add(a);
    const add = (d: DesiredObject): void => mergeInto(objects, d);
    addServiceAccounts(ref, binding, world, plan, add);
    addClusterRoleBindings(ref, binding, world, plan, add);
    for (const rb of binding.roleBindings ?? []) addRoleBindings(ref, binding, rb, world, plan, add);
  }
  return { definition: ref, objects: [...objects.values()], bindings, expiredServiceAccounts: new Set([...expiredAccounts].filter((a) => !activeAccounts.has(a))) };
}

/** Two bindings naming one ServiceAccount: it carries the pull secrets of both; any other duplicate is the first. */
function mergeInto(objects: Map<string, DesiredObject>, d: DesiredObject): void {
  const key = keyOfDesired(d);
  const existing = objects.get(key);
  if (!existing) {
    objects.set(key, d);
    return;
  }
  if (d.kind !== 'ServiceAccount') return;
  const secrets = [...new Set([...pullSecretNames(existing.object), ...pullSecretNames(d.object)])];
  const merged = serviceAccountObject(existing, secrets, existing.object['automountServiceAccountToken'] ?? d.object['automountServiceAccountToken']);
  objects.set(key, { ...existing, object: merged });
}

function pullSecretNames(sa: OpenObject): string[] {
  const list = sa['imagePullSecrets'];
  return Array.isArray(list) ? list.map((s: { name: string }) => s.name) : [];
}

function metadata(ref: DefinitionRef, binding: string | undefined, name: string, namespace?: string): KubeObject['metadata'] {
  return { name, ...(namespace === undefined ? {} : { namespace }), labels: managedLabels(ref.name, binding), ownerReferences: [ownerReference(ref)] };
}

function serviceAccountObject(base: Pick<DesiredObject, 'object'>, secrets: readonly string[], automount: unknown): OpenObject {
  const meta = { ...base.object.metadata };
  const annotations = secrets.length > 0 ? { [MANAGED_PULL_SECRETS_ANNOTATION]: secrets.join(',') } : undefined;
  if (annotations) meta.annotations = annotations;
  else delete meta.annotations;
  return {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: meta,
    ...(secrets.length > 0 ? { imagePullSecrets: secrets.map((name) => ({ name })) } : {}),
    ...(typeof automount === 'boolean' ? { automountServiceAccountToken: automount } : {}),
  };
}

function namespaceProblem(world: World, namespace: string): string | undefined {
  const facts = world.namespaces.get(namespace);
  if (!facts) return `namespace ${namespace} does not exist (it is bound once it appears)`;
  if (facts.terminating) return `namespace ${namespace} is being deleted`;
  return undefined;
}

function addServiceAccounts(ref: DefinitionRef, binding: RBACBinding, world: World, plan: BindingPlan, add: (d: DesiredObject) => void): void {
  for (const s of binding.subjects) {
    if (s.kind !== 'ServiceAccount' || s.namespace === undefined) continue;
    const problem = namespaceProblem(world, s.namespace);
    if (problem) {
      plan.skipped.push({ kind: 'ServiceAccount', namespace: s.namespace, name: s.name, reason: 'NamespaceNotFound', message: problem });
      continue;
    }
    const base = { object: { metadata: metadata(ref, undefined, s.name, s.namespace) } as OpenObject };
    add({ kind: 'ServiceAccount', binding: binding.name, namespace: s.namespace, name: s.name, object: serviceAccountObject(base, s.imagePullSecrets ?? [], s.automountServiceAccountToken) });
  }
}

/** rbacv1.Subject as the API server stores it: apiGroup only for User and Group, namespace only for ServiceAccount. */
export function rbacSubject(s: Subject): Record<string, string> {
  if (s.kind === 'ServiceAccount') return { kind: s.kind, name: s.name, namespace: s.namespace ?? '' };
  return { kind: s.kind, apiGroup: s.apiGroup || RBAC_GROUP, name: s.name };
}

function addClusterRoleBindings(ref: DefinitionRef, binding: RBACBinding, world: World, plan: BindingPlan, add: (d: DesiredObject) => void): void {
  for (const crb of binding.clusterRoleBindings ?? []) {
    const name = clusterRoleBindingName(ref.name, binding.name, crb.clusterRole);
    if (!world.clusterRoleExists(crb.clusterRole)) {
      plan.skipped.push({ kind: 'ClusterRoleBinding', name, reason: 'RoleNotFound', message: `ClusterRole ${crb.clusterRole} does not exist (it is bound once it appears)` });
      continue;
    }
    const object: OpenObject = {
      apiVersion: RBAC_API_VERSION,
      kind: 'ClusterRoleBinding',
      metadata: metadata(ref, binding.name, name),
      roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: crb.clusterRole },
      subjects: binding.subjects.map(rbacSubject),
    };
    add({ kind: 'ClusterRoleBinding', binding: binding.name, name, object });
  }
}

/** The namespaces a roleBinding names: its one namespace (existing or not), or every existing one its selector matches. */
export function targetNamespaces(rb: RoleBindingSpec, world: Pick<World, 'namespaces'>): string[] {
  if (rb.namespace !== undefined) return [rb.namespace];
  const selector = rb.namespaceSelector ?? {};
  return [...world.namespaces].filter(([, facts]) => matchesSelector(selector, facts.labels)).map(([name]) => name).sort();
}

function addRoleBindings(ref: DefinitionRef, binding: RBACBinding, rb: RoleBindingSpec, world: World, plan: BindingPlan, add: (d: DesiredObject) => void): void {
  const roleRef = rb.clusterRole !== undefined ? { kind: 'ClusterRole' as const, name: rb.clusterRole } : { kind: 'Role' as const, name: rb.role ?? '' };
  for (const namespace of targetNamespaces(rb, world)) {
    const name = roleBindingName(ref.name, binding.name, roleRef, namespace);
    const problem = namespaceProblem(world, namespace);
    if (problem) {
      plan.skipped.push({ kind: 'RoleBinding', namespace, name, reason: 'NamespaceNotFound', message: problem });
      continue;
    }
    const exists = roleRef.kind === 'ClusterRole' ? world.clusterRoleExists(roleRef.name) : world.roleExists(namespace, roleRef.name);
    if (!exists) {
      const where = roleRef.kind === 'Role' ? ` in namespace ${namespace}` : '';
      plan.skipped.push({ kind: 'RoleBinding', namespace, name, reason: 'RoleNotFound', message: `${roleRef.kind} ${roleRef.name}${where} does not exist (it is bound once it appears)` });
      continue;
    }
    const object: OpenObject = {
      apiVersion: RBAC_API_VERSION,
      kind: 'RoleBinding',
      metadata: metadata(ref, binding.name, name, namespace),
      roleRef: { apiGroup: RBAC_GROUP, ...roleRef },
      subjects: binding.subjects.map(rbacSubject),
    };
    add({ kind: 'RoleBinding', binding: binding.name, namespace, name, object });
  }
}

/**
 * Whether a change of this namespace can change what the definition asks for: it is named, it holds a
 * ServiceAccount subject, or a selector matches it. The controller asks this with the namespace's old and
 * new labels, so a namespace relabelled out of a selector wakes the definition too.
 */
export function concernsNamespace(definition: RBACDefinition, namespace: string, labels: Readonly<Record<string, string>> | undefined): boolean {
  return (definition.rbacBindings ?? []).some(
    (b) =>
      b.subjects.some((s) => s.kind === 'ServiceAccount' && s.namespace === namespace) ||
      (b.roleBindings ?? []).some((rb) => rb.namespace === namespace || (rb.namespaceSelector !== undefined && matchesSelector(rb.namespaceSelector, labels))),
  );
}

/** Whether the definition refers to a role of this kind and name (a Role in any namespace). */
export function concernsRole(definition: RBACDefinition, kind: 'ClusterRole' | 'Role', name: string): boolean {
  return (definition.rbacBindings ?? []).some(
    (b) =>
      (kind === 'ClusterRole' && (b.clusterRoleBindings ?? []).some((c) => c.clusterRole === name)) ||
      (b.roleBindings ?? []).some((rb) => (kind === 'ClusterRole' ? rb.clusterRole : rb.role) === name),
  );
}
