import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  applyDefaults,
  decidedClusterVersion,
  errorsOf,
  etcdImage,
  faultTolerance,
  validateEtcdCluster,
  validateSpec,
  versionChangeAllowed,
  versionChangeIssues,
  versionPath,
  warningsOf,
  type ValidationIssue,
} from '../../src/api/defaults.ts';
import { DEFAULT_VERSION, RULES, type EtcdCluster, type EtcdClusterSpec } from '../../src/api/etcdcluster.ts';
import type { KubeObject } from '../../../runtime/src/object.ts';

// Compile-time: an EtcdCluster is a KubeObject for the runtime's client, cache and helpers, and back.
const asKube = (c: EtcdCluster): KubeObject => c;
const fromKube = (o: KubeObject): EtcdCluster['metadata'] => o.metadata;
void asKube;
void fromKube;

function errors(spec: unknown, old?: unknown): ValidationIssue[] {
  return errorsOf(validateSpec(spec, old));
}

function messages(issues: ValidationIssue[]): string[] {
  return issues.map((i) => i.message);
}

const PVC = { volumeClaimTemplate: { resources: { requests: { storage: '4Gi' } } } };

test('applyDefaults fills in an empty spec like the CRD would', () => {
  assert.deepEqual(applyDefaults({}), {
    replicas: 3,
    version: DEFAULT_VERSION,
    storage: { volumeClaimTemplate: { resources: { requests: { storage: '1Gi' } } }, reclaimPolicy: 'Retain' },
    antiAffinity: 'Preferred',
    paused: false,
    replaceStuckMemberAfterSeconds: 300,
    disasterRecovery: { policy: 'Manual' },
  });
  assert.deepEqual(applyDefaults(undefined), applyDefaults({}));
});

test('applyDefaults keeps what is set, fills defaults inside a given parent, and never adds the other storage kind', () => {
  const spec: EtcdClusterSpec = { replicas: 5, storage: { volumeClaimTemplate: { storageClassName: 'fast' } }, antiAffinity: 'Required' };
  const frozen = structuredClone(spec);
  const out = applyDefaults(spec);
  assert.deepEqual(spec, frozen, 'the input is not modified');
  assert.equal(out.replicas, 5);
  assert.equal(out.antiAffinity, 'Required');
  assert.deepEqual(out.storage, { volumeClaimTemplate: { storageClassName: 'fast', resources: { requests: { storage: '1Gi' } } }, reclaimPolicy: 'Retain' });

  const empty = applyDefaults({ storage: { emptyDir: {}, reclaimPolicy: 'Delete' } });
  assert.deepEqual(empty.storage, { emptyDir: {}, reclaimPolicy: 'Delete' });
});

test('applyDefaults treats null like absent, as the API server prunes non-nullable nulls', () => {
  const out = applyDefaults({ replicas: null, paused: null } as unknown as EtcdClusterSpec);
  assert.equal(out.replicas, 3);
  assert.equal(out.paused, false);
});

test('repository is not defaulted into the spec; etcdImage resolves the effective image', () => {
  const spec = applyDefaults({ version: '3.5.35' });
  assert.equal(spec.repository, undefined);
  assert.equal(etcdImage(spec), 'gcr.io/etcd-development/etcd:v3.5.35');
  assert.equal(etcdImage(applyDefaults({ repository: 'registry.local/etcd' })), `registry.local/etcd:v${DEFAULT_VERSION}`);
  assert.equal(etcdImage(applyDefaults({ image: 'registry.local/etcd@sha256:abc' })), 'registry.local/etcd@sha256:abc');
});

test('an empty spec and a typical spec are valid', () => {
  assert.deepEqual(errors({}), []);
  assert.deepEqual(errors(undefined), []);
  assert.deepEqual(
    errors({
      replicas: 5,
      version: '3.5.35',
      repository: 'registry.local/etcd',
      storage: { volumeClaimTemplate: { storageClassName: 'local', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } } }, reclaimPolicy: 'Delete' },
      podTemplate: { metadata: { labels: { team: 'a' } }, spec: { tolerations: [{ key: 'k', operator: 'Exists' }], resources: { requests: { cpu: '1' } } } },
      antiAffinity: 'Required',
      etcd: { quotaBackendBytes: 4294967296, autoCompactionMode: 'periodic', autoCompactionRetention: '1h', snapshotCount: 10000, heartbeatIntervalMs: 200, electionTimeoutMs: 2000, extraArgs: ['--log-level=debug', '--experimental-initial-corrupt-check'] },
      paused: false,
    }),
    [],
  );
});

for (const replicas of [0, 10, -1]) {
  test(`replicas ${replicas} is rejected with a message naming spec.replicas`, () => {
    const found = errors({ replicas });
    assert.equal(found.length, 1, JSON.stringify(found));
    assert.equal(found[0]?.field, 'spec.replicas');
    assert.match(found[0]?.message ?? '', /spec\.replicas/);
    assert.match(found[0]?.message ?? '', replicas < 1 ? /at least 1/ : /at most 9/);
  });
}

test('replicas must be an integer', () => {
  assert.deepEqual(errors({ replicas: 2.5 }).map((e) => e.field), ['spec.replicas']);
  assert.deepEqual(errors({ replicas: '3' }).map((e) => e.field), ['spec.replicas']);
});

for (const version of ['3.6', 'v3.6.16', '3.7.0', '3.3.1', '4.0.0', '3.6.16-rc.0', '3.6.x']) {
  test(`version ${version} is rejected`, () => {
    const found = errors({ version });
    assert.deepEqual(found.map((e) => e.field), ['spec.version']);
    assert.match(found[0]?.message ?? '', /spec\.version must match/);
  });
}

test('versions of every supported minor are accepted', () => {
  for (const version of ['3.4.37', '3.5.35', '3.6.16', '3.6.0']) assert.deepEqual(errors({ version }), [], version);
});

test('version changes: patch moves, one minor up and one minor back are allowed by the spec, skips are not', () => {
  assert.deepEqual(errors({ version: '3.6.16' }, { version: '3.5.35' }), []);
  assert.deepEqual(errors({ version: '3.5.30' }, { version: '3.5.35' }), []);
  assert.deepEqual(messages(errors({ version: '3.6.16' }, { version: '3.4.37' })), [RULES.versionChange.message]);
  // One minor back is a rollback of an unfinished upgrade; whether etcd still allows it is versionPath's call.
  assert.deepEqual(errors({ version: '3.5.35' }, { version: '3.6.16' }), []);
  assert.deepEqual(messages(errors({ version: '3.4.37' }, { version: '3.6.16' })), [RULES.versionChange.message]);
  // An unset version defaults to the newest: on an old 3.4 cluster that is a skip.
  assert.deepEqual(messages(errors({}, { version: '3.4.37' })), [RULES.versionChange.message]);
  assert.equal(versionChangeAllowed('3.5.35', '3.6.0'), true);
  assert.equal(versionChangeAllowed('3.6.0', '3.5.35'), true);
  assert.equal(versionChangeAllowed('3.4.1', '3.6.0'), false);
  assert.equal(versionChangeAllowed('3.6.1', '3.4.0'), false);
  assert.equal(versionChangeAllowed('bogus', '3.6.0'), false);
});

test('versionPath: what etcd allows from what the members run and the cluster version', () => {
  const path = (memberVersions: (string | undefined)[], target: string, clusterVersion?: string): string => {
    const p = versionPath({ memberVersions, target, ...(clusterVersion ? { clusterVersion } : {}) });
    return p.kind === 'Refused' ? `Refused: ${p.why}` : p.kind;
  };
  assert.equal(path(['3.5.35', '3.5.35', '3.5.35'], '3.5.35', '3.5.0'), 'None');
  assert.equal(path(['3.5.30', '3.5.30', '3.5.30'], '3.5.35', '3.5.0'), 'Patch');
  assert.equal(path(['3.5.35', '3.5.35', '3.5.35'], '3.5.30', '3.5.0'), 'Patch');
  assert.equal(path(['3.5.35', '3.5.35', '3.5.35'], '3.6.16', '3.5.0'), 'Upgrade');
  assert.equal(path(['3.4.23', '3.4.23', '3.4.23'], '3.5.35', '3.4.0'), 'Upgrade');
  // Part-way through an upgrade: going on is an Upgrade, going back a Rollback, while the cluster version is 3.5.
  assert.equal(path(['3.6.16', '3.5.35', '3.5.35'], '3.6.16', '3.5.0'), 'Upgrade');
  assert.equal(path(['3.6.16', '3.6.16', '3.5.35'], '3.5.35', '3.5.0'), 'Rollback');
  // Every member on 3.6 but the leader has not moved the cluster version yet: still a rollback.
  assert.equal(path(['3.6.16', '3.6.16', '3.6.16'], '3.5.35', '3.5.0'), 'Rollback');
  // Once it moved, etcd refuses 3.5 binaries: a downgrade through etcd's downgrade API (3.6 has it).
  assert.equal(path(['3.6.16', '3.6.16', '3.6.16'], '3.5.35', '3.6.0'), 'Downgrade');
  // Once the downgrade is enabled, the cluster version is already 3.5: still a downgrade, not a rollback.
  const enabled = versionPath({ memberVersions: ['3.6.16', '3.5.35', '3.6.16'], target: '3.5.35', clusterVersion: '3.5.0', downgradeTarget: '3.5.0' });
  assert.equal(enabled.kind, 'Downgrade');
  // spec.version back to 3.6 during it: an upgrade of the members already on 3.5 (the downgrade is cancelled first).
  assert.equal(versionPath({ memberVersions: ['3.6.16', '3.5.35', '3.6.16'], target: '3.6.16', clusterVersion: '3.5.0', downgradeTarget: '3.5.0' }).kind, 'Upgrade');
  // etcd 3.5 has no downgrade to 3.4.
  assert.match(path(['3.5.35', '3.5.35', '3.5.35'], '3.4.37', '3.5.0'), /^Refused: etcd 3\.5 cannot be downgraded to 3\.4: etcd has a downgrade API from 3\.6 on/);
  // Without the cluster version the lowest member minor stands in: a 3.5 member proves it is still 3.5.
  assert.equal(path(['3.6.16', undefined, '3.5.35'], '3.5.35'), 'Rollback');
  assert.equal(path(['3.6.16', undefined, '3.6.16'], '3.5.35'), 'Downgrade');
  assert.match(path(['3.4.23', '3.4.23'], '3.6.16', '3.4.0'), /^Refused: 3\.6\.16 is more than one minor version away from the cluster version 3\.4/);
  // 3.6 trusts the v3 store's learner records that 3.5 before 3.5.32 did not always write.
  assert.match(path(['3.5.19', '3.5.35', '3.5.35'], '3.6.16', '3.5.0'), /^Refused: moving to 3\.6 needs every member on 3\.5\.32 or later first.*3\.5\.19/);
  assert.equal(path(['3.5.32', '3.5.35'], '3.6.16', '3.5.0'), 'Upgrade');
  assert.match(path([undefined, undefined], '3.6.16'), /^Refused: no member has reported its version yet/);
});

test('versionChangeIssues: the webhook refuses a version change etcd would refuse, judged from the status', () => {
  const status = (clusterVersion: string | undefined, ...versions: (string | undefined)[]): EtcdCluster['status'] => ({
    ...(clusterVersion ? { clusterVersion } : {}),
    members: versions.map((version, i) => ({ name: `c-${i}`, ready: true, learner: false, leader: i === 0, ...(version ? { version } : {}) })),
  });
  assert.deepEqual(versionChangeIssues({ version: '3.5.35' }, { version: '3.6.16' }, status('3.5.0', '3.6.16', '3.5.35', '3.5.35')), []);
  // Back a minor once the cluster version moved: a downgrade through etcd's API, admitted.
  assert.deepEqual(versionChangeIssues({ version: '3.5.35' }, { version: '3.6.16' }, status('3.6.0', '3.6.16', '3.6.16', '3.6.16')), []);
  const refused = versionChangeIssues({ version: '3.4.37' }, { version: '3.5.35' }, status('3.5.0', '3.5.35', '3.5.35', '3.5.35'));
  assert.equal(refused.length, 1);
  assert.equal(refused[0]?.field, 'spec.version');
  assert.match(refused[0]?.message ?? '', /^spec\.version 3\.4\.37: etcd 3\.5 cannot be downgraded to 3\.4/);
  // Nothing to judge by yet (a new cluster), or the version unchanged: nothing refused here.
  assert.deepEqual(versionChangeIssues({ version: '3.5.35' }, { version: '3.6.16' }, status(undefined)), []);
  assert.deepEqual(versionChangeIssues({ version: '3.6.16', replicas: 5 }, { version: '3.6.16' }, status('3.6.0', '3.6.16')), []);
  // Right after bootstrap etcd says 3.0.0 until its leader decided: not a cluster version to judge by (CI saw
  // an upgrade 3.5 → 3.6 refused as "more than one minor version away from the cluster version 3.0").
  assert.deepEqual(versionChangeIssues({ version: '3.6.16' }, { version: '3.5.35' }, status('3.0.0', '3.5.35', '3.5.35', '3.5.35')), []);
});

test('decidedClusterVersion: the 3.0.0 a new cluster reports before its leader decided is no cluster version', () => {
  assert.equal(decidedClusterVersion('3.0.0', ['3.6.16', '3.6.16', '3.6.16']), undefined);
  assert.equal(decidedClusterVersion('3.0.0', ['3.5.35', undefined]), undefined);
  // One minor below the members is a real state (an upgrade the leader has not recorded yet), and so is equal.
  assert.equal(decidedClusterVersion('3.5.0', ['3.6.16', '3.6.16']), '3.5.0');
  assert.equal(decidedClusterVersion('3.6.0', ['3.6.16']), '3.6.0');
  // With no member version to compare with, it stands as read; unreadable text is no version.
  assert.equal(decidedClusterVersion('3.0.0', [undefined]), '3.0.0');
  assert.equal(decidedClusterVersion('not_decided', ['3.6.16']), undefined);
  assert.equal(decidedClusterVersion(undefined, ['3.6.16']), undefined);
  assert.equal(versionPath({ memberVersions: ['3.5.35', '3.5.35', '3.5.35'], target: '3.6.16', clusterVersion: '3.0.0' }).kind, 'Upgrade');
});

test('extraArgs the etcd of spec.version no longer has are refused (3.6 has no v2 store)', () => {
  assert.deepEqual(errors({ version: '3.5.35', etcd: { extraArgs: ['--enable-v2=true'] } }), []);
  const refused = errors({ version: '3.6.16', etcd: { extraArgs: ['--enable-v2=true', '--log-level=warn'] } });
  assert.deepEqual(refused.map((e) => e.field).sort(), ['spec.etcd.extraArgs', 'spec.version']);
  assert.match(refused[0]?.message ?? '', /etcd 3\.6 \(spec\.version 3\.6\.16\) has no --enable-v2=true/);
  // Moving a cluster that has the flag to 3.6 is refused at spec.version (the field that changed).
  const moving = errors({ version: '3.6.16', etcd: { extraArgs: ['--experimental-enable-v2v3=/v2'] } }, { version: '3.5.35', etcd: { extraArgs: ['--experimental-enable-v2v3=/v2'] } });
  assert.deepEqual(moving.map((e) => e.field), ['spec.version']);
});

test('storage: exactly one of volumeClaimTemplate and emptyDir', () => {
  const both = errors({ storage: { ...PVC, emptyDir: {} } });
  assert.deepEqual(both, [{ field: 'spec.storage', message: RULES.storageExactlyOne.message }]);
  const neither = errors({ storage: { reclaimPolicy: 'Delete' } });
  assert.deepEqual(neither, [{ field: 'spec.storage', message: RULES.storageExactlyOne.message }]);
  assert.deepEqual(errors({ storage: { emptyDir: { medium: 'Memory', sizeLimit: '512Mi' } } }), []);
});

test('storage is immutable after creation, except reclaimPolicy', () => {
  const old = { storage: { ...PVC, reclaimPolicy: 'Retain' } };
  const grown = errors({ storage: { volumeClaimTemplate: { resources: { requests: { storage: '8Gi' } } } } }, old);
  assert.deepEqual(grown, [{ field: 'spec.storage', message: RULES.storageImmutable.message }]);
  assert.match(grown[0]?.message ?? '', /storage is immutable/);
  const switched = errors({ storage: { emptyDir: {} } }, old);
  assert.deepEqual(messages(switched), [RULES.storageImmutable.message]);
  // Omitting storage on update re-defaults it to 1Gi: a change like any other.
  assert.deepEqual(messages(errors({}, old)), [RULES.storageImmutable.message]);
  assert.deepEqual(errors({ storage: { ...PVC, reclaimPolicy: 'Delete' } }, old), []);
  assert.deepEqual(errors({ replicas: 5, storage: PVC }, old), []);
});

test('storage size and medium are checked', () => {
  assert.deepEqual(errors({ storage: { volumeClaimTemplate: { resources: { requests: { storage: 'lots' } } } } }).map((e) => e.field), ['spec.storage.volumeClaimTemplate.resources.requests.storage']);
  assert.deepEqual(errors({ storage: { emptyDir: { medium: 'HugePages' } } }).map((e) => e.field), ['spec.storage.emptyDir.medium']);
  assert.deepEqual(errors({ storage: { volumeClaimTemplate: { accessModes: ['ReadWriteOnce', 'ReadWriteOnce'] } } }).map((e) => e.field), ['spec.storage.volumeClaimTemplate.accessModes[1]']);
});

test('image and repository are mutually exclusive', () => {
  assert.deepEqual(errors({ image: 'a/etcd:v3.6.16', repository: 'b/etcd' }), [{ field: 'spec', message: RULES.imageOrRepository.message }]);
  assert.deepEqual(errors({ image: 'a/etcd:v3.6.16' }), []);
});

test('extraArgs: managed flags, structured flags and malformed items are rejected', () => {
  for (const arg of ['--name=x', '--data-dir=/tmp', '--initial-cluster=a=http://a', '--initial-cluster-state=new', '--listen-client-urls=http://0.0.0.0:2379', '--advertise-client-urls=http://x', '--peer-cert-file=/x', '--force-new-cluster']) {
    assert.deepEqual(errors({ etcd: { extraArgs: ['--log-level=info', arg] } }), [{ field: 'spec.etcd.extraArgs', message: RULES.managedFlags.message }], arg);
  }
  assert.deepEqual(errors({ etcd: { extraArgs: ['--quota-backend-bytes=1'] } }), [{ field: 'spec.etcd.extraArgs', message: RULES.structuredFlags.message }]);
  for (const arg of ['-name=x', 'name', '--', '']) {
    assert.deepEqual(errors({ etcd: { extraArgs: [arg] } }).map((e) => e.field), ['spec.etcd.extraArgs[0]'], arg);
  }
  // Allowed flags pass; anything else is the CRD's allowlist, which the API server ratchets (api-cel.test.ts).
  assert.deepEqual(errors({ etcd: { extraArgs: ['--log-outputs=stderr', '--max-txn-ops=256', '--experimental-initial-corrupt-check'] } }), []);
});

test('election timeout must be at least five heartbeats, counting etcd defaults for the unset one', () => {
  assert.deepEqual(errors({ etcd: { heartbeatIntervalMs: 300 } }), [{ field: 'spec.etcd', message: RULES.electionTimeout.message }]);
  assert.deepEqual(errors({ etcd: { electionTimeoutMs: 400 } }), [{ field: 'spec.etcd', message: RULES.electionTimeout.message }]);
  assert.deepEqual(errors({ etcd: { heartbeatIntervalMs: 300, electionTimeoutMs: 1500 } }), []);
});

test('revision auto-compaction needs a revision count', () => {
  assert.deepEqual(errors({ etcd: { autoCompactionMode: 'revision', autoCompactionRetention: '1h' } }), [{ field: 'spec.etcd', message: RULES.revisionRetention.message }]);
  assert.deepEqual(errors({ etcd: { autoCompactionMode: 'revision', autoCompactionRetention: '10000' } }), []);
  assert.deepEqual(errors({ etcd: { autoCompactionMode: 'periodic', autoCompactionRetention: '1h30m' } }), []);
  assert.deepEqual(errors({ etcd: { autoCompactionRetention: 'weekly' } }).map((e) => e.field), ['spec.etcd.autoCompactionRetention']);
});

test('unknown fields are rejected everywhere but inside Kubernetes-typed pass-through objects', () => {
  assert.deepEqual(errors({ replica: 3 }), [{ field: 'spec.replica', message: 'spec.replica is not a known field' }]);
  assert.deepEqual(errors({ tls: { enabled: true } }).map((e) => e.field), ['spec.tls.enabled']);
  assert.deepEqual(errors({ tls: { peer: { secretName: 'p', caFile: 'x' } } }).map((e) => e.field), ['spec.tls.peer.caFile']);
  assert.deepEqual(errors({ backup: { destination: { s3: { bucket: 'backups', credentialsSecret: 's3' } }, schedule: '@daily' } }).map((e) => e.field), ['spec.backup.schedule'], 'spec.backup has no schedule');
  assert.deepEqual(errors({ backup: {} }).map((e) => e.field), ['spec.backup.destination'], 'a backup needs its destination');
  assert.deepEqual(errors({ storage: { volumeClaimTemplate: { size: '1Gi' } } }).map((e) => e.field), ['spec.storage.volumeClaimTemplate.size']);
  assert.deepEqual(errors({ podTemplate: { spec: { affinity: { nodeAffinity: { anything: 1 } }, hostNetwork: true } } }).map((e) => e.field), ['spec.podTemplate.spec.hostNetwork']);
  assert.deepEqual(errors({ podTemplate: { metadata: { labels: { a: 1 } } } }).map((e) => e.field), ['spec.podTemplate.metadata.labels.a']);
});

test('a spec that is not an object is rejected', () => {
  assert.deepEqual(errors([]).map((e) => e.field), ['spec']);
  assert.deepEqual(errors('replicas: 3').map((e) => e.field), ['spec']);
});

test('even replicas warn; a single member and shared nodes warn; warnings do not block', () => {
  const four = validateSpec({ replicas: 4 });
  assert.deepEqual(errorsOf(four), []);
  assert.equal(warningsOf(four).length, 1);
  assert.equal(four[0]?.field, 'spec.replicas');
  assert.equal(four[0]?.warning, true);
  assert.match(four[0]?.message ?? '', /an even number of members tolerates no more failures than one fewer/);
  assert.match(four[0]?.message ?? '', /4 members tolerate 1 failure, as 3 do/);
  assert.deepEqual(validateSpec({ replicas: 3 }), []);
  assert.match(warningsOf(validateSpec({ replicas: 1 }))[0]?.message ?? '', /single member/);
  assert.deepEqual(warningsOf(validateSpec({ storage: { emptyDir: {} } })).map((w) => w.field), ['spec.storage.emptyDir']);
  assert.deepEqual(warningsOf(validateSpec({ antiAffinity: 'None' })).map((w) => w.field), ['spec.antiAffinity']);
  // An invalid spec gets its errors only.
  assert.deepEqual(warningsOf(validateSpec({ replicas: 4, version: 'x' })), []);
});

test('ratcheting: an unchanged invalid value does not block an unrelated update', () => {
  const old = { replicas: 3, etcd: { extraArgs: ['--listen-metrics-urls=http://0.0.0.0:2381'] } };
  assert.deepEqual(errors({ replicas: 5, etcd: { extraArgs: ['--listen-metrics-urls=http://0.0.0.0:2381'] } }, old), []);
  assert.deepEqual(messages(errors({ replicas: 5, etcd: { extraArgs: ['--listen-metrics-urls=http://0.0.0.0:2382'] } }, old)), [RULES.managedFlags.message]);
});

test('validateEtcdCluster also checks metadata.name', () => {
  const cluster = (name: string): unknown => ({ apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name, namespace: 'default', uid: 'u' }, spec: {} });
  assert.deepEqual(validateEtcdCluster(cluster('main')), []);
  assert.deepEqual(errorsOf(validateEtcdCluster(cluster('1st'))).map((e) => e.field), ['metadata.name']);
  assert.deepEqual(errorsOf(validateEtcdCluster(cluster('a.b'))).map((e) => e.field), ['metadata.name']);
  assert.deepEqual(errorsOf(validateEtcdCluster(cluster('x'.repeat(51)))).map((e) => e.field), ['metadata.name']);
  assert.deepEqual(errorsOf(validateEtcdCluster({ metadata: { name: 'ok' }, spec: { replicas: 0 } })).map((e) => e.field), ['spec.replicas']);
});

test('faultTolerance', () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 9].map(faultTolerance), [0, 0, 1, 1, 2, 2, 3, 4]);
});

test('spec.maintenance.defrag: a threshold from 1 to 100, a schedule cron-parser accepts, at least one of them', () => {
  assert.deepEqual(errors({ maintenance: { defrag: { thresholdPercent: 50, schedule: '0 3 * * 0' } } }), []);
  assert.deepEqual(errors({ maintenance: { defrag: { schedule: 'H 3 * * *' } } }), []);
  assert.deepEqual(errors({ maintenance: { defrag: { thresholdPercent: 0 } } }).map((e) => e.field), ['spec.maintenance.defrag.thresholdPercent']);
  assert.deepEqual(errors({ maintenance: { defrag: { thresholdPercent: 101 } } }).map((e) => e.field), ['spec.maintenance.defrag.thresholdPercent']);
  assert.deepEqual(errors({ maintenance: { defrag: { schedule: 'every night' } } }).map((e) => e.field), ['spec.maintenance.defrag.schedule']);
  assert.deepEqual(errors({ maintenance: { defrag: { thresholdPercent: 50, schedule: '* * * * * *' } } }).map((e) => e.field), ['spec.maintenance.defrag.schedule'], 'more than once a minute');
  assert.deepEqual(errors({ maintenance: { defrag: {} } }).map((e) => e.field), ['spec.maintenance.defrag']);
});
