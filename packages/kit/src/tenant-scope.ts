// An operator's install scope, shared by the operators: the tenant namespaces it manages (a Role and RoleBinding
// in each, the default) or every namespace (a ClusterRole and ClusterRoleBinding, only when asked for). The
// checks refuse kube-system: an operator creates pods and reads Secrets with its own identity, and nothing of
// Quorum's belongs beside the control plane.
import type { KubeObject } from '@quorum/runtime';

/** What an install asks for: tenant namespaces, or every namespace. */
export interface TenantScopeOptions {
  namespaces?: readonly string[] | undefined;
  clusterWide?: boolean | undefined;
}

/** Where an install without `namespaces` or `clusterWide` manages its objects: the examples' namespace. */
export const DEFAULT_TENANT_NAMESPACES: readonly string[] = ['default'];

/** A namespace name (an RFC 1123 label). */
const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * The tenant namespaces `options` ask for, checked, without repeats; undefined for a cluster-wide install.
 * `workloads` names what the operator's objects are, for the kube-system refusal ("its Redises go in").
 */
export function tenantNamespaces(options: TenantScopeOptions, workloads: string): readonly string[] | undefined {
  if (options.clusterWide) {
    if (options.namespaces !== undefined) throw new Error('give either the tenant namespaces (--namespaces, value namespaces) or every namespace (--cluster-wide, value clusterWide), not both');
    return undefined;
  }
  const namespaces = [...new Set(options.namespaces ?? DEFAULT_TENANT_NAMESPACES)];
  if (namespaces.length === 0) throw new Error('namespaces must name at least one namespace (or ask for every namespace: --cluster-wide, value clusterWide)');
  for (const ns of namespaces) {
    if (!NAMESPACE_NAME.test(ns)) throw new Error(`namespaces: ${JSON.stringify(ns)} is not a namespace name`);
    if (ns === 'kube-system') throw new Error(`namespaces: kube-system is refused: the operator would create pods and read Secrets beside the control plane; give the namespaces ${workloads} go in`);
  }
  return namespaces;
}

export interface ScopedRoleOptions {
  /** The Role's (or ClusterRole's) name, and its binding's. */
  name: string;
  labels: Record<string, string>;
  rules: readonly object[];
  /** Whom the bindings bind: the operator's ServiceAccount. */
  serviceAccount: { name: string; namespace: string };
}

/**
 * The rules granted in each tenant namespace (a Role and RoleBinding there), or everywhere (a ClusterRole and
 * ClusterRoleBinding) when `namespaces` is undefined: a cluster-wide install.
 */
export function scopedRoles(namespaces: readonly string[] | undefined, options: ScopedRoleOptions): KubeObject[] {
  const rbac = 'rbac.authorization.k8s.io/v1';
  const subjects = [{ kind: 'ServiceAccount', ...options.serviceAccount }];
  const role = (kind: 'Role' | 'ClusterRole', namespace: string | undefined): KubeObject[] => {
    const metadata = { name: options.name, ...(namespace ? { namespace } : {}), labels: options.labels };
    return [
      { apiVersion: rbac, kind, metadata, rules: options.rules } as KubeObject,
      { apiVersion: rbac, kind: `${kind}Binding`, metadata, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: options.name }, subjects } as KubeObject,
    ];
  };
  return namespaces ? namespaces.flatMap((tenant) => role('Role', tenant)) : role('ClusterRole', undefined);
}

/** A namespaceSelector for webhooks of a namespace-scoped install (nothing when cluster-wide). */
export function tenantNamespaceSelector(namespaces: readonly string[] | undefined): { namespaceSelector?: object } {
  return namespaces ? { namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [...namespaces] }] } } : {};
}
