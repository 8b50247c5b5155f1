// The escalation webhook with a scripted access reviewer: which checks a definition needs (cluster-wide for a
// selector, only the new grants on an update), a refusal names each role and place, a failing review refuses
// (fail-closed), and deletes and valid grants pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AdmissionRequest, UserInfo } from '@quorum/runtime';
import type { RBACDefinition } from '../../src/api/rbacdefinition.ts';
import { describeCheck, requiredChecks, type ResourceCheck } from '../../src/admission/grants.ts';
import { escalationWebhook } from '../../src/admission/webhook.ts';

const alice = { kind: 'User' as const, name: 'alice' };
const def = (rbacBindings: RBACDefinition['rbacBindings']): RBACDefinition => ({ metadata: { name: 'd' }, rbacBindings });

function request(operation: 'CREATE' | 'UPDATE' | 'DELETE', object: RBACDefinition | undefined, oldObject?: RBACDefinition): AdmissionRequest<RBACDefinition> {
  return {
    uid: '1',
    kind: { group: 'rbac.quorum.dev', version: 'v1alpha1', kind: 'RBACDefinition' },
    resource: { group: 'rbac.quorum.dev', version: 'v1alpha1', resource: 'rbacdefinitions' },
    operation,
    userInfo: { username: 'bob', groups: ['team'] },
    ...(object ? { object } : {}),
    ...(oldObject ? { oldObject } : {}),
  };
}

test('the checks: bind each role where it is bound, cluster-wide for a selector, create for a ServiceAccount subject', () => {
  const checks = requiredChecks(
    def([
      {
        name: 'b',
        subjects: [alice, { kind: 'ServiceAccount', name: 'robot', namespace: 'ci' }],
        clusterRoleBindings: [{ clusterRole: 'view' }],
        roleBindings: [{ clusterRole: 'edit', namespace: 'a' }, { role: 'deployer', namespaceSelector: { matchLabels: { t: 'x' } } }],
      },
    ]),
    undefined,
  );
  assert.deepEqual(checks.map(describeCheck), ['bind ClusterRole view cluster-wide', 'bind ClusterRole edit in namespace a', 'bind Role deployer cluster-wide', 'create serviceaccounts in namespace ci']);
});

test('an update asks only for what it adds: a new role, or every role of a binding with a new subject or a longer window', () => {
  const before = def([{ name: 'b', subjects: [alice], roleBindings: [{ clusterRole: 'edit', namespace: 'a' }] }]);
  assert.deepEqual(requiredChecks(before, before), []);
  const moreRoles = def([{ name: 'b', subjects: [alice], roleBindings: [{ clusterRole: 'edit', namespace: 'a' }, { clusterRole: 'admin', namespace: 'a' }] }]);
  assert.deepEqual(requiredChecks(moreRoles, before).map(describeCheck), ['bind ClusterRole admin in namespace a']);
  const moreSubjects = def([{ name: 'b', subjects: [alice, { kind: 'User', name: 'eve' }], roleBindings: [{ clusterRole: 'edit', namespace: 'a' }] }]);
  assert.deepEqual(requiredChecks(moreSubjects, before).map(describeCheck), ['bind ClusterRole edit in namespace a']);
  const longer = def([{ name: 'b', subjects: [alice], roleBindings: [{ clusterRole: 'edit', namespace: 'a' }], expiresAfter: '8h' }]);
  assert.equal(requiredChecks(longer, before).length, 1);
  assert.deepEqual(requiredChecks(def([]), before), [], 'removing needs nothing');
});

test('an update that changes a namespaceSelector asks for the cluster-wide right to its role again: the new selector may reach namespaces the old did not', () => {
  const selecting = (namespaceSelector: { matchLabels?: Record<string, string> }): RBACDefinition => def([{ name: 'b', subjects: [alice], roleBindings: [{ clusterRole: 'admin', namespaceSelector }] }]);
  const before = selecting({ matchLabels: { team: 'a' } });
  assert.deepEqual(requiredChecks(before, before), [], 'the same selector: nothing new');
  assert.deepEqual(requiredChecks(selecting({}), before).map(describeCheck), ['bind ClusterRole admin cluster-wide'], 'widened to every namespace');
  assert.deepEqual(requiredChecks(selecting({ matchLabels: { team: 'b' } }), before).map(describeCheck), ['bind ClusterRole admin cluster-wide'], 'moved to other namespaces');
  // Beside an unchanged binding of the same role by another selector, one review still answers both.
  const two = def([
    { name: 'b', subjects: [alice], roleBindings: [{ clusterRole: 'admin', namespaceSelector: { matchLabels: { team: 'a' } } }, { clusterRole: 'admin', namespaceSelector: { matchLabels: { team: 'c' } } }] },
  ]);
  assert.deepEqual(requiredChecks(two, before).map((c) => c.source), ['rbacBindings[0] (b).roleBindings[1]']);
});

test('a view-only author who may update definitions cannot widen a selector granting them admin: refused by the webhook', async () => {
  const webhook = escalationWebhook((_user, check) => Promise.resolve({ allowed: check.namespace === 'a' }));
  const mine = (namespaceSelector: { matchLabels?: Record<string, string> }): RBACDefinition => def([{ name: 'b', subjects: [{ kind: 'User', name: 'bob' }], roleBindings: [{ clusterRole: 'admin', namespaceSelector }] }]);
  const result = await webhook(request('UPDATE', mine({}), mine({ matchLabels: { team: 'bob' } })));
  assert.ok(!result.allowed);
  assert.match(result.message, /bind ClusterRole admin cluster-wide/);
  assert.deepEqual(await webhook(request('UPDATE', mine({ matchLabels: { team: 'bob' } }), mine({ matchLabels: { team: 'bob' } }))), { allowed: true });
});

test('refused with every role and place named; allowed when every review allows; deletes pass unchecked', async () => {
  const asked: [UserInfo, ResourceCheck][] = [];
  const webhook = escalationWebhook((user, check) => {
    asked.push([user, check]);
    return Promise.resolve(check.name === 'view' ? { allowed: true } : { allowed: false, reason: 'no RBAC policy matched' });
  });
  const risky = def([{ name: 'b', subjects: [alice], clusterRoleBindings: [{ clusterRole: 'cluster-admin' }, { clusterRole: 'view' }], roleBindings: [{ clusterRole: 'edit', namespace: 'theirs' }] }]);
  const result = await webhook(request('CREATE', risky));
  assert.equal(result.allowed, false);
  assert.ok(!result.allowed);
  assert.match(result.message, /^bob may not grant what they could not bind themselves/);
  assert.match(result.message, /bind ClusterRole cluster-admin cluster-wide \(no RBAC policy matched\)/);
  assert.match(result.message, /bind ClusterRole edit in namespace theirs/);
  assert.doesNotMatch(result.message, /ClusterRole view/);
  assert.deepEqual(asked[0]![0], { username: 'bob', groups: ['team'] }, 'asked as the requesting user');
  assert.deepEqual(await webhook(request('CREATE', def([{ name: 'b', subjects: [alice], clusterRoleBindings: [{ clusterRole: 'view' }] }]))), { allowed: true });
  assert.deepEqual(await webhook(request('DELETE', undefined, risky)), { allowed: true });
});

test('fail-closed: a review that cannot be made refuses, with the error; an invalid definition is refused by its rule', async () => {
  const webhook = escalationWebhook(() => Promise.reject(new Error('connect ECONNREFUSED')));
  const result = await webhook(request('CREATE', def([{ name: 'b', subjects: [alice], clusterRoleBindings: [{ clusterRole: 'view' }] }])));
  assert.ok(!result.allowed);
  assert.match(result.message, /the access review failed: connect ECONNREFUSED/);
  const invalid = await webhook(request('CREATE', def([{ name: 'b', subjects: [alice], roleBindings: [{ clusterRole: 'view' }] }])));
  assert.ok(!invalid.allowed);
  assert.match(invalid.message, /exactly one of namespace or namespaceSelector/);
});
