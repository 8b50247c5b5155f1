// TLS by default (issue 23): a new EtcdCluster gets operator-managed TLS unless spec.tls.disabled, a cluster that
// already runs keeps what it runs (decided from its status and pods), and the webhooks apply the same rule: the
// mutating one writes the default on create only, the validating one refuses `disabled` on a cluster running TLS.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AdmissionRequest, Operation } from '@quorum/runtime';
import type { EtcdCluster, EtcdClusterStatus, TlsSpec } from '../../src/api/etcdcluster.ts';
import { DEFAULT_TLS, effectiveTLS, tlsOffIssue, type TLSFacts } from '../../src/tls/defaults.ts';
import { defaultEtcdCluster, validateEtcdCluster } from '../../src/webhooks/etcdcluster.ts';

const RUNNING_PLAIN: EtcdClusterStatus = { clusterID: 'a1', nextMemberIndex: 3, members: [{ name: 'c-0', ready: true, learner: false, leader: true }] };
const RUNNING_TLS: EtcdClusterStatus = { ...RUNNING_PLAIN, tls: { peer: { mode: 'Operator' }, client: { mode: 'Operator' } } };

test('effectiveTLS: the default for a cluster that never ran, what it runs for one that did, the spec whenever it chooses', () => {
  const cases: { name: string; tls?: TlsSpec; facts: TLSFacts; expected: TlsSpec | undefined }[] = [
    { name: 'new, no spec.tls', facts: {}, expected: DEFAULT_TLS },
    { name: 'new, tls: {}', tls: {}, facts: {}, expected: DEFAULT_TLS },
    { name: 'new, disabled', tls: { disabled: true }, facts: {}, expected: undefined },
    { name: 'new, client side only', tls: { client: { secretName: 'mine' } }, facts: {}, expected: { client: { secretName: 'mine' } } },
    { name: 'running plaintext, no spec.tls', facts: { status: RUNNING_PLAIN, podsExist: true }, expected: undefined },
    { name: 'plaintext pods, status lost', facts: { podsExist: true }, expected: undefined },
    { name: 'only bootstrap members recorded', facts: { status: { bootstrapMembers: ['c-0'] } }, expected: undefined },
    { name: 'running TLS by default', facts: { status: RUNNING_TLS, podsExist: true, podsWithTLS: true }, expected: DEFAULT_TLS },
    { name: 'TLS pods, status lost', facts: { podsExist: true, podsWithTLS: true }, expected: DEFAULT_TLS },
    { name: 'running plaintext, TLS asked for in place', tls: { peer: {}, client: {} }, facts: { status: RUNNING_PLAIN }, expected: { peer: {}, client: {} } },
    { name: 'running plaintext, disabled said', tls: { disabled: true }, facts: { status: RUNNING_PLAIN }, expected: undefined },
  ];
  for (const c of cases) assert.deepEqual(effectiveTLS(c.tls, c.facts), c.expected, c.name);
});

test('tlsOffIssue: disabled is refused only on a cluster that runs TLS', () => {
  assert.equal(tlsOffIssue({ disabled: true }, {}), undefined);
  assert.equal(tlsOffIssue({ disabled: true }, { status: RUNNING_PLAIN }), undefined);
  assert.equal(tlsOffIssue(undefined, { status: RUNNING_TLS }), undefined);
  assert.match(tlsOffIssue({ disabled: true }, { status: RUNNING_TLS }) ?? '', /^spec\.tls\.disabled: the cluster runs TLS/);
  assert.match(tlsOffIssue({ disabled: true }, { podsWithTLS: true }) ?? '', /turning TLS off in place is not built/);
});

function request(operation: Operation, object: EtcdCluster, oldObject?: EtcdCluster): AdmissionRequest<EtcdCluster> & { object: EtcdCluster } {
  return {
    uid: 'u',
    kind: { group: 'etcd.quorum.dev', version: 'v1alpha1', kind: 'EtcdCluster' },
    resource: { group: 'etcd.quorum.dev', version: 'v1alpha1', resource: 'etcdclusters' },
    namespace: 'prod',
    operation,
    userInfo: { username: 'someone' },
    object,
    ...(oldObject ? { oldObject } : {}),
  };
}

const cluster = (spec: EtcdCluster['spec'], status?: EtcdClusterStatus): EtcdCluster => ({ apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name: 'c', namespace: 'prod' }, spec, ...(status ? { status } : {}) });

test('the defaulting webhook writes operator-managed TLS on create only, and leaves a choice alone', async () => {
  const spec = async (operation: Operation, s: EtcdCluster['spec']): Promise<EtcdCluster['spec']> => ((await defaultEtcdCluster(request(operation, cluster(s), operation === 'UPDATE' ? cluster(s) : undefined))) as EtcdCluster).spec;
  assert.deepEqual((await spec('CREATE', { replicas: 3 })).tls, { peer: {}, client: {} });
  assert.deepEqual((await spec('CREATE', { tls: {} })).tls, { peer: {}, client: {} });
  assert.deepEqual((await spec('CREATE', { tls: { disabled: true } })).tls, { disabled: true });
  assert.deepEqual((await spec('CREATE', { tls: { client: { secretName: 'mine' } } })).tls, { client: { secretName: 'mine' } });
  assert.equal((await spec('UPDATE', { replicas: 5 })).tls, undefined, 'a running cluster stays as it is');
});

test('the validating webhook refuses disabled: true on a cluster that runs TLS, and admits it on a plaintext one', async () => {
  const update = (status: EtcdClusterStatus) => validateEtcdCluster(request('UPDATE', cluster({ replicas: 3, tls: { disabled: true } }), cluster({ replicas: 3 }, status)));
  const refused = await update(RUNNING_TLS);
  assert.equal(refused.allowed, false);
  assert.match(refused.allowed ? '' : refused.message, /turning TLS off in place is not built/);
  assert.equal((await update(RUNNING_PLAIN)).allowed, true);
  const both = await validateEtcdCluster(request('CREATE', cluster({ tls: { disabled: true, peer: {} } })));
  assert.match(both.allowed ? '' : both.message, /spec\.tls\.peer and spec\.tls\.client must be unset/);
});
