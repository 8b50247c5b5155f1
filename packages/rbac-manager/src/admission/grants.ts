// What a definition lets its author hand out, as the checks Kubernetes' own `bind` rule would make: for each
// role it references and each place it binds it, may the author bind that role there? Pure.
//
// A roleBinding by namespaceSelector binds in namespaces that may not exist yet, so it asks for the right to
// bind the role cluster-wide (a SubjectAccessReview without a namespace). A ServiceAccount subject is created
// by the manager, so it asks for the right to create ServiceAccounts in its namespace.
import type { RBACBinding, RBACDefinition } from '../api/rbacdefinition.ts';

export interface ResourceCheck {
  group: string;
  resource: string;
  verb: string;
  name?: string;
  /** Absent: cluster-wide. */
  namespace?: string;
  /**
   * The namespaceSelector the check stands for, when it comes from one: not asked about (the review is
   * cluster-wide), but part of what an update must have passed before, so a widened selector is asked again.
   */
  selector?: string;
  /** Where in the definition it comes from, for the refusal's message. */
  source: string;
}

const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** What can change what a binding grants: a check already passed for an identical binding is not asked again. */
function grantIdentity(b: RBACBinding): string {
  return JSON.stringify([b.subjects, b.notBefore ?? null, b.expiresAt ?? null, b.expiresAfter ?? null]);
}

function bindingChecks(b: RBACBinding, at: string): ResourceCheck[] {
  const checks: ResourceCheck[] = [];
  for (const crb of b.clusterRoleBindings ?? []) checks.push({ group: RBAC_GROUP, resource: 'clusterroles', verb: 'bind', name: crb.clusterRole, source: `${at}.clusterRoleBindings` });
  (b.roleBindings ?? []).forEach((rb, j) => {
    const resource = rb.clusterRole !== undefined ? 'clusterroles' : 'roles';
    const name = rb.clusterRole ?? rb.role ?? '';
    const where = rb.namespace !== undefined ? { namespace: rb.namespace } : { selector: JSON.stringify(rb.namespaceSelector ?? {}) };
    checks.push({ group: RBAC_GROUP, resource, verb: 'bind', name, ...where, source: `${at}.roleBindings[${j}]` });
  });
  b.subjects.forEach((s, j) => {
    if (s.kind === 'ServiceAccount' && s.namespace !== undefined) checks.push({ group: '', resource: 'serviceaccounts', verb: 'create', namespace: s.namespace, source: `${at}.subjects[${j}]` });
  });
  return checks;
}

/** What the API server is asked: one review answers every check of the same key. */
function checkKey(c: ResourceCheck): string {
  return [c.group, c.resource, c.verb, c.name ?? '', c.namespace ?? '*'].join('|');
}

/** What a check grants: its review, and for a selector which namespaces it reaches. */
function grantKey(c: ResourceCheck): string {
  return `${checkKey(c)}|${c.selector ?? ''}`;
}

/**
 * The checks the new definition needs, without those its previous version (an update) already passed for
 * the same grant: removing access, or leaving a binding as it was, needs no right; a new subject or a longer
 * window needs the right to every role of its binding again, and a changed namespaceSelector (which may reach
 * namespaces the old one did not) the cluster-wide right to its role again.
 */
export function requiredChecks(next: RBACDefinition, previous: RBACDefinition | undefined): ResourceCheck[] {
  const passed = new Set<string>();
  for (const b of previous?.rbacBindings ?? []) for (const c of bindingChecks(b, '')) passed.add(`${grantIdentity(b)}#${grantKey(c)}`);
  const needed = new Map<string, ResourceCheck>();
  (next.rbacBindings ?? []).forEach((b, i) => {
    for (const c of bindingChecks(b, `rbacBindings[${i}] (${b.name})`)) {
      if (passed.has(`${grantIdentity(b)}#${grantKey(c)}`)) continue;
      if (!needed.has(checkKey(c))) needed.set(checkKey(c), c);
    }
  });
  return [...needed.values()];
}

/** `bind ClusterRole edit in namespace a`, `create serviceaccounts in namespace ci`. */
export function describeCheck(c: ResourceCheck): string {
  const kind = c.resource === 'clusterroles' ? 'ClusterRole' : c.resource === 'roles' ? 'Role' : c.resource;
  const what = c.name !== undefined ? `${kind} ${c.name}` : kind;
  return `${c.verb} ${what} ${c.namespace !== undefined ? `in namespace ${c.namespace}` : 'cluster-wide'}`;
}
