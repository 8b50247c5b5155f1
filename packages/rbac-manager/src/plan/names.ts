// How the objects a definition makes are named, labelled and owned, so each can be traced back to its
// definition and binding, and so the manager can tell its own objects from everyone else's.
//
// Names are FairwindsOps rbac-manager's (pkg/reconciler/parser.go), so that its users' scripts and the
// objects it already made keep their names: `<definition>-<binding>-<clusterRole>` for ClusterRoleBindings
// and RoleBindings of a ClusterRole, `<definition>-<binding>-<role>-<namespace>` for RoleBindings of a Role;
// a ServiceAccount keeps the subject's own name.
import { createHash } from 'node:crypto';
import type { KubeObject, OwnerReference } from '@quorum/runtime';
import { API_VERSION, KIND } from '../api/rbacdefinition.ts';

/** Every object the manager makes carries it: the manager's informers select on it. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'quorum-rbac-manager';
export const DEFINITION_LABEL = 'rbac.quorum.dev/definition';
export const BINDING_LABEL = 'rbac.quorum.dev/binding';
/** FairwindsOps' label, kept so that tooling that looks for it still finds the bindings. */
export const FAIRWINDS_LABEL = 'rbac-manager';
export const FAIRWINDS_LABEL_VALUE = 'reactiveops';
export const FAIRWINDS_GROUP = 'rbacmanager.reactiveops.io';
/** FairwindsOps' annotation on a ServiceAccount whose pull secrets the manager set. */
export const MANAGED_PULL_SECRETS_ANNOTATION = 'rbacmanager.reactiveops.io/managed-pull-secrets';

const MAX_NAME = 253;

export interface DefinitionRef {
  name: string;
  uid: string;
}

/** A name the API server accepts: one that would be too long keeps its start and ends with a hash of the whole. */
export function boundedName(name: string, max = MAX_NAME): string {
  if (name.length <= max) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 10);
  return `${name.slice(0, max - hash.length - 1).replace(/[-.]+$/, '')}-${hash}`;
}

/** A label value (at most 63 characters, alphanumeric at both ends): the value itself when it is one. */
export function labelValue(value: string): string {
  if (value.length <= 63 && /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/.test(value)) return value;
  return boundedName(value, 63);
}

export function clusterRoleBindingName(definition: string, binding: string, clusterRole: string): string {
  return boundedName(`${definition}-${binding}-${clusterRole}`);
}

export function roleBindingName(definition: string, binding: string, roleRef: { kind: 'ClusterRole' | 'Role'; name: string }, namespace: string): string {
  return boundedName(roleRef.kind === 'ClusterRole' ? `${definition}-${binding}-${roleRef.name}` : `${definition}-${binding}-${roleRef.name}-${namespace}`);
}

export function ownerReference(definition: DefinitionRef): OwnerReference {
  // No blockOwnerDeletion: setting it needs update on rbacdefinitions/finalizers, which the manager lacks.
  return { apiVersion: API_VERSION, kind: KIND, name: definition.name, uid: definition.uid, controller: true };
}

export function managedLabels(definition: string, binding: string | undefined): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: MANAGED_BY,
    [FAIRWINDS_LABEL]: FAIRWINDS_LABEL_VALUE,
    [DEFINITION_LABEL]: labelValue(definition),
    ...(binding === undefined ? {} : { [BINDING_LABEL]: binding }),
  };
}

/** Made by this definition: its owner reference names the definition's uid. */
export function ownedBy(obj: KubeObject, definitionUid: string): boolean {
  return (obj.metadata.ownerReferences ?? []).some((o) => o.uid === definitionUid && o.kind === KIND && o.apiVersion === API_VERSION);
}

/** Made by any RBACDefinition of this manager: the uid of the owner, else undefined. */
export function ownerUid(obj: KubeObject): string | undefined {
  return (obj.metadata.ownerReferences ?? []).find((o) => o.kind === KIND && o.apiVersion === API_VERSION)?.uid;
}

/**
 * Made by FairwindsOps' rbac-manager for the definition of this name: its label, and an owner reference to its
 * RBACDefinition of that name. Such an object is adopted by the definition imported from it (same name).
 */
export function madeByFairwinds(obj: KubeObject, definitionName: string): boolean {
  const labelled = obj.metadata.labels?.[FAIRWINDS_LABEL] === FAIRWINDS_LABEL_VALUE;
  const owned = (obj.metadata.ownerReferences ?? []).some((o) => o.kind === KIND && o.name === definitionName && o.apiVersion.startsWith(`${FAIRWINDS_GROUP}/`));
  return labelled && owned;
}
