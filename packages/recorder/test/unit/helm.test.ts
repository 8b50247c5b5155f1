// The recorder's Helm chart renders the same objects as recorderManifests() (namespace and CRD aside), for
// values with and without lists, and the committed chart is what the generator writes.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { helmBinary } from '@quorum/localkube';
import { parseAllDocuments, stringify } from 'yaml';
import type { GroupKind } from '../../src/api/changerecorder.ts';
import { CHART_DIR, KUBE_SYSTEM_GUARD, RANGES, VALUES, WEBHOOK_CALLERS_END, helmChart } from '../../src/deploy/helm.ts';
import { ALL_DEFAULT_RESOURCES, RECORDER_IMAGE, recordedKindRules, recorderManifests, usersWebhookPolicy } from '../../src/deploy/manifests.ts';

const repoRoot = join(import.meta.dirname, '..', '..', '..', '..');

interface Values {
  namespace: string;
  repository: string;
  tag: string;
  logLevel: string;
  size: string;
  className: string;
  storageSecrets: string[];
  groups: string[];
  recordedRules: Record<string, unknown>[];
  users: boolean;
  clusterWide: boolean;
  namespaces: string[];
  /** attribution.apiServerClientCA and apiServerClientNames. */
  clientCA?: string;
  clientNames?: string[];
  /** attribution.apiServerCIDRs and podCIDRs (the Nodes' are none: the renderer has no cluster to look up). */
  apiServerCIDRs?: string[];
  podCIDRs?: string[];
}

/** The webhook port's callers as the chart means them, written out here: the API server's CIDRs, else every address but the pods'. */
function callersYaml(v: Values, indent: string): string {
  const uniqueSorted = (xs: string[]): string[] => [...new Set(xs)].sort();
  const item = (cidr: string, except: string[] = []): string => `\n${indent}- ipBlock:\n${indent}    cidr: ${JSON.stringify(cidr)}${except.length ? `\n${indent}    except: ${JSON.stringify(except)}` : ''}`;
  if (v.apiServerCIDRs?.length) return uniqueSorted(v.apiServerCIDRs).map((c) => item(c)).join('');
  const pods = uniqueSorted(v.podCIDRs ?? []);
  const [v4, v6] = [pods.filter((c) => !c.includes(':')), pods.filter((c) => c.includes(':'))];
  return `${v4.length || !pods.length ? item('0.0.0.0/0', v4) : ''}${v6.length || !pods.length ? item('::/0', v6) : ''}`;
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** `\n{{- OPEN }}\nBODY\n{{- end }}` blocks, each replaced by what `each` makes of its body. */
const blocks = (text: string, open: string, each: (body: string) => string): string =>
  text.replace(new RegExp(`\\n${escape(open)}\\n([\\s\\S]*?)\\n\\{\\{- end \\}\\}`, 'g'), (_, body: string) => each(body));

const indentedYaml = (rules: Record<string, unknown>[]): string => (rules.length ? `\n${stringify(rules).trimEnd().split('\n').map((l) => `  ${l}`).join('\n')}` : '');

/** Just enough of Helm's template language for this chart: values, the release namespace, quote, range, with, if, toYaml, toJson. */
function render(template: string, v: Values): string {
  if (v.namespaces.includes('kube-system')) throw new Error('rbac.namespaces: the recorder is never granted kube-system');
  // The webhook's callers and rules first: the `if` around the webhook objects ends at the first `{{- end }}` otherwise.
  let out = template.replace(new RegExp(`\\n${escape(RANGES.webhookCallers)}\\n[\\s\\S]*?\\n( *)- ipBlock:[\\s\\S]*?${escape(WEBHOOK_CALLERS_END)}`), (_, indent: string) => callersYaml(v, indent));
  out = blocks(out, RANGES.webhookRules, (body) =>
    v.recordedRules.map((r) => `\n${body.replaceAll('{{ toJson .apiGroups }}', JSON.stringify(r['apiGroups'])).replaceAll('{{ toJson .resources }}', JSON.stringify(r['resources']))}`).join(''),
  );
  // The webhook's namespaceSelector (if not clusterWide … else … end), before the `if` around the webhook objects.
  out = out.replace(new RegExp(`\\n${escape(RANGES.webhookNamespaces)}\\n([\\s\\S]*?)\\n\\{\\{- else \\}\\}\\n([\\s\\S]*?)\\n\\{\\{- end \\}\\}`, 'g'), (_, namespaced: string, clusterWide: string) =>
    `\n${v.clusterWide ? clusterWide : namespaced.replace('{{ .Values.rbac.namespaces | uniq | sortAlpha | toJson }}', JSON.stringify([...new Set(v.namespaces)].sort()))}`,
  );
  out = blocks(out, RANGES.usersWebhook, (body) => (v.users ? `\n${body}` : ''));
  out = blocks(out, RANGES.clientNames, (body) => (v.clientCA && v.clientNames?.length ? `\n${body}` : ''));
  out = blocks(out, RANGES.clientCA, (body) => (v.clientCA ? `\n${body}` : ''));
  out = out.replace(`${KUBE_SYSTEM_GUARD}\n`, '');
  out = blocks(out, RANGES.recordedNamespaces, (body) =>
    (v.clusterWide || v.recordedRules.length === 0 ? [] : [...new Set(v.namespaces)].sort())
      .map((ns) => `\n${body.replaceAll('{{ $ns }}', ns).replaceAll('{{ $.Release.Namespace }}', v.namespace).replace(`\n${RANGES.roleRules}`, indentedYaml(v.recordedRules))}`)
      .join(''),
  );
  out = blocks(out, RANGES.clusterWide, (body) => (v.clusterWide ? `\n${body}` : ''));
  out = blocks(out, RANGES.secrets, (body) =>
    [...new Set(v.storageSecrets)].sort().map((s, i) => `\n${body.replaceAll('{{ $i }}', String(i)).replaceAll('{{ $s }}', s)}`).join(''),
  );
  out = blocks(out, RANGES.groups, (body) => v.groups.map((g) => `\n${body.replaceAll('{{ . }}', g)}`).join(''));
  out = blocks(out, RANGES.storageClass, (body) => (v.className ? `\n${body.replaceAll('{{ . }}', v.className)}` : ''));
  out = out.replaceAll(`\n${RANGES.recordedRules}`, indentedYaml(v.recordedRules));
  out = out
    .replaceAll('{{ .Release.Namespace }}', v.namespace)
    .replaceAll('{{ .Values.image.repository }}', v.repository)
    .replaceAll('{{ .Values.image.tag }}', v.tag)
    .replaceAll('{{ .Values.logLevel }}', v.logLevel)
    .replaceAll('{{ .Values.storage.size | quote }}', JSON.stringify(v.size))
    .replaceAll('{{ .Values.attribution.users | quote }}', JSON.stringify(String(v.users)))
    .replaceAll('{{ .Values.attribution.apiServerClientCA | quote }}', JSON.stringify(v.clientCA ?? ''))
    .replaceAll('{{ join "," .Values.attribution.apiServerClientNames | quote }}', JSON.stringify((v.clientNames ?? []).join(',')));
  assert.doesNotMatch(out, /\{\{/, 'every template expression rendered');
  return out;
}

const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';

const objectsOf = (text: string): unknown[] => parseAllDocuments(text).map((d) => d.toJS() as unknown).filter((o) => o !== null);

test('the chart renders exactly the objects of recorderManifests (namespace and CRD aside)', () => {
  const chart = helmChart();
  const kinds: GroupKind[] = [{ group: '', kind: 'ConfigMap' }, { group: 'apps', kind: 'Deployment' }];
  const cases: (Values & { kinds: readonly GroupKind[] })[] = [
    { namespace: 'ops', repository: 'registry.example/recorder', tag: '9.9.9', logLevel: 'debug', size: '5Gi', className: 'fast', storageSecrets: ['s3-b', 'minio.creds', 's3-b'], groups: ['team-a', 'team-b'], recordedRules: recordedKindRules(kinds), users: true, clusterWide: false, namespaces: ['team-b', 'team-a'], kinds },
    { namespace: 'ops', repository: 'r', tag: '1', logLevel: 'info', size: '1Gi', className: '', storageSecrets: [], groups: ['g'], recordedRules: recordedKindRules(kinds), users: true, clusterWide: true, namespaces: ['ignored'], kinds },
    { namespace: 'quorum-system', repository: VALUES.image.repository, tag: VALUES.image.tag, logLevel: VALUES.logLevel, size: VALUES.storage.size, className: '', storageSecrets: [], groups: VALUES.history.groups, recordedRules: VALUES.rbac.recordedRules, users: VALUES.attribution.users, clusterWide: VALUES.rbac.clusterWide, namespaces: VALUES.rbac.namespaces, kinds: ALL_DEFAULT_RESOURCES },
    { namespace: 'quorum-system', repository: 'r', tag: '1', logLevel: 'info', size: '1Gi', className: '', storageSecrets: [], groups: ['system:authenticated'], recordedRules: VALUES.rbac.recordedRules, users: true, clusterWide: false, namespaces: ['default'], kinds: ALL_DEFAULT_RESOURCES },
    { namespace: 'x', repository: 'r', tag: '1', logLevel: 'info', size: '1Gi', className: '', storageSecrets: [], groups: [], recordedRules: [], users: false, clusterWide: false, namespaces: ['a'], kinds: [] },
    // The API server's client CA, with and without allowed names.
    { namespace: 'ops', repository: 'r', tag: '1', logLevel: 'info', size: '1Gi', className: '', storageSecrets: ['s'], groups: ['g'], recordedRules: recordedKindRules(kinds), users: true, clusterWide: false, namespaces: ['a'], kinds, clientCA: CA_PEM, clientNames: ['kube-apiserver-webhook-client', 'other'] },
    { namespace: 'ops', repository: 'r', tag: '1', logLevel: 'info', size: '1Gi', className: '', storageSecrets: [], groups: ['g'], recordedRules: recordedKindRules(kinds), users: true, clusterWide: false, namespaces: ['a'], kinds, clientCA: CA_PEM, clientNames: [] },
    // The webhook port's callers: the API server's CIDRs; the pods' refused (one family, both).
    { namespace: 'ops', repository: 'r', tag: '1', logLevel: 'info', size: '1Gi', className: '', storageSecrets: [], groups: ['g'], recordedRules: recordedKindRules(kinds), users: true, clusterWide: false, namespaces: ['a'], kinds, apiServerCIDRs: ['172.16.0.2/32', '172.16.0.0/28'] },
    { namespace: 'ops', repository: 'r', tag: '1', logLevel: 'info', size: '1Gi', className: '', storageSecrets: [], groups: ['g'], recordedRules: recordedKindRules(kinds), users: true, clusterWide: false, namespaces: ['a'], kinds, podCIDRs: ['10.1.0.0/16'] },
    { namespace: 'ops', repository: 'r', tag: '1', logLevel: 'info', size: '1Gi', className: '', storageSecrets: [], groups: ['g'], recordedRules: recordedKindRules(kinds), users: true, clusterWide: true, namespaces: ['a'], kinds, podCIDRs: ['fd00::/48', '10.1.0.0/16', '10.1.0.0/16'] },
  ];
  for (const { kinds: k, ...values } of cases) {
    const rendered = objectsOf(render(`${chart['templates/recorder.yaml']!}---\n${chart['templates/recorded-namespaces.yaml']!}---\n${chart['templates/users-webhook.yaml']!}`, values));
    const expected = recorderManifests({
      namespace: values.namespace,
      image: `${values.repository}:${values.tag}`,
      logLevel: values.logLevel,
      storageSize: values.size,
      ...(values.className ? { storageClassName: values.className } : {}),
      storageSecrets: values.storageSecrets,
      historyGroups: values.groups,
      kinds: k,
      usersWebhook: values.users,
      clusterWide: values.clusterWide,
      recordedNamespaces: values.namespaces,
      ...(values.clientCA ? { webhookClientCA: values.clientCA, webhookClientNames: values.clientNames ?? [] } : {}),
      ...(values.apiServerCIDRs ? { apiServerCIDRs: values.apiServerCIDRs } : {}),
      ...(values.podCIDRs ? { podCIDRs: values.podCIDRs } : {}),
    }).filter((o) => o.kind !== 'Namespace' && o.kind !== 'CustomResourceDefinition');
    // No group at all: the chart's `subjects:` is null where the manifests have [], the same RoleBinding to the API server.
    const normalized = (JSON.parse(JSON.stringify(expected)) as Record<string, unknown>[]).map((o) => (Array.isArray(o['subjects']) && o['subjects'].length === 0 ? { ...o, subjects: null } : o));
    // Helm renders the files in order: the recorded namespaces' Roles after the recorder's own objects.
    const webhookFile = (o: Record<string, unknown>): boolean => o['kind'] === 'ValidatingWebhookConfiguration' || o['kind'] === 'NetworkPolicy' || (o['metadata'] as { name?: string }).name === 'quorum-recorder-webhook';
    const order = (o: Record<string, unknown>): number => ((o['metadata'] as { name?: string }).name === 'quorum-recorder-recorded' ? 1 : webhookFile(o) ? 2 : 0);
    const sorted = [...normalized].sort((a, b) => order(a) - order(b));
    assert.deepEqual(rendered, sorted, `values ${JSON.stringify(values)}`);
  }
});

test('the chart refuses kube-system among rbac.namespaces, as the manifests do', () => {
  assert.match(KUBE_SYSTEM_GUARD, /fail "rbac\.namespaces: the recorder is never granted kube-system"/);
  assert.ok(helmChart()['templates/recorded-namespaces.yaml']!.startsWith(`# Generated by packages/recorder/scripts/generate.ts from src/deploy/manifests.ts.\n${KUBE_SYSTEM_GUARD}\n`));
  assert.throws(() => recorderManifests({ recordedNamespaces: ['team', 'kube-system'] }), /never granted namespace kube-system/);
});

test('the default values are the recorder image of this version and the default kinds, as recorderManifests() defaults to', () => {
  assert.equal(`${VALUES.image.repository}:${VALUES.image.tag}`, RECORDER_IMAGE);
  assert.deepEqual(VALUES.rbac.recordedRules, recordedKindRules(ALL_DEFAULT_RESOURCES));
  assert.ok(helmChart()['crds/history.quorum.dev_changerecorders.yaml']?.includes('kind: CustomResourceDefinition'));
});

test('the committed chart is what the generator writes', async () => {
  for (const [file, content] of Object.entries(helmChart())) {
    assert.equal(await readFile(join(repoRoot, CHART_DIR, file), 'utf8'), content, `${CHART_DIR}/${file} is stale: run node packages/recorder/scripts/generate.ts`);
  }
});

test("helm itself renders the users webhook's NetworkPolicy as usersWebhookPolicy() makes it: the API server's CIDRs, or every address but the pods'", async () => {
  const helm = await helmBinary();
  // helm reads and writes its config, cache and data directories even for `template`: keep them out of $HOME.
  const home = await mkdtemp(join(tmpdir(), 'quorum-recorder-helm-'));
  const env = { ...process.env, HELM_CONFIG_HOME: join(home, 'config'), HELM_CACHE_HOME: join(home, 'cache'), HELM_DATA_HOME: join(home, 'data') };
  try {
    const cases: { set: string[]; callers: { apiServerCIDRs?: string[]; podCIDRs?: string[] } }[] = [
      // `helm template` looks up no Nodes: no pod CIDR, so every address (the install warns; NOTES.txt says so).
      { set: [], callers: {} },
      { set: ['attribution.apiServerCIDRs={172.16.0.2/32,172.16.0.0/28}'], callers: { apiServerCIDRs: ['172.16.0.2/32', '172.16.0.0/28'] } },
      { set: ['attribution.podCIDRs={10.1.0.0/16,fd00::/48,10.1.0.0/16}'], callers: { podCIDRs: ['10.1.0.0/16', 'fd00::/48'] } },
      { set: ['attribution.podCIDRs={fd00::/48}'], callers: { podCIDRs: ['fd00::/48'] } },
    ];
    for (const { set, callers } of cases) {
      const args = ['template', 'r', join(repoRoot, CHART_DIR), '--namespace', 'ops', '--show-only', 'templates/users-webhook.yaml', '--set', 'attribution.users=true', ...set.flatMap((v) => ['--set', v])];
      const { stdout } = await promisify(execFile)(helm, args, { env });
      const policy = objectsOf(stdout).find((o) => (o as { kind?: string }).kind === 'NetworkPolicy');
      assert.deepEqual(policy, JSON.parse(JSON.stringify(usersWebhookPolicy('ops', callers))), set.join(' '));
    }
  } finally {
    await rm(home, { recursive: true, force: true });
  }
});
