// The recorder's Helm chart in deploy/helm/quorum-recorder, generated from the same objects as
// recorderManifests(), as the etcd operator's chart is from its manifests: they are rendered with sentinel
// values, which become template expressions, and lists (the recorded kinds' rules, the object stores'
// Secrets, the groups let through to the history endpoint) become ranges over values. The CRD goes in crds/,
// which Helm installs first and never deletes (uninstalling keeps every ChangeRecorder and record).
//
// Helm cannot ask the cluster's discovery, so the chart's recorded-kind rules are a value: by default list and
// watch on the default kinds (Secrets left out); `quorum history install --print -f <recorders>` derives them
// for given ChangeRecorders (the rules of its quorum-recorder-recorded Roles). They are granted by a Role and
// RoleBinding in each of rbac.namespaces (kube-system refused), or, with rbac.clusterWide, by the ClusterRole
// with Namespaces. The users webhook (attribution.users) is called for the same kinds in the same namespaces:
// its rules and namespaceSelector come from the same values, so they cannot disagree. Its NetworkPolicy admits
// the webhook's port from attribution.apiServerCIDRs, else from every address but the pods': attribution.podCIDRs,
// or the Nodes' spec.podCIDRs, which the chart reads at install time (Helm's lookup; `helm template` reads none).
import { stringify } from 'yaml';
import { GROUP, PLURAL } from '../api/changerecorder.ts';
import { changeRecorderCRDYAML } from '../api/crd.ts';
import {
  ALL_DEFAULT_RESOURCES,
  EVENTS_NAMESPACE,
  NAME,
  NAMESPACE_SELECTOR_RULE,
  RECORDER_IMAGE,
  RECORDER_VERSION,
  REFUSED_NAMESPACE,
  ownClusterRules,
  recordedKindRules,
  recordedNamespaceObjects,
  recorderManifests,
  usersWebhookObjects,
  usersWebhookPolicy,
  WEBHOOK_CLIENT_CA_DIR,
} from './manifests.ts';
import { WEBHOOK_CLIENT_CA_CONFIGMAP, WEBHOOK_PORT } from '../attribution/webhook.ts';

export const CHART_DIR = 'deploy/helm/quorum-recorder';

const SENTINELS = {
  namespace: 'quorum-sentinel-namespace',
  image: 'quorum-sentinel-image',
  logLevel: 'quorum-sentinel-loglevel',
  storageSize: 'quorum-sentinel-size',
  storageClass: 'quorum-sentinel-class',
  secret: 'quorum-sentinel-secret',
  group: 'quorum-sentinel-group',
  ruleGroup: 'quorum-sentinel-rulegroup',
  ruleResource: 'quorum-sentinel-ruleresource',
  recordedNamespace: 'quorum-sentinel-recordedns',
  recordedRules: 'quorum-sentinel-recordedrules',
  clientCA: '-----BEGIN CERTIFICATE-----quorum-sentinel-clientca',
  clientName: 'quorum-sentinel-clientname',
  callers: 'quorum-sentinel-callers',
} as const;

const TEMPLATE: [string, string][] = [
  [SENTINELS.namespace, '{{ .Release.Namespace }}'],
  [SENTINELS.image, '{{ .Values.image.repository }}:{{ .Values.image.tag }}'],
  [SENTINELS.logLevel, '{{ .Values.logLevel }}'],
  [SENTINELS.storageSize, '{{ .Values.storage.size | quote }}'],
];

/** Refuses kube-system among rbac.namespaces, as recorderManifests() does. */
export const KUBE_SYSTEM_GUARD = `{{- if has "${REFUSED_NAMESPACE}" .Values.rbac.namespaces }}{{ fail "rbac.namespaces: the recorder is never granted ${REFUSED_NAMESPACE}" }}{{ end }}`;

/** The template expression that opens each range, and what it iterates. */
export const RANGES = {
  secrets: '{{- range $i, $s := .Values.storageSecrets | uniq | sortAlpha }}',
  groups: '{{- range .Values.history.groups }}',
  storageClass: '{{- with .Values.storage.className }}',
  // `with`: an empty list adds nothing (toYaml would write `[]` among the rules).
  recordedRules: '{{- with .Values.rbac.recordedRules }}{{ toYaml . | nindent 2 }}{{ end }}',
  /** The ClusterRole's cluster-wide part: Namespaces and the recorded kinds. */
  clusterWide: '{{- if .Values.rbac.clusterWide }}',
  /** A Role and RoleBinding per recorded namespace; none cluster-wide, or with no rules to grant. */
  recordedNamespaces: '{{- range $ns := ternary (list) (.Values.rbac.namespaces | uniq | sortAlpha) (or .Values.rbac.clusterWide (empty .Values.rbac.recordedRules)) }}',
  /** Inside that range, the Role's rules. */
  roleRules: '{{- with $.Values.rbac.recordedRules }}{{ toYaml . | nindent 2 }}{{ end }}',
  /** The users webhook's namespaceSelector: the recorded namespaces, or all but kube-system cluster-wide. */
  webhookNamespaces: '{{- if not .Values.rbac.clusterWide }}',
  webhookRules: '{{- range .Values.rbac.recordedRules }}',
  usersWebhook: '{{- if .Values.attribution.users }}',
  /** The API server's client CA: its ConfigMap, and the Deployment's volume, mount and variable for it. */
  clientCA: '{{- if .Values.attribution.apiServerClientCA }}',
  clientNames: '{{- if and .Values.attribution.apiServerClientCA .Values.attribution.apiServerClientNames }}',
  /** The users webhook's callers in its NetworkPolicy: opens the block that WEBHOOK_CALLERS_END closes. */
  webhookCallers: '{{- if .Values.attribution.apiServerCIDRs }}',
} as const;

/** Closes the callers' block (RANGES.webhookCallers). */
export const WEBHOOK_CALLERS_END = '{{- end }}{{/* the users webhook\'s callers */}}';

/** The pod CIDRs refused the webhook's port (JSON): attribution.podCIDRs, or every Node's spec.podCIDRs; sorted, each once. */
const POD_CIDRS_HELPER = `{{- define "quorum-recorder.podCIDRs" -}}
{{- $pods := .Values.attribution.podCIDRs | default list }}
{{- if not $pods }}{{- range (lookup "v1" "Node" "" "").items }}{{- $pods = concat $pods (.spec.podCIDRs | default list) }}{{- end }}{{- end }}
{{- $pods | uniq | sortAlpha | toJson }}
{{- end }}
`;

/** webhookCallerPeers() in Helm's template language, its list items at `indent`. */
function webhookCallersTemplate(indent: string): string {
  const everyBut = (cidr: string, family: string): string[] => [
    `{{- if or ${family} (not $pods) }}`,
    `${indent}- ipBlock:`,
    `${indent}    cidr: ${JSON.stringify(cidr)}`,
    `{{- with ${family} }}`,
    `${indent}    except: {{ toJson . }}`,
    '{{- end }}',
    '{{- end }}',
  ];
  return [
    RANGES.webhookCallers,
    '{{- range (.Values.attribution.apiServerCIDRs | uniq | sortAlpha) }}',
    `${indent}- ipBlock:`,
    `${indent}    cidr: {{ . | quote }}`,
    '{{- end }}',
    '{{- else }}',
    '{{- $pods := include "quorum-recorder.podCIDRs" . | fromJsonArray }}',
    '{{- $v4 := list }}{{- $v6 := list }}',
    '{{- range $pods }}{{- if contains ":" . }}{{- $v6 = append $v6 . }}{{- else }}{{- $v4 = append $v4 . }}{{- end }}{{- end }}',
    ...everyBut('0.0.0.0/0', '$v4'),
    ...everyBut('::/0', '$v6'),
    WEBHOOK_CALLERS_END,
  ].join('\n');
}

/** Warns after an install whose policy admits every address to the webhook's port (no pod CIDR given or found). */
const NOTES = `{{- if and .Values.attribution.users (not .Values.attribution.apiServerCIDRs) (not (include "quorum-recorder.podCIDRs" . | fromJsonArray)) }}
WARNING: the users webhook's NetworkPolicy admits every address to port ${WEBHOOK_PORT}, pods included: no Node has
spec.podCIDRs and attribution.podCIDRs is empty. Set attribution.apiServerCIDRs (the API server's addresses)
or attribution.podCIDRs (docs/recorder.md).
{{- end }}
`;

const repositoryOf = (image: string): string => image.slice(0, image.lastIndexOf(':'));

export const VALUES = {
  image: { repository: repositoryOf(RECORDER_IMAGE), tag: RECORDER_VERSION },
  logLevel: 'info',
  // The records' volume: a ReadWriteOnce claim; className empty takes the cluster's default StorageClass.
  storage: { size: '1Gi', className: '' },
  // Credentials Secrets of the object stores ChangeRecorders write to, mounted read-only (docs/recorder.md).
  storageSecrets: [] as string[],
  // Who may reach the history endpoint through the API server's proxy; each caller then sees what their RBAC allows.
  history: { groups: ['system:authenticated'] },
  rbac: {
    // Where the recorder may list and watch the recorded kinds: a Role in each of these namespaces (never
    // kube-system), or, with clusterWide, every namespace (needed for ChangeRecorders that choose namespaces by
    // selector or all, and for cluster-scoped kinds).
    clusterWide: false,
    namespaces: [EVENTS_NAMESPACE],
    // list and watch on the kinds to record (default: the ChangeRecorder default kinds, Quorum's included, no Secrets).
    recordedRules: recordedKindRules(ALL_DEFAULT_RESOURCES),
  },
  // The admission webhook that names, in the records of ChangeRecorders with spec.attribution.users, the user
  // who made each change; called for UPDATE and DELETE of the kinds above, failurePolicy Ignore.
  // apiServerClientCA: the CA (PEM) of the client certificate the API server presents to admission webhooks
  // (--admission-control-config-file); the webhook then answers only callers with one, of the common names in
  // apiServerClientNames (empty: any it signed). Empty: any caller that reaches the webhook's port (docs/security.md).
  // apiServerCIDRs: the API server's addresses; the webhook's port admits only them (its NetworkPolicy, where a
  // policy agent enforces it). Empty: every address but the pods' (podCIDRs; empty: the Nodes' spec.podCIDRs,
  // read at install). Where pods share the nodes' subnets (EKS's VPC CNI) set apiServerCIDRs (docs/recorder.md).
  attribution: { users: false, apiServerClientCA: '', apiServerClientNames: [] as string[], apiServerCIDRs: [] as string[], podCIDRs: [] as string[] },
};

const indentOf = (line: string): number => line.length - line.trimStart().length;

/**
 * Wraps the list item whose lines hold `sentinel` in `open` … `{{- end }}`: the item starts at the nearest
 * `- ` line above it that is less indented, and ends where the indentation returns to that line's.
 */
function rangeOverItem(text: string, sentinel: string, open: string, replacements: [string, string][]): string {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.includes(sentinel));
  if (at < 0) throw new Error(`helm: ${sentinel} not rendered`);
  let start = at;
  while (start >= 0 && !(/^\s*- /.test(lines[start]!) && indentOf(lines[start]!) < indentOf(lines[at]!))) start--;
  if (start < 0) throw new Error(`helm: ${sentinel} is not in a list item`);
  const itemIndent = indentOf(lines[start]!);
  let end = start + 1;
  while (end < lines.length && lines[end] !== '' && indentOf(lines[end]!) > itemIndent) end++;
  let item = lines.slice(start, end).join('\n');
  for (const [from, to] of replacements) item = item.replaceAll(from, to);
  return [...lines.slice(0, start), open, item, '{{- end }}', ...lines.slice(end)].join('\n');
}

/** The users webhook's NetworkPolicy, its callers (the webhook port's `from`) a sentinel that becomes webhookCallersTemplate. */
function webhookPolicyWithSentinel(): object {
  const policy = structuredClone(usersWebhookPolicy(SENTINELS.namespace)) as unknown as { spec: { ingress: { from?: unknown; ports: unknown }[] } };
  const rule = policy.spec.ingress.find((r) => r.from !== undefined);
  if (!rule) throw new Error("helm: the NetworkPolicy has no rule for the webhook's callers");
  const { ports } = rule;
  delete rule.from;
  delete (rule as { ports?: unknown }).ports;
  Object.assign(rule, { from: SENTINELS.callers, ports });
  return policy;
}

export function helmChart(): Record<string, string> {
  const objects = recorderManifests({
    namespace: SENTINELS.namespace,
    image: SENTINELS.image,
    logLevel: SENTINELS.logLevel,
    storageSize: SENTINELS.storageSize,
    storageClassName: SENTINELS.storageClass,
    storageSecrets: [SENTINELS.secret],
    historyGroups: [SENTINELS.group],
    kinds: [],
    webhookClientCA: SENTINELS.clientCA,
    webhookClientNames: [SENTINELS.clientName],
  }).filter((o) => o.kind !== 'Namespace' && o.kind !== 'CustomResourceDefinition');
  const render = (o: object): string => {
    let text = stringify(o, { lineWidth: 0 });
    if ((o as { kind?: string }).kind === 'ClusterRole' && (o as { metadata?: { name?: string } }).metadata?.name === NAME) {
      // The recorder's own rules as generated, then, cluster-wide, Namespaces and the recorded kinds' rules from values.
      if (JSON.stringify((o as { rules: unknown }).rules) !== JSON.stringify(ownClusterRules())) throw new Error('helm: the ClusterRole has rules beyond the recorder\'s own');
      const namespaces = stringify([NAMESPACE_SELECTOR_RULE]).trimEnd().split('\n').map((l) => `  ${l}`).join('\n');
      text = `${text.trimEnd()}\n${RANGES.clusterWide}\n${namespaces}\n${RANGES.recordedRules}\n{{- end }}\n`;
    }
    if (text.includes(SENTINELS.recordedRules)) text = text.replace(`rules: ${SENTINELS.recordedRules}`, `rules:\n${RANGES.roleRules}`);
    if (text.includes(SENTINELS.recordedNamespace)) {
      const selector = /( *)operator: In\n\s*values:\n\s*- quorum-sentinel-recordedns/;
      if (selector.test(text)) {
        text = text.replace(selector, `${RANGES.webhookNamespaces}\n$1operator: In\n$1values: {{ .Values.rbac.namespaces | uniq | sortAlpha | toJson }}\n{{- else }}\n$1operator: NotIn\n$1values: ["${REFUSED_NAMESPACE}"]\n{{- end }}`);
      }
      text = text.replaceAll(SENTINELS.recordedNamespace, '{{ $ns }}');
    }
    if (text.includes(SENTINELS.secret)) {
      // The credentials-0 volume and its mount, once per Secret (numbered as the manifests number them).
      for (let i = 0; i < 2; i++) text = rangeOverItem(text, SENTINELS.secret, RANGES.secrets, [[SENTINELS.secret, '{{ $s }}'], ['credentials-0', 'credentials-{{ $i }}']]);
    }
    if (text.includes(SENTINELS.group)) text = rangeOverItem(text, SENTINELS.group, RANGES.groups, [[SENTINELS.group, '{{ . }}']]);
    text = text.replace(new RegExp(`^(\\s*)storageClassName: ${SENTINELS.storageClass}$`, 'm'), `${RANGES.storageClass}\n$1storageClassName: {{ . }}\n{{- end }}`);
    for (const [from, to] of TEMPLATE) text = text.replaceAll(from, to);
    if (text.includes(SENTINELS.clientCA)) {
      text = text.replace(/^(\s*)ca\.crt: .*quorum-sentinel-clientca.*$/m, '$1ca.crt: {{ .Values.attribution.apiServerClientCA | quote }}');
      text = `${RANGES.clientCA}\n${text.trimEnd()}\n{{- end }}\n`;
    }
    if (text.includes(SENTINELS.clientName)) {
      text = rangeOverItem(text, `value: ${SENTINELS.clientName}`, RANGES.clientNames, [[SENTINELS.clientName, '{{ join "," .Values.attribution.apiServerClientNames | quote }}']]);
      for (const line of [`value: ${WEBHOOK_CLIENT_CA_DIR}/ca.crt`, `mountPath: ${WEBHOOK_CLIENT_CA_DIR}`, `name: ${WEBHOOK_CLIENT_CA_CONFIGMAP}`]) text = rangeOverItem(text, line, RANGES.clientCA, []);
    }
    if ((o as { kind?: string }).kind === 'Deployment') {
      const usersEnv = /(- name: USERS_WEBHOOK\n\s*value: )"false"/;
      if (!usersEnv.test(text)) throw new Error('helm: the Deployment has no USERS_WEBHOOK "false" to template');
      text = text.replace(usersEnv, '$1{{ .Values.attribution.users | quote }}');
    }
    if (text.includes(SENTINELS.ruleGroup)) {
      // The webhook's one rule, once per recorded-kind rule of the values: the same groups and resources.
      const line = (sentinel: string, field: string): [string, string] => [new RegExp(`${field}:\\n\\s*- ${sentinel}`).exec(text)![0], `${field}: {{ toJson .${field} }}`];
      text = rangeOverItem(text, SENTINELS.ruleGroup, RANGES.webhookRules, [line(SENTINELS.ruleGroup, 'apiGroups'), line(SENTINELS.ruleResource, 'resources')]);
    }
    if (text.includes(SENTINELS.callers)) {
      text = text.replace(new RegExp(`^( *)- from: ${SENTINELS.callers}$`, 'm'), (_, indent: string) => `${indent}- from:\n${webhookCallersTemplate(`${indent}    `)}`);
    }
    if (/quorum-sentinel/.test(text)) throw new Error(`helm: a sentinel left in ${(o as { kind?: string }).kind}`);
    return text;
  };
  const sentinelScope = { clusterWide: false, namespaces: [SENTINELS.recordedNamespace] };
  // The NetworkPolicy first, as the manifests put it before the Deployment (Helm sorts by kind anyway).
  const webhookObjects = [webhookPolicyWithSentinel(), ...usersWebhookObjects(SENTINELS.namespace, [{ group: SENTINELS.ruleGroup, kind: 'Sentinel' }], { [`${SENTINELS.ruleGroup}/Sentinel`]: SENTINELS.ruleResource }, sentinelScope)];
  // One Role and RoleBinding, whose namespace is the range's and whose rules are the values'. Inside the range
  // the release's namespace is `$.Release.Namespace`.
  const namespaceObjects = recordedNamespaceObjects(SENTINELS.namespace, sentinelScope, [{ group: '', kind: 'Sentinel' }]).map((o) => (o.kind === 'Role' ? { ...o, rules: SENTINELS.recordedRules } : o));
  const inRange = (text: string): string => text.replaceAll('{{ .Release.Namespace }}', '{{ $.Release.Namespace }}');
  return {
    'Chart.yaml': stringify({ apiVersion: 'v2', name: 'quorum-recorder', description: 'The Quorum change recorder', type: 'application', version: RECORDER_VERSION, appVersion: RECORDER_VERSION }),
    'values.yaml': `# Generated from packages/recorder/src/deploy/helm.ts; edit values at install time with --set or -f.\n${stringify(VALUES)}`,
    [`crds/${GROUP}_${PLURAL}.yaml`]: changeRecorderCRDYAML(),
    'templates/recorder.yaml': `# Generated by packages/recorder/scripts/generate.ts from src/deploy/manifests.ts.\n${objects.map(render).join('---\n')}`,
    'templates/recorded-namespaces.yaml': `# Generated by packages/recorder/scripts/generate.ts from src/deploy/manifests.ts.\n${KUBE_SYSTEM_GUARD}\n${RANGES.recordedNamespaces}\n${namespaceObjects.map((o) => `---\n${inRange(render(o))}`).join('')}{{- end }}\n`,
    'templates/users-webhook.yaml': `# Generated by packages/recorder/scripts/generate.ts from src/deploy/manifests.ts.\n${RANGES.usersWebhook}\n${webhookObjects.map(render).join('---\n')}{{- end }}\n`,
    'templates/_helpers.tpl': `{{/* Generated by packages/recorder/scripts/generate.ts. */}}\n${POD_CIDRS_HELPER}`,
    'templates/NOTES.txt': `{{/* Generated by packages/recorder/scripts/generate.ts. */}}\n${NOTES}`,
  };
}
