// The manifests (the smallest RBAC, the fail-closed webhook, an uninstall that keeps everyone's access), the
// `quorum rbac` command line, the FairwindsOps conversion and `kubectl quorum access`'s table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OpenObject } from '@quorum/runtime';
import { grantsOf, grantTable, parseAccessArgs, subjectName } from '../../src/cli/access.ts';
import { parseRbacArgs } from '../../src/cli/rbac.ts';
import { rbacManagerManifests, sampleDefinition } from '../../src/deploy/manifests.ts';
import { clusterRules } from '../../src/deploy/rbac.ts';
import { validateDefinition } from '../../src/api/validate.ts';
import { convertDefinition } from '../../src/migrate/fairwinds.ts';

test('the manager may bind roles but never escalate, write roles, or read secrets cluster-wide; a bindable list narrows bind', () => {
  const rules = clusterRules();
  const verbsOn = (resource: string): string[] => rules.filter((r) => r.resources.includes(resource)).flatMap((r) => r.verbs);
  assert.deepEqual(verbsOn('clusterroles').sort(), ['bind', 'list', 'watch']);
  assert.ok(!rules.some((r) => r.verbs.includes('escalate') || r.verbs.includes('*') || r.resources.includes('*')));
  assert.ok(!rules.some((r) => r.resources.includes('secrets')), 'no Secrets cluster-wide');
  assert.deepEqual(verbsOn('namespaces'), ['list', 'watch'], 'namespaces are only watched');
  const narrowed = clusterRules(['view', 'edit']).find((r) => r.verbs.includes('bind'));
  assert.deepEqual(narrowed?.resourceNames, ['edit', 'view']);
});

test('manifests: the webhook fails closed on CREATE and UPDATE only, two replicas, restricted pods', () => {
  const objects = rbacManagerManifests({ namespace: 'ops', image: 'img:1' });
  const config = objects.find((o) => o.kind === 'ValidatingWebhookConfiguration') as OpenObject & { webhooks: { failurePolicy: string; rules: { operations: string[] }[] }[] };
  assert.equal(config.webhooks[0]!.failurePolicy, 'Fail');
  assert.deepEqual(config.webhooks[0]!.rules[0]!.operations, ['CREATE', 'UPDATE'], 'DELETE (revoking) never waits for the webhook');
  const deployment = objects.find((o) => o.kind === 'Deployment') as OpenObject & { spec: { replicas: number; template: { spec: { containers: { image: string; securityContext: { runAsNonRoot?: boolean } }[] } } } };
  assert.equal(deployment.spec.replicas, 2);
  assert.equal(deployment.spec.template.spec.containers[0]!.image, 'img:1');
  assert.equal(objects.at(-1)!.kind, 'ValidatingWebhookConfiguration', 'the webhook last, once what serves it exists');
  assert.deepEqual(validateDefinition(sampleDefinition()), []);
});

test('quorum rbac: subcommands and their flags; mistakes are usage errors', () => {
  const a = parseRbacArgs(['install', '--namespace', 'ops', '--bindable-role', 'view', '--bindable-role', 'edit', '--replicas', '3', '--no-wait', '--kubeconfig', 'k']);
  assert.deepEqual([a.action, a.manifest, a.wait, a.connection], ['install', { namespace: 'ops', replicas: 3, bindableRoles: ['view', 'edit'] }, false, { kubeconfig: 'k' }]);
  assert.equal(parseRbacArgs(['import', '--dry-run']).dryRun, true);
  assert.equal(parseRbacArgs(['--help']).help, true);
  assert.throws(() => parseRbacArgs(['launch']), /expected one of install, uninstall, manifests, import, image/);
  assert.throws(() => parseRbacArgs(['install', '--replicas', '0']), /--replicas/);
  assert.throws(() => parseRbacArgs(['install', '--bogus']), /bogus/);
});

test('import: a FairwindsOps definition becomes ours unchanged in meaning; an empty selector beside a namespace is dropped', () => {
  const converted = convertDefinition({
    apiVersion: 'rbacmanager.reactiveops.io/v1beta1',
    kind: 'RBACDefinition',
    metadata: { name: 'team', uid: 'x', resourceVersion: '5' },
    rbacBindings: [
      {
        name: 'devs',
        subjects: [{ kind: 'ServiceAccount', name: 'ci', namespace: 'ci', imagePullSecrets: ['reg'] }, { kind: 'User', name: 'alice' }],
        clusterRoleBindings: [{ clusterRole: 'view' }],
        roleBindings: [{ clusterRole: 'edit', namespace: 'a', namespaceSelector: {} }, { role: 'deployer', namespaceSelector: { matchLabels: { t: 'x' } } }],
      },
    ],
  });
  assert.equal(converted.apiVersion, 'rbac.quorum.dev/v1alpha1');
  assert.deepEqual(converted.metadata.name, 'team');
  assert.equal(converted.metadata.uid, undefined);
  assert.deepEqual(converted.rbacBindings?.[0]?.roleBindings, [{ clusterRole: 'edit', namespace: 'a' }, { role: 'deployer', namespaceSelector: { matchLabels: { t: 'x' } } }]);
  assert.deepEqual(validateDefinition(converted), []);
});

test('kubectl quorum access: grants from the bindings the manager made, one row per subject, with the window', () => {
  const labels = { 'rbac.quorum.dev/definition': 'team', 'rbac.quorum.dev/binding': 'oncall' };
  const grants = grantsOf(
    [
      { kind: 'RoleBinding', metadata: { name: 'team-oncall-edit', namespace: 'prod', labels }, roleRef: { kind: 'ClusterRole', name: 'edit' }, subjects: [{ kind: 'User', name: 'alice' }, { kind: 'ServiceAccount', name: 'bot', namespace: 'ci' }] },
      { kind: 'ClusterRoleBinding', metadata: { name: 'team-oncall-view', labels }, roleRef: { kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'Group', name: 'sre' }] },
    ] as OpenObject[],
    (d, b) => (d === 'team' && b === 'oncall' ? '2026-06-01T20:00:00Z' : undefined),
  );
  assert.deepEqual(grants.map((g) => [g.subject, g.role, g.where, g.via, g.until]), [
    ['alice', 'ClusterRole edit', 'prod', 'team/oncall', '2026-06-01T20:00:00Z'],
    ['system:serviceaccount:ci:bot', 'ClusterRole edit', 'prod', 'team/oncall', '2026-06-01T20:00:00Z'],
    ['group:sre', 'ClusterRole view', '(cluster)', 'team/oncall', '2026-06-01T20:00:00Z'],
  ]);
  const table = grantTable(grants).split('\n');
  assert.match(table[0]!, /^SUBJECT\s+ROLE\s+WHERE\s+VIA\s+UNTIL$/);
  assert.equal(subjectName({ kind: 'Group', name: 'x' }), 'group:x');
  assert.deepEqual(parseAccessArgs(['--explain', 'alice', '-n', 'prod']), { help: false, explain: 'alice', namespace: 'prod', connection: {} });
});
