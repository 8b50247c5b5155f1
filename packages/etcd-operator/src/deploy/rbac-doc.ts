// The operator's RBAC as docs/security.md prints it, generated from the manifests themselves (issue 23 asks
// for the generated RBAC of each scope, line by line): every Role and ClusterRole `quorum manifests` prints,
// namespace-scoped (the default) and cluster-wide, one line per rule with why the operator needs it.
// scripts/generate.ts writes it between the markers; test/unit/rbac.test.ts fails while it is stale.
import { rbacRolesTable, withGeneratedSection } from '@quorum/kit';
import { CLUSTER_GRANTS, METRICS_READER_CLUSTER_ROLE, NAMESPACE_GRANTS, operatorManifests, type ManifestOptions } from './manifests.ts';

/** The document whose RBAC section is generated, relative to the repository root. */
export const SECURITY_FILE = 'docs/security.md';
const BEGIN = '<!-- generated: rbac (packages/etcd-operator/src/deploy/rbac-doc.ts); do not edit -->';
const END = '<!-- end of generated rbac -->';

const whyOf = new Map([...CLUSTER_GRANTS, ...NAMESPACE_GRANTS].map((g) => [JSON.stringify(g.rule), g.why]));

/** One table of the roles `options` install (the kit's table): object, API group, resource, verbs, names, why. */
function rolesTable(options: ManifestOptions): string[] {
  // The metrics-reader ClusterRole is not the operator's: it is for its scrapers, and bound to none of them by default.
  return rbacRolesTable(operatorManifests(options), { why: (r) => whyOf.get(JSON.stringify(r)), skip: [METRICS_READER_CLUSTER_ROLE] });
}

export function rbacMarkdown(): string {
  return [
    '**Namespace-scoped** (the default: `quorum install`, or `--namespaces default`; a Role and RoleBinding',
    '`quorum-etcd-operator-watch` like the first in each tenant namespace given):',
    '',
    ...rolesTable({}),
    '',
    '**Cluster-wide** (`quorum install --cluster-wide`, chart value `clusterWide: true`):',
    '',
    ...rolesTable({ clusterWide: true }),
    '',
    'Each role is bound (a RoleBinding or ClusterRoleBinding of the same name) to the ServiceAccount',
    '`quorum-etcd-operator` in the operator\'s namespace and to nothing else. Without webhooks (`--no-webhooks`),',
    'the webhooks\' ClusterRole and its three rules are not installed.',
    '',
    `One more ClusterRole is installed and bound to nothing: \`${METRICS_READER_CLUSTER_ROLE}\` (\`nonResourceURLs: ["/metrics"]\`,`,
    '`get`). The operator serves /metrics over HTTPS on port 8443 (`metrics`) only to a bearer token that a TokenReview',
    'accepts and a SubjectAccessReview allows by this role: bind your Prometheus\' ServiceAccount to it.',
    '',
  ].join('\n');
}

/** `doc` with the text between the markers replaced by rbacMarkdown(); the markers must be there. */
export function withGeneratedRbac(doc: string): string {
  return withGeneratedSection(doc, { begin: BEGIN, end: END, file: SECURITY_FILE }, rbacMarkdown());
}
