// The Redis operator's RBAC as docs/security.md prints it, generated from operatorManifests() (issue 23 asks for
// each operator's generated RBAC with and without cluster scope, line by line), in the kit's table: every Role and
// ClusterRole the manifests bind, namespaced (the default) and cluster-wide, one line per rule with why the
// operator needs it. A rule without a reason here stops the generator. scripts/generate.ts writes it between the
// markers; test/unit/rbac-doc.test.ts fails while it is stale.
import { rbacRolesTable, ruleKey, withGeneratedSection, type DocRule } from '@quorum/kit';
import { BACKUP_PLURAL } from '../api/backup.ts';
import { SCHEDULE_PLURAL } from '../api/schedule.ts';
import { GROUP, PLURAL } from '../api/redis.ts';
import { WEBHOOK_CERT_SECRET } from '../operator/config.ts';
import { LEASE_NAME } from '../operator/operator.ts';
import { VALIDATING_WEBHOOK } from '../webhooks/credentials.ts';
import { METRICS_READER_CLUSTER_ROLE, NAME, operatorManifests, type ManifestOptions } from './manifests.ts';

export const SECURITY_FILE = 'docs/security.md';
export const RBAC_BEGIN = '<!-- generated: redis rbac (packages/redis-operator/src/deploy/rbac-doc.ts); do not edit -->';
export const RBAC_END = '<!-- end of generated redis rbac -->';

/** A reason is found by what a rule is about (groups, resources, names), whatever its verbs. */
const about = (r: Pick<DocRule, 'apiGroups' | 'resources' | 'resourceNames'>): string => JSON.stringify([r.apiGroups ?? [], r.resources ?? [], r.resourceNames ?? []]);
const reason = (group: string, resource: string, why: string, resourceNames?: string[]): [string, string] => [about({ apiGroups: [group], resources: [resource], ...(resourceNames ? { resourceNames } : {}) }), why];

const REASONS = new Map<string, string>([
  reason(GROUP, PLURAL, 'the Redises: the controller\'s informer'),
  reason(GROUP, `${PLURAL}/status`, 'status: one merge patch, only when it changed'),
  reason(GROUP, BACKUP_PLURAL, 'RedisBackups: informer; get: the webhook reads the backup a bootstrap names; a schedule creates its backups and its retention deletes them'),
  reason(GROUP, `${BACKUP_PLURAL}/status`, 'status'),
  reason(GROUP, SCHEDULE_PLURAL, 'RedisBackupSchedules: informer'),
  reason(GROUP, `${SCHEDULE_PLURAL}/status`, 'status'),
  reason('batch', 'jobs', 'one Job per backup attempt, and a schedule\'s prune Jobs (a failed one deleted to run again); get: a Job at the name the cache has not seen'),
  reason('', 'pods', 'instances and Sentinels, made and removed one at a time; patch: the role label the Services select by'),
  reason('', 'persistentvolumeclaims', 'the instances\' volumes; deleted only on a scale-down with reclaimPolicy Delete'),
  reason('', 'services', 'the four Services of each Redis'),
  reason('', 'configmaps', '`<name>-config`, by server-side apply'),
  reason('', 'secrets', 'the password (read, or generated once), TLS CA and certificates (issued, renewed), user passwords and a backup\'s credentials Secret (its label) read; never listed or watched'),
  reason('networking.k8s.io', 'networkpolicies', 'each Redis\'s NetworkPolicy; get: whose is the one at its name'),
  reason('policy', 'poddisruptionbudgets', 'each Redis\'s PodDisruptionBudgets (node drains); get: whose is the one at a name'),
  reason('events.k8s.io', 'events', 'events about Redises and backups; a repeated one is patched into a series'),
  reason('coordination.k8s.io', 'leases', 'the leader-election Lease, created once (a create cannot be limited by name)'),
  reason('coordination.k8s.io', 'leases', 'then read and renewed, by name', [LEASE_NAME]),
  reason('authentication.k8s.io', 'tokenreviews', '/metrics (HTTPS): who a caller is'),
  reason('authorization.k8s.io', 'subjectaccessreviews', '/metrics: whether the caller may get it; the webhook: whether a backup\'s author may get its credentials Secret'),
  reason('', 'nodes', 'which Nodes are cordoned (only those are listed: a field selector), so a primary moves off one before a drain evicts it; read only'),
  reason('admissionregistration.k8s.io', 'validatingwebhookconfigurations', 'the webhook: its CA bundle published into its own configuration, by name', [VALIDATING_WEBHOOK]),
]);
/** Rules about the same thing for other reasons, told apart by their verbs too (checked first). */
const EXACT = new Map<string, string>([
  [ruleKey({ apiGroups: [''], resources: ['secrets'], verbs: ['create'] }), 'the webhook\'s serving certificate, made when first needed (a create cannot be limited by name)'],
]);
// The webhook certificate's own Secret, by name (the tenant rule on Secrets above has no names).
REASONS.set(about({ apiGroups: [''], resources: ['secrets'], resourceNames: [WEBHOOK_CERT_SECRET] }), 'the webhook\'s serving certificate: read by every replica, renewed in place once a third of its life is left, by name');

function rolesTable(options: ManifestOptions): string[] {
  // The metrics-reader ClusterRole is not the operator's: it is for its scrapers, and bound to none of them by default.
  return rbacRolesTable(operatorManifests(options), { why: (r) => EXACT.get(ruleKey(r)) ?? REASONS.get(about(r)), skip: [METRICS_READER_CLUSTER_ROLE], boundTo: true });
}

export function redisRbacMarkdown(): string {
  return [
    '**Namespace-scoped** (the default: `quorum redis install`, or `--namespaces default`; a Role and RoleBinding',
    `\`${NAME}\` like the one in \`default\` in each tenant namespace given):`,
    '',
    ...rolesTable({}),
    '',
    '**Cluster-wide** (`quorum redis install --cluster-wide`, chart value `clusterWide: true`):',
    '',
    ...rolesTable({ clusterWide: true }),
    '',
    `Without webhooks (\`--no-webhooks\`) the webhook's two roles are not installed. One more ClusterRole is installed`,
    `and bound to nothing: \`${METRICS_READER_CLUSTER_ROLE}\` (\`nonResourceURLs: ["/metrics"]\`, \`get\`), for your Prometheus' ServiceAccount.`,
    '',
  ].join('\n');
}

/** `doc` with the text between the markers replaced by redisRbacMarkdown(); the markers must be there. */
export function withGeneratedRedisRbac(doc: string): string {
  return withGeneratedSection(doc, { begin: RBAC_BEGIN, end: RBAC_END, file: SECURITY_FILE }, redisRbacMarkdown());
}
