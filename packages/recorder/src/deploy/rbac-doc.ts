// The change recorder's RBAC as docs/security.md prints it, generated from recorderManifests() itself (issue 23
// asks for the generated RBAC of each operator with and without cluster scope, line by line): every Role and
// ClusterRole `quorum history install --print` prints for the sample ChangeRecorder (the default kinds in
// `default`) with the users webhook, namespaced (the default) and cluster-wide, one line per rule with why the
// recorder needs it. A rule without a reason here fails the generator, so a new rule cannot go unexplained.
// scripts/generate.ts writes it between the markers; test/unit/rbac-doc.test.ts fails while it is stale.
import { rbacRolesTable, ruleKey, withGeneratedSection, type DocRule } from '@quorum/kit';
import { USERS_WEBHOOK_CERT_SECRET, USERS_WEBHOOK_CONFIGURATION } from '../attribution/webhook.ts';
import { HISTORY_PORT_NAME, HISTORY_SERVICE } from '../history/protocol.ts';
import { LEASE_NAME } from '../operator/config.ts';
import { REDACTION_KEYS_SECRET } from '../store/redaction-keys.ts';
import { ALL_DEFAULT_RESOURCES, HISTORY_PROXY_ROLE, METRICS_READER_CLUSTER_ROLE, NAME, recordedKindRules, recorderManifests, type RecorderManifestOptions } from './manifests.ts';

/** The document whose recorder RBAC section is generated, relative to the repository root. */
export const SECURITY_FILE = 'docs/security.md';
export const RBAC_BEGIN = '<!-- generated: recorder rbac (packages/recorder/src/deploy/rbac-doc.ts); do not edit -->';
export const RBAC_END = '<!-- end of generated recorder rbac -->';

type Rule = DocRule;

/** Why each rule the recorder's manifests hold is there, keyed by the rule; the recorded kinds' rules apart. */
const REASONS = new Map<string, string>([
  [ruleKey({ apiGroups: ['history.quorum.dev'], resources: ['changerecorders'], verbs: ['list', 'watch'] }), "ChangeRecorders: the controller's informer, and the history endpoint's list of the stores they name"],
  [ruleKey({ apiGroups: ['history.quorum.dev'], resources: ['changerecorders/status'], verbs: ['patch'] }), 'status: one merge patch, only when it changed'],
  [ruleKey({ apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] }), 'the history endpoint and /metrics (HTTPS): who a caller is'],
  [ruleKey({ apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] }), 'the history endpoint: whether the caller may read the object asked for; /metrics: whether it may get /metrics'],
  [ruleKey({ apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'watch'] }), 'spec.namespaces.selector: which namespaces match (cluster-wide only)'],
  [ruleKey({ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] }), 'the leader-election Lease, created once (a create cannot be limited by name)'],
  [ruleKey({ apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [LEASE_NAME], verbs: ['get', 'update'] }), 'then read and renewed, by name'],
  [ruleKey({ apiGroups: [''], resources: ['secrets'], verbs: ['create'] }), 'the Secret of the stores\' redaction keys (and, with the users webhook, its serving certificate), made when first needed: a create cannot be limited by name'],
  [ruleKey({ apiGroups: [''], resources: ['secrets'], resourceNames: [REDACTION_KEYS_SECRET], verbs: ['get', 'patch'] }), "the stores' redaction HMAC keys, kept out of the stores they protect: read, and a new store's key added, by name"],
  [ruleKey({ apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] }), 'Events about ChangeRecorders (cluster-scoped, so they go to `default`); a repeated one is patched into a series'],
  [ruleKey({ apiGroups: [''], resources: ['services/proxy'], resourceNames: [`https:${HISTORY_SERVICE}:${HISTORY_PORT_NAME}`], verbs: ['get'] }), "not the recorder's: who may reach the history endpoint through the API server (what each caller then sees is decided per object by their own RBAC)"],
  [ruleKey({ apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], resourceNames: [USERS_WEBHOOK_CONFIGURATION], verbs: ['get', 'patch'] }), 'the users webhook: its CA bundle published into its own configuration, by name'],
  [ruleKey({ apiGroups: [''], resources: ['secrets'], resourceNames: [USERS_WEBHOOK_CERT_SECRET], verbs: ['get', 'update'] }), "the users webhook's serving certificate: read by every replica, renewed in place once a third of its life is left, by name"],
]);

/** The rules recordedKindRules() makes for the default kinds: list and watch on what the sample records. */
const RECORDED = new Set(recordedKindRules(ALL_DEFAULT_RESOURCES).map((r) => ruleKey(r as unknown as Rule)));
const RECORDED_WHY = 'recorded kinds, listed and watched by its informers only (here the defaults; an install grants what its ChangeRecorders name)';

function whyOf(rule: Rule): string | undefined {
  return REASONS.get(ruleKey(rule)) ?? (RECORDED.has(ruleKey(rule)) ? RECORDED_WHY : undefined);
}

/** One table of the roles `options` install (the kit's table): object, bound to, API group, resource, verbs, names, why. */
function rolesTable(options: RecorderManifestOptions): string[] {
  // The metrics-reader ClusterRole is not the recorder's: it is for its scrapers, and bound to none of them by default.
  return rbacRolesTable(recorderManifests(options), { why: whyOf, skip: [METRICS_READER_CLUSTER_ROLE], boundTo: true });
}

export function recorderRbacMarkdown(): string {
  return [
    '**Namespaced** (the default: `quorum history install` with the sample ChangeRecorder, the default kinds in',
    '`default`, and `spec.attribution.users`; a Role and RoleBinding `quorum-recorder-recorded` like the one in',
    '`default` in each namespace the ChangeRecorders name):',
    '',
    ...rolesTable({ usersWebhook: true }),
    '',
    '**Cluster-wide** (`quorum history install --cluster-wide`, chart value `rbac.clusterWide: true`; needed by',
    'ChangeRecorders that choose namespaces by `selector` or `all`):',
    '',
    ...rolesTable({ usersWebhook: true, clusterWide: true }),
    '',
    `The recorder's ServiceAccount is \`${NAME}\`; \`${HISTORY_PROXY_ROLE}\` is bound to the history endpoint's readers`,
    '(`system:authenticated` unless `historyGroups` says otherwise), not to the recorder. Without the users webhook the',
    `two \`quorum-recorder-webhook\` roles are not installed. One more ClusterRole is installed and bound to nothing:`,
    `\`${METRICS_READER_CLUSTER_ROLE}\` (\`nonResourceURLs: ["/metrics"]\`, \`get\`), for your Prometheus' ServiceAccount.`,
    '',
  ].join('\n');
}

/** `doc` with the text between the markers replaced by recorderRbacMarkdown(); the markers must be there. */
export function withGeneratedRecorderRbac(doc: string): string {
  return withGeneratedSection(doc, { begin: RBAC_BEGIN, end: RBAC_END, file: SECURITY_FILE }, recorderRbacMarkdown());
}
