// The manager's own RBAC, the smallest that works: one rule per call it makes (docs/rbac.md, "What the
// manager can grant", explains each). Kept apart from the other manifests so the integration test can run the
// manager in-process under exactly these rules, as a ServiceAccount, with the API server deciding.
import { LEASE_NAME } from '../operator/config.ts';
import { ESCALATION_WEBHOOK_CONFIGURATION, WEBHOOK_CERT_SECRET } from '../admission/serving.ts';

export type Rule = Record<string, unknown> & { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] };

const RBAC = 'rbac.authorization.k8s.io';

/**
 * Cluster-wide. `bindable`: the ClusterRoles (and Roles) the manager may bind; unset, any. With a list, a
 * definition naming another role is refused by the API server when the manager writes its binding, and the
 * status says so (Refused): a second gate beside the escalation webhook.
 */
export function clusterRules(bindable?: readonly string[], webhookConfiguration = ESCALATION_WEBHOOK_CONFIGURATION): Rule[] {
  const names = bindable === undefined ? {} : { resourceNames: [...bindable].sort() };
  return [
    { apiGroups: ['rbac.quorum.dev'], resources: ['rbacdefinitions'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['rbac.quorum.dev'], resources: ['rbacdefinitions/status'], verbs: ['patch'] },
    // Namespaces by name and by selector, watched; nothing is written to them.
    { apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'watch'] },
    // Which roles exist (a binding to a missing one is reported and made once it appears).
    { apiGroups: [RBAC], resources: ['clusterroles', 'roles'], verbs: ['list', 'watch'] },
    // Binding a role without holding its permissions: Kubernetes' bind verb (not escalate: it never writes roles).
    { apiGroups: [RBAC], resources: ['clusterroles', 'roles'], verbs: ['bind'], ...names },
    { apiGroups: [RBAC], resources: ['rolebindings', 'clusterrolebindings'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] },
    { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] },
    // The escalation webhook asks, as the author of a definition, whether they may bind each role; /metrics
    // (HTTPS) asks whether its caller may get it.
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    // /metrics checks its caller's bearer token.
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    // Its own webhook configuration only: watched (nothing is granted while it is missing) and its CA published
    // into it. List and watch with resourceNames work with a metadata.name field selector, which the manager uses.
    { apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], resourceNames: [webhookConfiguration], verbs: ['get', 'list', 'watch', 'patch'] },
  ];
}

/** In the manager's namespace: its Lease and its webhook certificate Secret. */
export function namespaceRules(): Rule[] {
  return [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [LEASE_NAME], verbs: ['get', 'update'] },
    { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    // update: the webhook's serving certificate is renewed in place once a third of its life is left.
    { apiGroups: [''], resources: ['secrets'], resourceNames: [WEBHOOK_CERT_SECRET], verbs: ['get', 'update'] },
  ];
}

/** Events about RBACDefinitions (cluster-scoped) go to this namespace, the only one it writes Events in. */
export const EVENTS_NAMESPACE = 'default';

export function eventRules(): Rule[] {
  return [{ apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] }];
}
