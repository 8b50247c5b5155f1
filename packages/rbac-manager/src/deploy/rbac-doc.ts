// The RBAC manager's own RBAC as docs/security.md prints it, generated from rbacManagerManifests() in the kit's
// table (issue 23 asks for each operator's generated RBAC, line by line): every Role and ClusterRole the manifests
// bind, as shipped and with `--bindable-role`, one line per rule with why the manager needs it. A rule without a
// reason here stops the generator. scripts/generate.ts writes it between the markers; test/unit/rbac-doc.test.ts
// fails while it is stale.
import { rbacRolesTable, ruleKey, withGeneratedSection, type DocRule } from '@quorum/kit';
import { ESCALATION_WEBHOOK_CONFIGURATION, WEBHOOK_CERT_SECRET } from '../admission/serving.ts';
import { LEASE_NAME } from '../operator/config.ts';
import { METRICS_READER_CLUSTER_ROLE, NAME, rbacManagerManifests, type RbacManagerManifestOptions } from './manifests.ts';

export const SECURITY_FILE = 'docs/security.md';
export const RBAC_BEGIN = '<!-- generated: rbac-manager rbac (packages/rbac-manager/src/deploy/rbac-doc.ts); do not edit -->';
export const RBAC_END = '<!-- end of generated rbac-manager rbac -->';

const RBAC = 'rbac.authorization.k8s.io';
/** A reason is found by what a rule is about and its verbs, whatever names narrow it (`--bindable-role`). */
const about = (r: DocRule): string => JSON.stringify([r.apiGroups ?? [], r.resources ?? [], r.verbs]);
const reason = (group: string, resources: string[], verbs: string[], why: string): [string, string] => [about({ apiGroups: [group], resources, verbs }), why];

const REASONS = new Map<string, string>([
  reason('rbac.quorum.dev', ['rbacdefinitions'], ['get', 'list', 'watch'], 'its definitions, through the controller\'s informer'),
  reason('rbac.quorum.dev', ['rbacdefinitions/status'], ['patch'], 'status: one merge patch, only when it changed'),
  reason('', ['namespaces'], ['list', 'watch'], 'targets by name and by selector, watched (a new or relabelled namespace is bound at once); nothing is written to them'),
  reason(RBAC, ['clusterroles', 'roles'], ['list', 'watch'], 'which roles exist: a binding to a missing one is reported, and made once it appears'),
  reason(RBAC, ['clusterroles', 'roles'], ['bind'], 'binding a role without holding its permissions (Kubernetes\' bind verb; never escalate: it writes no roles). As shipped any role, `cluster-admin` included: the escalation webhook stops a definition asking more than its author may bind; `--bindable-role` narrows it'),
  reason(RBAC, ['rolebindings', 'clusterrolebindings'], ['get', 'list', 'watch', 'create', 'patch', 'delete'], 'the bindings it makes, keeps (a manual edit reverted) and removes; never one it did not make'),
  reason('', ['serviceaccounts'], ['get', 'list', 'watch', 'create', 'patch', 'delete'], 'ServiceAccount subjects (with imagePullSecrets and automountServiceAccountToken)'),
  reason('authorization.k8s.io', ['subjectaccessreviews'], ['create'], 'the escalation webhook: may the author bind each role; /metrics: may the caller get it'),
  reason('authentication.k8s.io', ['tokenreviews'], ['create'], '/metrics (HTTPS): who a caller is'),
  reason('admissionregistration.k8s.io', ['validatingwebhookconfigurations'], ['get', 'list', 'watch', 'patch'], `its own webhook configuration only (\`${ESCALATION_WEBHOOK_CONFIGURATION}\`): watched, since nothing is granted while it is missing or weakened, and its CA published into it`),
  reason('coordination.k8s.io', ['leases'], ['create'], 'the leader-election Lease, created once (a create cannot be limited by name)'),
  reason('', ['secrets'], ['create'], 'the webhook\'s serving certificate, made when first needed (a create cannot be limited by name)'),
  reason('events.k8s.io', ['events'], ['create', 'patch'], 'Events about RBACDefinitions (cluster-scoped, so they go to `default`); a repeated one is patched into a series'),
]);
/** Rules told apart by their names (checked first). */
const EXACT = new Map<string, string>([
  [ruleKey({ apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [LEASE_NAME], verbs: ['get', 'update'] }), 'then read and renewed, by name'],
  [ruleKey({ apiGroups: [''], resources: ['secrets'], resourceNames: [WEBHOOK_CERT_SECRET], verbs: ['get', 'update'] }), 'the webhook\'s serving certificate: served, renewed in place once a third of its life is left, and the CA its configuration must trust, by name'],
]);

function rolesTable(options: RbacManagerManifestOptions): string[] {
  // The metrics-reader ClusterRole is not the manager's: it is for its scrapers, and bound to none of them by default.
  return rbacRolesTable(rbacManagerManifests(options), { why: (r) => EXACT.get(ruleKey(r)) ?? REASONS.get(about(r)), skip: [METRICS_READER_CLUSTER_ROLE], boundTo: true });
}

export function rbacManagerRbacMarkdown(): string {
  return [
    `**As shipped** (\`quorum rbac install\`; the manager is cluster-scoped by nature: RBACDefinitions are, and they bind in any namespace):`,
    '',
    ...rolesTable({}),
    '',
    '**With `--bindable-role edit --bindable-role view`** (chart value `bindableRoles`): `bind` on those roles only; the',
    'API server refuses any other binding the manager writes, and the definition reports `Refused`:',
    '',
    ...rolesTable({ bindableRoles: ['edit', 'view'] }),
    '',
    `The manager's ServiceAccount is \`${NAME}\`. One more ClusterRole is installed and bound to nothing:`,
    `\`${METRICS_READER_CLUSTER_ROLE}\` (\`nonResourceURLs: ["/metrics"]\`, \`get\`), for your Prometheus' ServiceAccount.`,
    '',
  ].join('\n');
}

/** `doc` with the text between the markers replaced by rbacManagerRbacMarkdown(); the markers must be there. */
export function withGeneratedRbacManagerRbac(doc: string): string {
  return withGeneratedSection(doc, { begin: RBAC_BEGIN, end: RBAC_END, file: SECURITY_FILE }, rbacManagerRbacMarkdown());
}
