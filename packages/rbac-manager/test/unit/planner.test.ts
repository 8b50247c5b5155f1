// The pure planner: what a definition asks for given the namespaces, roles and time; the writes that close
// the gap to what exists; and the status that reports it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OpenObject } from '@quorum/runtime';
import { parseDuration } from '../../src/api/duration.ts';
import type { RBACDefinition } from '../../src/api/rbacdefinition.ts';
import { planActions, ownedObjects, classifyExisting, type Action } from '../../src/plan/actions.ts';
import { concernsNamespace, concernsRole, desiredState, type World } from '../../src/plan/desired.ts';
import { boundedName, BINDING_LABEL, DEFINITION_LABEL, FAIRWINDS_LABEL, MANAGED_BY_LABEL, MANAGED_PULL_SECRETS_ANNOTATION } from '../../src/plan/names.ts';
import { matchesSelector } from '../../src/plan/selector.ts';
import { buildStatus } from '../../src/plan/status.ts';
import { bindingWindow, nextTransition } from '../../src/plan/window.ts';

const NOW = new Date('2026-06-01T12:00:00Z');
const UID = 'uid-def';

function world(namespaces: Record<string, Record<string, string>>, options: { clusterRoles?: string[]; roles?: string[]; terminating?: string[] } = {}): World {
  return {
    namespaces: new Map(Object.entries(namespaces).map(([name, labels]) => [name, { labels, terminating: (options.terminating ?? []).includes(name) }])),
    clusterRoleExists: (name) => (options.clusterRoles ?? ['view', 'edit', 'admin', 'cluster-admin']).includes(name),
    roleExists: (namespace, name) => (options.roles ?? []).includes(`${namespace}/${name}`),
  };
}

function definition(rbacBindings: RBACDefinition['rbacBindings'], name = 'team'): RBACDefinition {
  return { metadata: { name, uid: UID, generation: 3, creationTimestamp: '2026-06-01T10:00:00Z' }, rbacBindings };
}

const alice = { kind: 'User' as const, name: 'alice' };

function names(actions: Action[], type: Action['type']): string[] {
  return actions.filter((a) => a.type === type).map((a) => ('desired' in a ? `${a.desired.kind} ${a.desired.namespace ?? ''}/${a.desired.name}` : `${a.kind} ${a.namespace ?? ''}/${a.name}`));
}

test('label selectors match as the API server matches them', () => {
  const labels = { team: 'a', tier: 'prod' };
  assert.equal(matchesSelector({}, labels), true, 'empty selects all');
  assert.equal(matchesSelector({ matchLabels: { team: 'a' } }, labels), true);
  assert.equal(matchesSelector({ matchLabels: { team: 'b' } }, labels), false);
  assert.equal(matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['prod', 'stage'] }] }, labels), true);
  assert.equal(matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['prod'] }] }, labels), false);
  assert.equal(matchesSelector({ matchExpressions: [{ key: 'gone', operator: 'NotIn', values: ['x'] }] }, labels), true, 'NotIn holds for an absent label');
  assert.equal(matchesSelector({ matchExpressions: [{ key: 'team', operator: 'Exists' }] }, labels), true);
  assert.equal(matchesSelector({ matchExpressions: [{ key: 'team', operator: 'DoesNotExist' }] }, labels), false);
  assert.equal(matchesSelector({ matchLabels: { team: 'a' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['dev'] }] }, labels), false, 'all must hold');
});

test('role bindings by name and by selector, cluster role bindings, named, labelled and owned after FairwindsOps', () => {
  const def = definition([
    {
      name: 'devs',
      subjects: [alice, { kind: 'Group', name: 'devs' }],
      clusterRoleBindings: [{ clusterRole: 'view' }],
      roleBindings: [
        { clusterRole: 'edit', namespaceSelector: { matchLabels: { team: 'a' } } },
        { role: 'deployer', namespace: 'ci' },
      ],
    },
  ]);
  const desired = desiredState(def, world({ a1: { team: 'a' }, a2: { team: 'a' }, b1: { team: 'b' }, ci: {} }, { roles: ['ci/deployer'] }), NOW);
  const byName = new Map(desired.objects.map((d) => [`${d.kind} ${d.namespace ?? ''}/${d.name}`, d.object]));
  assert.deepEqual([...byName.keys()].sort(), ['ClusterRoleBinding /team-devs-view', 'RoleBinding a1/team-devs-edit', 'RoleBinding a2/team-devs-edit', 'RoleBinding ci/team-devs-deployer-ci']);
  const rb = byName.get('RoleBinding a1/team-devs-edit')!;
  assert.deepEqual(rb['roleRef'], { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' });
  assert.deepEqual(rb['subjects'], [
    { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' },
    { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'devs' },
  ]);
  assert.deepEqual(rb.metadata.ownerReferences, [{ apiVersion: 'rbac.quorum.dev/v1alpha1', kind: 'RBACDefinition', name: 'team', uid: UID, controller: true }]);
  const labels = rb.metadata.labels!;
  assert.equal(labels[MANAGED_BY_LABEL], 'quorum-rbac-manager');
  assert.equal(labels[FAIRWINDS_LABEL], 'reactiveops', "FairwindsOps' label, for tooling that looks for it");
  assert.equal(labels[DEFINITION_LABEL], 'team');
  assert.equal(labels[BINDING_LABEL], 'devs');
  assert.deepEqual((byName.get('RoleBinding ci/team-devs-deployer-ci')!['roleRef'] as { kind: string }).kind, 'Role');
  assert.deepEqual(desired.bindings[0]!.skipped, []);
});

test('a missing namespace, a terminating one and a missing role are skipped with the reason, and block nothing else', () => {
  const def = definition([
    { name: 'ops', subjects: [alice], roleBindings: [{ clusterRole: 'edit', namespace: 'later' }, { clusterRole: 'edit', namespace: 'here' }, { clusterRole: 'edit', namespace: 'dying' }, { role: 'nope', namespace: 'here' }] },
    { name: 'other', subjects: [alice], clusterRoleBindings: [{ clusterRole: 'missing' }, { clusterRole: 'view' }] },
  ]);
  const desired = desiredState(def, world({ here: {}, dying: {} }, { terminating: ['dying'] }), NOW);
  assert.deepEqual(desired.objects.map((d) => d.name).sort(), ['team-ops-edit', 'team-other-view']);
  assert.deepEqual(
    desired.bindings[0]!.skipped.map((s) => `${s.reason} ${s.namespace}`),
    ['NamespaceNotFound later', 'NamespaceNotFound dying', 'RoleNotFound here'],
  );
  assert.match(desired.bindings[0]!.skipped[0]!.message, /does not exist/);
  assert.deepEqual(desired.bindings[1]!.skipped.map((s) => `${s.reason} ${s.name}`), ['RoleNotFound team-other-missing']);
});

test('service account subjects: created with pull secrets and automount, merged when two bindings name one, skipped without their namespace', () => {
  const robot = { kind: 'ServiceAccount' as const, name: 'robot', namespace: 'ci', imagePullSecrets: ['reg-a'], automountServiceAccountToken: false };
  const def = definition([
    { name: 'one', subjects: [robot], roleBindings: [{ clusterRole: 'edit', namespace: 'ci' }] },
    { name: 'two', subjects: [{ ...robot, imagePullSecrets: ['reg-b'] }, { kind: 'ServiceAccount', name: 'ghost', namespace: 'nowhere' }] },
  ]);
  const desired = desiredState(def, world({ ci: {} }), NOW);
  const sas = desired.objects.filter((d) => d.kind === 'ServiceAccount');
  assert.equal(sas.length, 1);
  const sa = sas[0]!.object;
  assert.deepEqual(sa['imagePullSecrets'], [{ name: 'reg-a' }, { name: 'reg-b' }]);
  assert.equal(sa['automountServiceAccountToken'], false);
  assert.equal(sa.metadata.annotations?.[MANAGED_PULL_SECRETS_ANNOTATION], 'reg-a,reg-b');
  assert.equal(sa.metadata.labels?.[BINDING_LABEL], undefined, 'shared by bindings: labelled by definition only');
  const rb = desired.objects.find((d) => d.kind === 'RoleBinding')!.object;
  assert.deepEqual(rb['subjects'], [{ kind: 'ServiceAccount', name: 'robot', namespace: 'ci' }], 'no apiGroup for a ServiceAccount: the server stores none');
  assert.deepEqual(desired.bindings[1]!.skipped.map((s) => `${s.kind} ${s.reason}`), ['ServiceAccount NamespaceNotFound']);
});

test('time windows: notBefore, expiresAt, expiresAfter from the start or the creation, and the next transition', () => {
  assert.equal(parseDuration('90m'), 90 * 60_000);
  assert.equal(parseDuration('2d'), 2 * 86_400_000);
  assert.equal(parseDuration('0h'), undefined);
  const created = '2026-06-01T10:00:00Z';
  const b = { name: 'x', subjects: [alice] };
  assert.deepEqual(bindingWindow(b, created, NOW), { state: 'Active' });
  assert.equal(bindingWindow({ ...b, notBefore: '2026-06-01T13:00:00Z' }, created, NOW).state, 'Pending');
  assert.equal(bindingWindow({ ...b, expiresAt: '2026-06-01T12:00:00Z' }, created, NOW).state, 'Expired', 'ends exactly at expiresAt');
  assert.equal(bindingWindow({ ...b, expiresAfter: '1h' }, created, NOW).state, 'Expired', 'an hour after creation');
  const later = bindingWindow({ ...b, notBefore: '2026-06-01T11:30:00Z', expiresAfter: '1h' }, created, NOW);
  assert.deepEqual(later, { state: 'Active', endsAt: new Date('2026-06-01T12:30:00Z') });
  assert.equal(bindingWindow({ ...b, expiresAt: 'not a time' }, created, NOW).state, 'Expired', 'an unreadable window grants nothing');
  const pending = bindingWindow({ ...b, notBefore: '2026-06-01T13:00:00Z', expiresAt: '2026-06-01T14:00:00Z' }, created, NOW);
  assert.deepEqual(nextTransition([later, pending, { state: 'Expired', endsAt: new Date('2026-06-01T11:00:00Z') }]), new Date('2026-06-01T12:30:00Z'));
  assert.equal(nextTransition([{ state: 'Active' }]), undefined);
});

test('a pending or expired binding makes nothing, and its objects are deleted as expired rather than revoked', () => {
  const robot = { kind: 'ServiceAccount' as const, name: 'robot', namespace: 'ci' };
  const def = definition([
    { name: 'oncall', subjects: [alice, robot], clusterRoleBindings: [{ clusterRole: 'admin' }], expiresAt: '2026-06-01T11:59:59Z' },
    { name: 'soon', subjects: [alice], clusterRoleBindings: [{ clusterRole: 'view' }], notBefore: '2026-06-01T12:05:00Z' },
  ]);
  const desired = desiredState(def, world({ ci: {} }), NOW);
  assert.deepEqual(desired.objects, []);
  const owned = ownedObjects(
    [
      made('ClusterRoleBinding', undefined, 'team-oncall-admin', 'oncall'),
      made('ServiceAccount', 'ci', 'robot', undefined),
      made('ClusterRoleBinding', undefined, 'team-gone-view', 'gone'),
    ],
    UID,
  );
  const actions = planActions(desired, owned);
  assert.deepEqual(
    actions.map((a) => (a.type === 'delete' ? `${a.name} ${a.reason}` : a.type)),
    ['team-oncall-admin Expired', 'robot Expired', 'team-gone-view Revoked'],
  );
  const status = buildStatus(desired, new Map(), undefined, 3, NOW);
  assert.deepEqual(
    status.bindings?.map((b) => [b.name, b.state, b.startsAt, b.expiresAt]),
    [
      ['oncall', 'Expired', undefined, '2026-06-01T11:59:59Z'],
      ['soon', 'Pending', '2026-06-01T12:05:00Z', undefined],
    ],
  );
  assert.equal(status.nextTransition, '2026-06-01T12:05:00Z');
});

function made(kind: string, namespace: string | undefined, name: string, binding: string | undefined, extra: Partial<OpenObject> = {}): OpenObject {
  return {
    apiVersion: kind === 'ServiceAccount' ? 'v1' : 'rbac.authorization.k8s.io/v1',
    kind,
    metadata: { name, ...(namespace ? { namespace } : {}), labels: binding ? { [BINDING_LABEL]: binding } : {}, ownerReferences: [{ apiVersion: 'rbac.quorum.dev/v1alpha1', kind: 'RBACDefinition', name: 'team', uid: UID, controller: true }] },
    ...extra,
  };
}

test('actions: create what is missing, revert what was edited, recreate on a new role, nothing when all is in place', () => {
  const def = definition([{ name: 'devs', subjects: [alice], roleBindings: [{ clusterRole: 'edit', namespace: 'a' }, { clusterRole: 'view', namespace: 'b' }] }]);
  const desired = desiredState(def, world({ a: {}, b: {}, c: {} }), NOW);
  assert.deepEqual(names(planActions(desired, new Map()), 'create'), ['RoleBinding a/team-devs-edit', 'RoleBinding b/team-devs-view']);

  const inPlace = desired.objects.map((d) => structuredClone(d.object));
  assert.deepEqual(planActions(desired, ownedObjects(inPlace, UID)), [], 'steady state: no writes');

  const edited = structuredClone(inPlace);
  (edited[0]!['subjects'] as unknown[]).push({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'mallory' });
  (edited[1]!['roleRef'] as { name: string }).name = 'admin';
  const actions = planActions(desired, ownedObjects(edited, UID));
  assert.deepEqual(names(actions, 'update'), ['RoleBinding a/team-devs-edit']);
  assert.deepEqual(names(actions, 'recreate'), ['RoleBinding b/team-devs-view']);
});

test('foreign objects: never in the owned set; a create that finds a name taken tells ours, FairwindsOps\' and anyone else\'s apart', () => {
  const foreign: OpenObject = { kind: 'RoleBinding', metadata: { name: 'team-devs-edit', namespace: 'a', labels: { [BINDING_LABEL]: 'devs' } } };
  const otherDefinition = made('RoleBinding', 'a', 'team-devs-edit-2', 'devs');
  otherDefinition.metadata.ownerReferences![0]!.uid = 'someone-else';
  assert.equal(ownedObjects([foreign, otherDefinition], UID).size, 0);
  const def = { name: 'team', uid: UID };
  assert.equal(classifyExisting(foreign, def), 'taken');
  assert.equal(classifyExisting(made('RoleBinding', 'a', 'team-devs-edit', 'devs'), def), 'ours');
  const fairwinds: OpenObject = {
    kind: 'RoleBinding',
    metadata: { name: 'team-devs-edit', namespace: 'a', labels: { 'rbac-manager': 'reactiveops' }, ownerReferences: [{ apiVersion: 'rbacmanager.reactiveops.io/v1beta1', kind: 'RBACDefinition', name: 'team', uid: 'old' }] },
  };
  assert.equal(classifyExisting(fairwinds, def), 'adopt');
  assert.equal(classifyExisting(fairwinds, { name: 'other', uid: UID }), 'taken', 'only the definition of the same name adopts');
});

test('status: per binding the namespaces in place, what is skipped and why; Ready and Degraded', () => {
  const def = definition([{ name: 'devs', subjects: [alice], roleBindings: [{ clusterRole: 'edit', namespaceSelector: { matchLabels: { t: 'a' } } }, { clusterRole: 'edit', namespace: 'later' }] }]);
  const desired = desiredState(def, world({ a1: { t: 'a' }, a2: { t: 'a' } }), NOW);
  const waiting = buildStatus(desired, new Map(), undefined, 3, NOW);
  assert.deepEqual(waiting.bindings?.[0]?.namespaces, ['a1', 'a2']);
  assert.equal(waiting.observedGeneration, 3);
  const ready = waiting.conditions!.find((c) => c.type === 'Ready')!;
  assert.deepEqual([ready.status, ready.reason], ['False', 'Waiting']);
  assert.match(ready.message, /devs: RoleBinding later\/team-devs-edit: namespace later does not exist/);
  assert.equal(waiting.conditions!.find((c) => c.type === 'Degraded')!.status, 'False');

  const taken = new Map([['devs', [{ kind: 'RoleBinding' as const, namespace: 'a2', name: 'team-devs-edit', reason: 'NameTaken' as const, message: 'a RoleBinding the manager did not make has this name' }]]]);
  const degraded = buildStatus(desired, taken, waiting, 3, NOW);
  assert.deepEqual(degraded.bindings?.[0]?.namespaces, ['a1']);
  assert.deepEqual(degraded.bindings?.[0]?.skipped?.map((s) => s.reason), ['NamespaceNotFound', 'NameTaken']);
  const d = degraded.conditions!.find((c) => c.type === 'Degraded')!;
  assert.deepEqual([d.status, d.reason], ['True', 'Skipped']);

  const all = buildStatus(desiredState(definition([{ name: 'devs', subjects: [alice], clusterRoleBindings: [{ clusterRole: 'view' }] }]), world({}), NOW), new Map(), undefined, 1, NOW);
  assert.deepEqual(all.conditions!.map((c) => `${c.type}=${c.status}/${c.reason}`), ['Ready=True/InPlace', 'Degraded=False/AsAsked']);
  assert.deepEqual(all.bindings?.[0]?.clusterRoleBindings, ['team-devs-view']);
});

test('which namespace and role changes concern a definition (the controller maps watch events with it)', () => {
  const def = definition([
    { name: 'a', subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: 'ci' }], roleBindings: [{ clusterRole: 'edit', namespace: 'fixed' }, { role: 'deployer', namespaceSelector: { matchLabels: { team: 'x' } } }] },
    { name: 'b', subjects: [alice], clusterRoleBindings: [{ clusterRole: 'view' }] },
  ]);
  assert.equal(concernsNamespace(def, 'fixed', {}), true);
  assert.equal(concernsNamespace(def, 'ci', {}), true);
  assert.equal(concernsNamespace(def, 'other', { team: 'x' }), true);
  assert.equal(concernsNamespace(def, 'other', { team: 'y' }), false);
  assert.equal(concernsRole(def, 'ClusterRole', 'view'), true);
  assert.equal(concernsRole(def, 'ClusterRole', 'edit'), true);
  assert.equal(concernsRole(def, 'Role', 'deployer'), true);
  assert.equal(concernsRole(def, 'ClusterRole', 'deployer'), false);
});

test('names too long for the API server keep their start and end with a hash of the whole', () => {
  const long = `team-${'x'.repeat(300)}`;
  const bounded = boundedName(long);
  assert.equal(bounded.length <= 253, true);
  assert.ok(bounded.startsWith('team-xxx'));
  assert.notEqual(boundedName(`${long}a`), boundedName(`${long}b`));
  assert.equal(boundedName('short'), 'short');
});

test('a ServiceAccount of ours keeps nothing its definition no longer sets: pull secrets, automount and their annotation are removed, not only left out of the apply', () => {
  const def = definition([{ name: 'bots', subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: 'ci' }] }]);
  const desired = desiredState(def, world({ ci: {} }), NOW);
  const observed = made('ServiceAccount', 'ci', 'robot', undefined, { imagePullSecrets: [{ name: 'registry' }], automountServiceAccountToken: false });
  observed.metadata.annotations = { 'rbacmanager.reactiveops.io/managed-pull-secrets': 'registry', 'kept.example.com/note': 'x' };
  const actions = planActions(desired, ownedObjects([observed], UID));
  assert.deepEqual(actions.map((a) => (a.type === 'update' ? a.remove : a.type)), [
    { imagePullSecrets: null, automountServiceAccountToken: null, metadata: { annotations: { 'rbacmanager.reactiveops.io/managed-pull-secrets': null } } },
  ]);
  const clean = structuredClone(desired.objects[0]!.object);
  clean.metadata.annotations = { 'kept.example.com/note': 'x' };
  assert.deepEqual(planActions(desired, ownedObjects([clean], UID)), [], 'nothing left over: nothing written');
});
