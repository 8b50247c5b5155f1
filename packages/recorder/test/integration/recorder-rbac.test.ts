// The recorder installed as `quorum history install` installs it, from its own image and manifests, in a pod
// under its own ServiceAccount with the RBAC derived from one ChangeRecorder of the default kinds in one
// namespace: a Role there, nothing recorded cluster-wide. It records them, and the API server refuses it
// Secrets (by default), any other namespace, and any write, as a SubjectAccessReview, as an actual list with its
// token, and to the running recorder itself (Ready False WatchFailing, Forbidden) once its ChangeRecorder asks
// for Secrets; installing again with that spec grants them in that namespace only, and the same pod records them.
//
// The recorder runs in a namespace of its own that the suite deletes; uninstallRecorder removes the cluster-wide
// RBAC, so no recorder outlives the file (the other files run theirs in-process).
// What this file needs, for the test harness (docs/testing.md):
// @exclusive recorder
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { V1ClusterRole, V1Role, V1SubjectAccessReview } from '@kubernetes/client-node';
import { ClusterRoles, ConfigMaps, ForbiddenError, Roles, Secrets, resource, type Client } from '@quorum/runtime';
import { eventually, TestEnv } from '@quorum/localkube/testing';
import { API_VERSION, KIND, type ChangeRecorder, type ChangeRecorderSpec } from '../../src/api/changerecorder.ts';
import { buildRecorderImage } from '../../src/deploy/image.ts';
import { installRecorder, uninstallRecorder, type RecorderInstallResult } from '../../src/deploy/install.ts';
import { NAME, RECORDED_ROLE, ownClusterRules } from '../../src/deploy/manifests.ts';
import { ChangeRecorders } from '../../src/resources.ts';
import { REDACTION_KEYS_SECRET } from '../../src/store/redaction-keys.ts';

const SubjectAccessReviews = resource<V1SubjectAccessReview & { metadata: { name?: string } }>('authorization.k8s.io/v1', 'SubjectAccessReview', 'subjectaccessreviews', false);

let env: TestEnv;
let image: string;
let recorderNs: string;
let appNs: string;
/** A client with the recorder's own token (its ServiceAccount exists once installed). */
let recorderSA: Client | undefined;
const recorderName = `rbac-e2e-${Date.now().toString(36)}`;

const log = (m: string): void => void process.stderr.write(`[recorder-rbac] ${m}\n`);

function changeRecorder(spec: ChangeRecorderSpec): ChangeRecorder {
  return { apiVersion: API_VERSION, kind: KIND, metadata: { name: recorderName }, spec };
}

/** The default kinds (no spec.resources) of the one namespace. */
const defaultKinds = (): ChangeRecorderSpec => ({ namespaces: { names: [appNs] } });

async function install(spec: ChangeRecorderSpec): Promise<RecorderInstallResult> {
  // Only this file's ChangeRecorder decides the role: whatever another file left behind must not widen it.
  return installRecorder(env.client, { namespace: recorderNs, image, recorders: [changeRecorder(spec)], includeExisting: false, readyTimeoutMs: 180_000, log });
}

before(async () => {
  env = await TestEnv.start();
  const built = await buildRecorderImage();
  await env.kube.loadImage(built.archive);
  image = built.name;
  recorderNs = await env.namespace('recorder-rbac');
  appNs = await env.namespace('recorded');
});

after(async () => {
  recorderSA?.close();
  await uninstallRecorder(env.client, { namespace: recorderNs }).catch((err: Error) => log(`uninstall: ${err.message}`));
  await env.client.delete(ChangeRecorders, recorderName).catch(() => undefined);
  await env.stop();
});

/** What the API server answers for the recorder's ServiceAccount: allowed or not, and why. */
async function canRecorder(verb: string, group: string, resourceName: string, namespace?: string): Promise<{ allowed: boolean; reason: string }> {
  const review = await env.client.create(SubjectAccessReviews, {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    metadata: {},
    spec: {
      user: `system:serviceaccount:${recorderNs}:${NAME}`,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${recorderNs}`, 'system:authenticated'],
      resourceAttributes: { verb, group, resource: resourceName, ...(namespace ? { namespace } : {}) },
    },
  });
  return { allowed: review.status?.allowed === true, reason: review.status?.reason ?? '' };
}

async function readyOf(): Promise<{ status: string; reason: string; message: string; recordsWritten: number; kinds: string[] }> {
  const got = await env.client.get(ChangeRecorders, recorderName);
  const ready = got.status?.observedGeneration === got.metadata.generation ? got.status?.conditions?.find((c) => c.type === 'Ready') : undefined;
  return { status: ready?.status ?? 'Unknown', reason: ready?.reason ?? '', message: ready?.message ?? '', recordsWritten: got.status?.recordsWritten ?? 0, kinds: (got.status?.kinds ?? []).map((k) => k.kind).sort() };
}

test('installed with the RBAC derived from its ChangeRecorder, the recorder in its pod records the default kinds of its namespace', async () => {
  const result = await install(defaultKinds());
  assert.deepEqual(result.ready.map((r) => [r.name, r.status, r.reason]), [[recorderName, 'True', 'Recording']], JSON.stringify(result.ready));
  const clusterRole = (await env.client.get(ClusterRoles, NAME)) as V1ClusterRole;
  assert.deepEqual(clusterRole.rules, ownClusterRules(), 'cluster-wide, its own calls only: nothing recorded');
  const role = (await env.client.get(Roles, { namespace: appNs, name: RECORDED_ROLE })) as V1Role;
  const granted = (role.rules ?? []).flatMap((r) => r.resources ?? []);
  assert.ok(granted.includes('configmaps') && granted.includes('deployments'), granted.join(' '));
  assert.ok(!granted.includes('secrets'), 'no Secrets by default');
  assert.ok((role.rules ?? []).every((r) => r.verbs.join() === 'list,watch'), 'list and watch, what its informers do');

  await env.client.create(ConfigMaps, { metadata: { name: 'app', namespace: appNs }, data: { color: 'red' } });
  await env.client.apply(ConfigMaps, { metadata: { name: 'app', namespace: appNs }, data: { color: 'blue' } }, { fieldManager: 'rbac-e2e', force: true });
  const state = await eventually('the edit recorded by the installed recorder', async () => {
    const s = await readyOf();
    return s.recordsWritten >= 1 ? s : undefined;
  }, { timeoutMs: 60_000, intervalMs: 500 });
  assert.ok(state.kinds.includes('ConfigMap') && !state.kinds.includes('Secret'), state.kinds.join(' '));
  // The store's redaction key is in the recorder's Secret, not in the store on its volume.
  const keys = await env.client.get(Secrets, { namespace: recorderNs, name: REDACTION_KEYS_SECRET });
  assert.deepEqual(Object.values(keys.data ?? {}).map((v) => Buffer.from(v, 'base64').length), [32], 'one store, one 32-byte key');
  assert.equal(state.status, 'True');
});

test('the API server refuses the recorder Secrets by default, other namespaces and writes; installing again with a spec that asks for Secrets grants them there', async () => {
  // As the API server's authorizer answers for its ServiceAccount.
  assert.equal((await canRecorder('list', '', 'configmaps', appNs)).allowed, true);
  assert.equal((await canRecorder('watch', 'apps', 'deployments', appNs)).allowed, true);
  const notAllowed: [string, string, string, string | undefined][] = [
    ['get', '', 'secrets', appNs],
    ['list', '', 'secrets', appNs],
    ['watch', '', 'secrets', appNs],
    ['list', '', 'secrets', undefined],
    ['list', '', 'secrets', 'kube-system'],
    ['list', '', 'configmaps', undefined],
    ['list', '', 'configmaps', 'kube-system'],
    ['list', '', 'configmaps', 'default'],
    ['list', '', 'namespaces', undefined],
    ['get', '', 'configmaps', appNs],
    ['update', '', 'configmaps', appNs],
    ['delete', 'apps', 'deployments', appNs],
  ];
  for (const [verb, group, res, ns] of notAllowed) {
    assert.equal((await canRecorder(verb, group, res, ns)).allowed, false, `${verb} ${res}${group ? `.${group}` : ''} ${ns ? `in ${ns}` : 'cluster-wide'} is not allowed`);
  }
  // As an actual request with its token.
  recorderSA = await env.clientFor(recorderNs, NAME);
  assert.ok((await recorderSA.list(ConfigMaps, { namespace: appNs })).items.some((c) => c.metadata.name === 'app'));
  await assert.rejects(recorderSA.list(Secrets, { namespace: appNs }), ForbiddenError);

  // As the running recorder meets it: asked for Secrets without a role that allows them, its list is refused.
  await env.client.create(Secrets, { metadata: { name: 'token', namespace: appNs }, stringData: { password: 'one' } });
  const withSecrets: ChangeRecorderSpec = { ...defaultKinds(), resources: [{ group: '', kind: 'ConfigMap' }, { group: '', kind: 'Secret' }] };
  await env.client.apply(ChangeRecorders, changeRecorder(withSecrets), { fieldManager: 'rbac-e2e', force: true, fieldValidation: 'Strict' });
  const refused = await eventually('the recorder reports the refused kind', async () => {
    const s = await readyOf();
    return s.reason === 'WatchFailing' ? s : undefined;
  }, { timeoutMs: 90_000, intervalMs: 500 });
  assert.equal(refused.status, 'False');
  assert.match(refused.message, /secrets/i);
  assert.match(refused.message, /forbidden/i);

  // Installing again derives the role from the new spec; the same pod (the template is unchanged) records Secrets.
  const result = await install(withSecrets);
  assert.deepEqual(result.ready.map((r) => [r.status, r.reason]), [['True', 'Recording']], JSON.stringify(result.ready));
  assert.equal((await canRecorder('list', '', 'secrets', appNs)).allowed, true);
  const before = (await readyOf()).recordsWritten;
  await env.client.apply(Secrets, { metadata: { name: 'token', namespace: appNs }, stringData: { password: 'two' } }, { fieldManager: 'rbac-e2e', force: true });
  const state = await eventually('the Secret edit recorded', async () => {
    const s = await readyOf();
    return s.recordsWritten > before ? s : undefined;
  }, { timeoutMs: 60_000, intervalMs: 500 });
  assert.deepEqual(state.kinds, ['ConfigMap', 'Secret']);
  assert.equal((await canRecorder('list', 'apps', 'deployments', appNs)).allowed, false, 'the kinds it no longer asks for are taken away');
  assert.equal((await canRecorder('list', '', 'secrets', 'default')).allowed, false, 'Secrets of its namespace only');
});
