// The writes of a reconcile against a scripted client: creates with their events and counts, a name found
// taken (ours after all, FairwindsOps' to adopt in place, or someone else's to leave alone), refusals reported
// in status, other failures kept for a retry, deletions that find nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AlreadyExistsError, ApiError, ForbiddenError, NotFoundError, type EventInput, type KubeObject, type OpenObject } from '@quorum/runtime';
import type { RBACDefinition } from '../../src/api/rbacdefinition.ts';
import { act, type ActDeps } from '../../src/controller/act.ts';
import type { Action } from '../../src/plan/actions.ts';
import { desiredState, type World } from '../../src/plan/desired.ts';

const definition: RBACDefinition = { metadata: { name: 'team', uid: 'uid-1', creationTimestamp: '2026-01-01T00:00:00Z' }, rbacBindings: [] };

const world: World = { namespaces: new Map([['a', { labels: {}, terminating: false }], ['ci', { labels: {}, terminating: false }]]), clusterRoleExists: () => true, roleExists: () => true };

function desiredOf(rbacBindings: RBACDefinition['rbacBindings']): ReturnType<typeof desiredState>['objects'] {
  return desiredState({ ...definition, rbacBindings }, world, new Date('2026-06-01T00:00:00Z')).objects;
}

interface Call {
  verb: string;
  name: string;
  body?: unknown;
}

function fakeDeps(behaviour: { create?: (obj: OpenObject) => Error | undefined; existing?: OpenObject; deleteError?: Error }): { deps: ActDeps; calls: Call[]; events: EventInput[]; counted: string[] } {
  const calls: Call[] = [];
  const events: EventInput[] = [];
  const counted: string[] = [];
  const client: ActDeps['client'] = {
    create: <T extends KubeObject>(_type: unknown, obj: T) => {
      calls.push({ verb: 'create', name: obj.metadata.name ?? '' });
      const err = behaviour.create?.(obj as unknown as OpenObject);
      return err ? Promise.reject(err) : Promise.resolve(obj);
    },
    apply: <T extends KubeObject>(_type: unknown, obj: T) => {
      calls.push({ verb: 'apply', name: obj.metadata.name ?? '' });
      return Promise.resolve(obj);
    },
    get: <T extends KubeObject>() => {
      calls.push({ verb: 'get', name: behaviour.existing?.metadata.name ?? '' });
      return behaviour.existing ? Promise.resolve(behaviour.existing as unknown as T) : Promise.reject(new NotFoundError('GET', '/x', 404, { reason: 'NotFound' }));
    },
    mergePatch: <T extends KubeObject>(_type: unknown, key: { name: string }, patch: unknown) => {
      calls.push({ verb: 'mergePatch', name: key.name, body: patch });
      return Promise.resolve({ metadata: { name: key.name } } as T);
    },
    delete: (_type: unknown, key: unknown) => {
      calls.push({ verb: 'delete', name: (key as { name: string }).name });
      return behaviour.deleteError ? Promise.reject(behaviour.deleteError) : Promise.resolve();
    },
  };
  const deps: ActDeps = {
    client,
    events: { record: (_obj: KubeObject, input: EventInput) => void events.push(input) },
    writes: { inc: (l) => void counted.push(`${l.kind}/${l.action}/${l.reason}`) },
    concurrency: 4,
  };
  return { deps, calls, events, counted };
}

const signal = new AbortController().signal;
const rb = desiredOf([{ name: 'devs', subjects: [{ kind: 'User', name: 'alice' }], roleBindings: [{ clusterRole: 'edit', namespace: 'a' }] }])[0]!;

test('a create: written, told in an event and counted', async () => {
  const { deps, calls, events, counted } = fakeDeps({});
  const outcome = await act(definition, [{ type: 'create', desired: rb }], deps, signal);
  assert.deepEqual(calls.map((c) => c.verb), ['create']);
  assert.deepEqual(events.map((e) => [e.reason, e.note]), [['Granted', 'created RoleBinding a/team-devs-edit (ClusterRole edit) for binding devs']]);
  assert.deepEqual(counted, ['RoleBinding/Create/Granted']);
  assert.deepEqual([outcome.skipped.size, outcome.transient.length], [0, 0]);
});

test("a name held by FairwindsOps' object for this definition: adopted in place (owner references replaced under its resourceVersion), then applied", async () => {
  const existing: OpenObject = {
    kind: 'RoleBinding',
    metadata: { name: 'team-devs-edit', namespace: 'a', resourceVersion: '42', labels: { 'rbac-manager': 'reactiveops' }, ownerReferences: [{ apiVersion: 'rbacmanager.reactiveops.io/v1beta1', kind: 'RBACDefinition', name: 'team', uid: 'old' }] },
  };
  const { deps, calls, events } = fakeDeps({ create: () => new AlreadyExistsError('POST', '/x', 409, { reason: 'AlreadyExists' }), existing });
  await act(definition, [{ type: 'create', desired: rb }], deps, signal);
  assert.deepEqual(calls.map((c) => c.verb), ['create', 'get', 'mergePatch', 'apply']);
  const patch = calls[2]!.body as { metadata: { resourceVersion: string; ownerReferences: { uid: string }[] } };
  assert.equal(patch.metadata.resourceVersion, '42');
  assert.deepEqual(patch.metadata.ownerReferences.map((o) => o.uid), ['uid-1']);
  assert.equal(events[0]!.reason, 'Adopted');
});

test("a name held by someone else's object: left alone and reported NameTaken; a foreign ServiceAccount without extras is simply used", async () => {
  const foreign: OpenObject = { kind: 'RoleBinding', metadata: { name: 'team-devs-edit', namespace: 'a' } };
  const taken = () => new AlreadyExistsError('POST', '/x', 409, { reason: 'AlreadyExists' });
  const { deps, calls } = fakeDeps({ create: taken, existing: foreign });
  const outcome = await act(definition, [{ type: 'create', desired: rb }], deps, signal);
  assert.deepEqual(calls.map((c) => c.verb), ['create', 'get']);
  assert.deepEqual(outcome.skipped.get('devs')?.map((s) => s.reason), ['NameTaken']);

  const sa = desiredOf([{ name: 'bots', subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: 'ci' }] }]).find((d) => d.kind === 'ServiceAccount')!;
  const plain = fakeDeps({ create: taken, existing: { kind: 'ServiceAccount', metadata: { name: 'default', namespace: 'ci' } } });
  assert.equal((await act(definition, [{ type: 'create', desired: sa }], plain.deps, signal)).skipped.size, 0);
});

test('refused writes (403, 422) are reported, other failures kept for a retry; a delete that finds nothing is done', async () => {
  const refused = fakeDeps({ create: () => new ForbiddenError('POST', '/x', 403, { reason: 'Forbidden', message: 'cannot bind' }) });
  const outcome = await act(definition, [{ type: 'create', desired: rb }], refused.deps, signal);
  assert.match(outcome.skipped.get('devs')![0]!.message, /403 Forbidden: cannot bind/);
  const flaky = fakeDeps({ create: () => new ApiError('POST', '/x', 500, { reason: 'InternalError' }) });
  const retry = await act(definition, [{ type: 'create', desired: rb }], flaky.deps, signal);
  assert.deepEqual([retry.skipped.size, retry.transient.length], [0, 1]);

  const gone = fakeDeps({ deleteError: new NotFoundError('DELETE', '/x', 404, { reason: 'NotFound' }) });
  const expired: Action = { type: 'delete', kind: 'RoleBinding', namespace: 'a', name: 'team-oncall-edit', reason: 'Expired', binding: 'oncall' };
  const done = await act(definition, [expired], gone.deps, signal);
  assert.deepEqual([done.skipped.size, done.transient.length], [0, 0]);
  assert.deepEqual([gone.events, gone.counted], [[], []], 'nothing revoked now: no event, no count');
  const there = fakeDeps({});
  await act(definition, [expired], there.deps, signal);
  assert.deepEqual(there.events.map((e) => [e.reason, e.note]), [['Expired', 'deleted RoleBinding a/team-oncall-edit: binding oncall expired']]);
  assert.deepEqual(there.counted, ['RoleBinding/Delete/Expired']);
});

test('a name held by our own object as asked (the cache lagged behind a create): nothing written, nothing told', async () => {
  const { deps, calls, events } = fakeDeps({ create: () => new AlreadyExistsError('POST', '/x', 409, { reason: 'AlreadyExists' }), existing: structuredClone(rb.object) });
  await act(definition, [{ type: 'create', desired: rb }], deps, signal);
  assert.deepEqual(calls.map((c) => c.verb), ['create', 'get']);
  assert.deepEqual(events, []);
});

test('an update that removes leftovers merge-patches them away before the apply; a recreate tells the deletion of the old binding too', async () => {
  const sa = desiredOf([{ name: 'bots', subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: 'ci' }] }]).find((d) => d.kind === 'ServiceAccount')!;
  const leftovers = fakeDeps({});
  await act(definition, [{ type: 'update', desired: sa, remove: { imagePullSecrets: null } }], leftovers.deps, signal);
  assert.deepEqual(leftovers.calls.map((c) => [c.verb, c.body]), [['mergePatch', { imagePullSecrets: null }], ['apply', undefined]]);

  const moved = fakeDeps({});
  await act(definition, [{ type: 'recreate', desired: rb }], moved.deps, signal);
  assert.deepEqual(moved.calls.map((c) => c.verb), ['delete', 'create']);
  assert.deepEqual(moved.counted, ['RoleBinding/Delete/Revoked', 'RoleBinding/Create/Granted']);
  assert.match(moved.events[0]!.note, /deleted RoleBinding a\/team-devs-edit: binding devs now grants \(ClusterRole edit\), and a role reference cannot change/);
});
