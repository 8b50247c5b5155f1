// The validating webhooks of EtcdBackup, EtcdBackupSchedule and EtcdRestore (and what EtcdCluster's gained for
// spec.bootstrap.fromBackup): every refusal names its field, every accepted object passes, and each check is
// the controllers' own function (the same cron parse and seed, the same PVC key rule, the same cluster validation).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AdmissionRequest, KubeObject, Operation, ValidatingHandler, ValidationResult } from '@quorum/runtime';
import { isPvcKey } from '@quorum/storage';
import { errorsOf, validateSpec } from '../../src/api/defaults.ts';
import type { EtcdBackup } from '../../src/api/etcdbackup.ts';
import { MAX_SCHEDULE_NAME_LENGTH, type EtcdBackupSchedule } from '../../src/api/etcdbackupschedule.ts';
import type { EtcdCluster } from '../../src/api/etcdcluster.ts';
import type { EtcdRestore } from '../../src/api/etcdrestore.ts';
import { operatorManifests, VALIDATING_WEBHOOK, VALIDATING_WEBHOOKS } from '../../src/deploy/manifests.ts';
import { durationMs, parseSchedule, scheduleHashSeed } from '@quorum/kit';
import { scheduledBackupName } from '../../src/schedule/reconcile.ts';
import { validateEtcdBackup } from '../../src/webhooks/etcdbackup.ts';
import { validateEtcdBackupSchedule } from '../../src/webhooks/etcdbackupschedule.ts';
import { validateEtcdCluster } from '../../src/webhooks/etcdcluster.ts';
import { validateEtcdRestore } from '../../src/webhooks/etcdrestore.ts';

const NS = 'prod';
const S3 = { s3: { bucket: 'quorum', prefix: 'prod/etcd', credentialsSecret: 's3-credentials' } };
const PVC = (path?: string): EtcdBackup['spec']['destination'] => ({ pvc: { claimName: 'etcd-backups', ...(path !== undefined ? { path } : {}) } });

async function review<T extends KubeObject>(handler: ValidatingHandler<T>, object: T, options: { operation?: Operation; oldObject?: T; namespace?: string } = {}): Promise<ValidationResult> {
  const { operation = 'CREATE', oldObject, namespace = NS } = options;
  const request: AdmissionRequest<T> = {
    uid: 'a1',
    kind: { group: 'etcd.quorum.dev', version: 'v1alpha1', kind: object.kind ?? '' },
    resource: { group: 'etcd.quorum.dev', version: 'v1alpha1', resource: `${(object.kind ?? '').toLowerCase()}s` },
    namespace,
    operation,
    userInfo: { username: 'someone' },
    ...(operation === 'DELETE' ? {} : { object }),
    ...(oldObject ? { oldObject } : {}),
  };
  return handler(request);
}

function allowed(result: ValidationResult, warnings: RegExp[] = []): void {
  assert.equal(result.allowed, true, result.allowed ? '' : result.message);
  assert.equal(result.warnings?.length ?? 0, warnings.length, `warnings: ${JSON.stringify(result.warnings)}`);
  warnings.forEach((w, i) => assert.match(result.warnings?.[i] ?? '', w));
}

/** Refused with 422 Invalid, one message per pattern, in order. */
function refused(result: ValidationResult, ...messages: RegExp[]): void {
  assert.equal(result.allowed, false, 'refused');
  if (result.allowed) return;
  assert.equal(result.code, 422);
  assert.equal(result.reason, 'Invalid');
  const parts = result.message.split('; ');
  assert.equal(parts.length, messages.length, result.message);
  messages.forEach((m, i) => assert.match(parts[i] ?? '', m));
}

// ---- EtcdBackupSchedule ----

const schedule = (spec: Partial<EtcdBackupSchedule['spec']>, name = 'nightly', namespace: string | undefined = NS): EtcdBackupSchedule => ({
  apiVersion: 'etcd.quorum.dev/v1alpha1',
  kind: 'EtcdBackupSchedule',
  metadata: { name, ...(namespace !== undefined ? { namespace } : {}) },
  spec: { clusterName: 'example', schedule: '0 3 * * *', destination: S3, ...spec },
});

test('EtcdBackupSchedule: cron expressions and macros that the controller takes are admitted', async () => {
  for (const s of ['0 3 * * *', '*/15 * * * *', '@daily', '@hourly', 'H H * * *', '0 3 * * MON-FRI', '0 0 1 */3 *']) {
    allowed(await review(validateEtcdBackupSchedule, schedule({ schedule: s })), []);
  }
  allowed(await review(validateEtcdBackupSchedule, schedule({ retention: { maxCount: 7, maxAge: '720h' } })));
  allowed(await review(validateEtcdBackupSchedule, schedule({ retention: { maxAge: '1h30m' } })));
  allowed(await review(validateEtcdBackupSchedule, schedule({ retention: { maxAge: '0.5h' } })));
});

test('EtcdBackupSchedule: a schedule that does not parse is refused with spec.schedule and the parser\'s words', async () => {
  refused(await review(validateEtcdBackupSchedule, schedule({ schedule: '61 * * * *' })), /^spec\.schedule "61 \* \* \* \*" is not a valid cron expression: Constraint error, got value 61 expected range 0-59$/);
  refused(await review(validateEtcdBackupSchedule, schedule({ schedule: 'every day' })), /^spec\.schedule "every day" is not a valid cron expression: /);
  refused(await review(validateEtcdBackupSchedule, schedule({ schedule: '0 25 * * *' })), /^spec\.schedule "0 25 \* \* \*" is not a valid cron expression: Constraint error, got value 25 expected range 0-23$/);
  // Never fires: it parses, but has no next time.
  refused(await review(validateEtcdBackupSchedule, schedule({ schedule: '0 0 30 2 *' })), /^spec\.schedule "0 0 30 2 \*" is not a valid cron expression: /);
  // Six fields: seconds, more than once a minute.
  refused(await review(validateEtcdBackupSchedule, schedule({ schedule: '* * * * * *' })), /^spec\.schedule "\* \* \* \* \* \*" fires more than once a minute/);
});

test('EtcdBackupSchedule: the webhook refuses exactly what the controller reports as InvalidSchedule (same message)', async () => {
  for (const s of ['0 3 * * *', '61 * * * *', 'x', '0 0 30 2 *', '* * * * * *', '@weekly']) {
    const result = await review(validateEtcdBackupSchedule, schedule({ schedule: s }));
    const parsed = parseSchedule(s, scheduleHashSeed(NS, 'nightly'));
    assert.equal(result.allowed, parsed.ok, s);
    if (!result.allowed && !parsed.ok) assert.equal(result.message, parsed.message);
  }
});

test("EtcdBackupSchedule: H fields are parsed with the controller's seed, the schedule's namespace and name", async () => {
  // `0 0 H 2 *`: H picks a day of February from the seed, and the 30th or 31st never comes.
  const outcomes = new Set<boolean>();
  for (let i = 0; i < 80; i++) {
    const name = `s${i}`;
    const expected = parseSchedule('0 0 H 2 *', scheduleHashSeed(NS, name)).ok;
    outcomes.add(expected);
    assert.equal((await review(validateEtcdBackupSchedule, schedule({ schedule: '0 0 H 2 *' }, name))).allowed, expected, name);
    // The request's namespace stands in when the object does not carry one.
    assert.equal((await review(validateEtcdBackupSchedule, schedule({ schedule: '0 0 H 2 *' }, name, undefined))).allowed, expected, `${name}, namespace from the request`);
  }
  assert.deepEqual([...outcomes].sort(), [false, true], 'some seeds make it valid, some do not');
});

test('EtcdBackupSchedule: a retention.maxAge the controller cannot read is refused', async () => {
  for (const maxAge of ['1d', '7 days', '10', 'h', '1.h', '-1h', '1H']) {
    assert.equal(durationMs(maxAge), undefined, `the controller does not read ${maxAge}`);
    refused(await review(validateEtcdBackupSchedule, schedule({ retention: { maxAge } })), new RegExp(`^spec\\.retention\\.maxAge ${JSON.stringify(maxAge).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not a duration in hours, minutes and seconds`));
  }
});

test('EtcdBackupSchedule: a PVC path with a . or .. segment is refused; any object store prefix and a clean path pass', async () => {
  for (const path of ['..', 'a/../b', '.', './a', 'a/.', 'a/../']) {
    refused(await review(validateEtcdBackupSchedule, schedule({ destination: PVC(path) })), /^spec\.destination\.pvc\.path ".*" is not a file path inside the volume/);
  }
  for (const path of ['', 'example', 'prod/etcd', 'prod/etcd/', '.hidden', 'a..b', '...']) {
    allowed(await review(validateEtcdBackupSchedule, schedule({ destination: PVC(path) })));
  }
  allowed(await review(validateEtcdBackupSchedule, schedule({ destination: PVC() })));
  allowed(await review(validateEtcdBackupSchedule, schedule({ destination: { s3: { bucket: 'quorum', prefix: '../up', credentialsSecret: 's3' } } })));
});

test('EtcdBackupSchedule: every problem at once, each with its field', async () => {
  refused(
    await review(validateEtcdBackupSchedule, schedule({ schedule: '99 * * * *', retention: { maxAge: '2d' }, destination: PVC('..') })),
    /^spec\.schedule /,
    /^spec\.retention\.maxAge /,
    /^spec\.destination\.pvc\.path /,
  );
});

test('EtcdBackupSchedule: updates are ratcheted (an unchanged bad value does not block other edits); deletes pass', async () => {
  const old = schedule({ schedule: '61 * * * *', retention: { maxAge: '1d' } });
  allowed(await review(validateEtcdBackupSchedule, schedule({ schedule: '61 * * * *', retention: { maxAge: '1d' }, suspend: true }), { operation: 'UPDATE', oldObject: old }));
  refused(await review(validateEtcdBackupSchedule, schedule({ schedule: '62 * * * *', retention: { maxAge: '1d' } }), { operation: 'UPDATE', oldObject: old }), /^spec\.schedule "62/);
  allowed(await review(validateEtcdBackupSchedule, schedule({ schedule: '0 3 * * *', retention: { maxAge: '1d' } }), { operation: 'UPDATE', oldObject: old }));
  refused(await review(validateEtcdBackupSchedule, schedule({ schedule: '61 * * * *' }), { operation: 'UPDATE', oldObject: schedule({}) }), /^spec\.schedule "61/);
  allowed(await review(validateEtcdBackupSchedule, old, { operation: 'DELETE', oldObject: old }));
});

// ---- EtcdBackup ----

const backup = (spec: Partial<EtcdBackup['spec']> = {}, name = 'example-before-migration'): EtcdBackup => ({
  apiVersion: 'etcd.quorum.dev/v1alpha1',
  kind: 'EtcdBackup',
  metadata: { name, namespace: NS },
  spec: { clusterName: 'example', destination: S3, ...spec },
});

test('EtcdBackup: admitted as the docs write it, to every backend', async () => {
  allowed(await review(validateEtcdBackup, backup()));
  allowed(await review(validateEtcdBackup, backup({ destination: PVC('example') })));
  allowed(await review(validateEtcdBackup, backup({ destination: { gcs: { bucket: 'quorum', credentialsSecret: 'gcs' } } })));
  allowed(await review(validateEtcdBackup, backup({ destination: { azure: { container: 'quorum', credentialsSecret: 'azure' } } })));
});

test('EtcdBackup: a name longer than a label value is refused (the backup Job is labelled with it)', async () => {
  allowed(await review(validateEtcdBackup, backup({}, 'b'.repeat(63))));
  refused(await review(validateEtcdBackup, backup({}, 'b'.repeat(64))), /^metadata\.name is 64 characters, more than the 63 of a label value: it is the value of the label etcd\.quorum\.dev\/backup/);
  refused(await review(validateEtcdBackup, backup({}, `${'b'.repeat(200)}.x`)), /^metadata\.name is 202 characters/);
  // The backups a schedule makes always fit: the longest schedule name and a Unix time of ten digits.
  const longest = scheduledBackupName('s'.repeat(MAX_SCHEDULE_NAME_LENGTH), Date.UTC(2286, 10, 20));
  assert.equal(longest.length, 63);
  allowed(await review(validateEtcdBackup, backup({}, longest)));
});

test('EtcdBackup: a PVC path with a . or .. segment is refused; every problem is named', async () => {
  refused(await review(validateEtcdBackup, backup({ destination: PVC('a/../b') })), /^spec\.destination\.pvc\.path "a\/\.\.\/b" is not a file path inside the volume: relative, with no empty, '\.' or '\.\.' segment, so no backup could be stored under it$/);
  refused(await review(validateEtcdBackup, backup({ destination: PVC('..') }, 'x'.repeat(70))), /^metadata\.name /, /^spec\.destination\.pvc\.path /);
  allowed(await review(validateEtcdBackup, backup({ destination: { s3: { bucket: 'quorum', prefix: '..', credentialsSecret: 's3' } } })));
});

test('EtcdBackup: updates are ratcheted, deletes pass', async () => {
  const old = backup({ destination: PVC('..') }, 'x'.repeat(70));
  allowed(await review(validateEtcdBackup, { ...old, metadata: { ...old.metadata, labels: { team: 'a' } } }, { operation: 'UPDATE', oldObject: old }));
  allowed(await review(validateEtcdBackup, old, { operation: 'DELETE', oldObject: old }));
});

// ---- EtcdRestore ----

const restore = (spec: Partial<EtcdRestore['spec']> = {}, name = 'example-from-nightly'): EtcdRestore => ({
  apiVersion: 'etcd.quorum.dev/v1alpha1',
  kind: 'EtcdRestore',
  metadata: { name, namespace: NS, uid: 'u1' },
  spec: { clusterName: 'example-restored', backupName: 'example-nightly-1767236400', ...spec },
});
const fromKey = (destination: EtcdRestore['spec']['destination'], key: string): Partial<EtcdRestore['spec']> => ({ backupName: undefined, destination, key });

test('EtcdRestore: admitted as the docs write it, by backup name or by destination and key', async () => {
  allowed(await review(validateEtcdRestore, restore()));
  allowed(await review(validateEtcdRestore, restore({ clusterSpec: { replicas: 3, version: '3.6.16', storage: { volumeClaimTemplate: { resources: { requests: { storage: '8Gi' } } } } } })));
  allowed(await review(validateEtcdRestore, restore({ ...fromKey(S3, 'prod/etcd/example-20261123T101500Z-rev48211.db'), sha256: 'a'.repeat(64) })));
  allowed(await review(validateEtcdRestore, restore(fromKey(PVC('example'), 'example/example-20261123T101500Z-rev48211.db'))));
  // Object stores take any key: only a PVC's must stay inside the volume.
  allowed(await review(validateEtcdRestore, restore(fromKey(S3, '../odd/key.db'))));
});

test('EtcdRestore: the EtcdCluster it would create is validated, and its errors are told under spec.clusterSpec', async () => {
  // The restore CRD checks each clusterSpec field with EtcdCluster's schema, but not the spec-wide rules.
  refused(
    await review(validateEtcdRestore, restore({ clusterSpec: { image: 'registry.example/etcd:v3.6.16', repository: 'registry.example/etcd' } })),
    /^spec\.clusterSpec: in the EtcdCluster this restore creates, spec\.image and spec\.repository are mutually exclusive/,
  );
});

test('EtcdRestore: a snapshot key a PVC cannot hold is refused under spec.key', async () => {
  for (const key of ['../x.db', '/abs/x.db', 'a//x.db', './x.db', 'a/..']) {
    assert.equal(isPvcKey(key), false, key);
    refused(await review(validateEtcdRestore, restore(fromKey(PVC(), key))), /^spec\.key ".*" is not a file path inside the volume: .* so the snapshot could not be read from the PVC$/);
  }
});

test("EtcdRestore: the cluster's warnings come back under spec.clusterSpec", async () => {
  allowed(await review(validateEtcdRestore, restore({ clusterSpec: { replicas: 2 } })), [/^spec\.clusterSpec\.replicas is 2: an even number of members/]);
  allowed(await review(validateEtcdRestore, restore({ clusterSpec: { replicas: 1, storage: { emptyDir: {} } } })), [/^spec\.clusterSpec\.replicas is 1: /, /^spec\.clusterSpec\.storage\.emptyDir loses a member's data/]);
  allowed(await review(validateEtcdRestore, restore({ clusterSpec: { replicas: 3, antiAffinity: 'None' } })), [/^spec\.clusterSpec\.antiAffinity is None/]);
});

test('EtcdRestore: a name longer than a label value is refused (the cluster it creates is labelled with it)', async () => {
  allowed(await review(validateEtcdRestore, restore({}, 'r'.repeat(63))));
  refused(await review(validateEtcdRestore, restore({}, 'r'.repeat(64))), /^metadata\.name is 64 characters, more than the 63 of a label value: it is the value of the label etcd\.quorum\.dev\/restore on the EtcdCluster it creates$/);
});

test('EtcdRestore: updates are ratcheted, deletes pass', async () => {
  const old = restore({ clusterSpec: { image: 'i', repository: 'r' } }, 'r'.repeat(64));
  allowed(await review(validateEtcdRestore, { ...old, metadata: { ...old.metadata, labels: { team: 'a' } } }, { operation: 'UPDATE', oldObject: old }));
  allowed(await review(validateEtcdRestore, old, { operation: 'DELETE', oldObject: old }));
});

// ---- EtcdCluster.spec.bootstrap.fromBackup ----

const cluster = (spec: EtcdCluster['spec']): EtcdCluster => ({ apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name: 'example', namespace: NS }, spec });

test('EtcdCluster: a fromBackup key a PVC cannot hold is refused by the webhook and reported by the operator (validateSpec)', async () => {
  const bad = { replicas: 3, bootstrap: { fromBackup: { destination: PVC(), key: '../x.db' } } };
  const message = /^spec\.bootstrap\.fromBackup\.key "\.\.\/x\.db" is not a file path inside the volume/;
  refused(await review(validateEtcdCluster, cluster(bad)), message);
  const errors = errorsOf(validateSpec(bad));
  assert.equal(errors.length, 1);
  assert.equal(errors[0]?.field, 'spec.bootstrap.fromBackup.key');
  assert.match(errors[0]?.message ?? '', message);

  allowed(await review(validateEtcdCluster, cluster({ replicas: 3, bootstrap: { fromBackup: { destination: PVC(), key: 'example/example-rev1.db' } } })));
  allowed(await review(validateEtcdCluster, cluster({ replicas: 3, bootstrap: { fromBackup: { destination: S3, key: '../x.db' } } })));
  allowed(await review(validateEtcdCluster, cluster({ replicas: 3, bootstrap: { fromBackup: { backupName: 'nightly' } } })));
  // Unchanged on update (ratcheted), as every check.
  allowed(await review(validateEtcdCluster, cluster({ ...bad, replicas: 5 }), { operation: 'UPDATE', oldObject: cluster(bad) }));
  // The answer of the EtcdCluster webhook itself is unchanged: warnings, then refusals with 422.
  allowed(await review(validateEtcdCluster, cluster({ replicas: 2 })), [/^spec\.replicas is 2/]);
  refused(await review(validateEtcdCluster, cluster({ replicas: 0 })), /spec\.replicas/);
});

test('EtcdCluster: one minor back is admitted (a rollback, or from 3.6 a downgrade through etcd\'s API); from 3.5 to 3.4 only while status.clusterVersion is 3.4', async () => {
  const running = (clusterVersion: string, ...versions: string[]): EtcdCluster => ({
    ...cluster({ replicas: 3, version: '3.6.16' }),
    status: { clusterVersion, members: versions.map((version, i) => ({ name: `example-${i}`, ready: true, learner: false, leader: i === 0, version })) },
  });
  allowed(await review(validateEtcdCluster, cluster({ replicas: 3, version: '3.5.35' }), { operation: 'UPDATE', oldObject: running('3.5.0', '3.6.16', '3.5.35', '3.5.35') }));
  allowed(await review(validateEtcdCluster, cluster({ replicas: 3, version: '3.5.35' }), { operation: 'UPDATE', oldObject: running('3.6.0', '3.6.16', '3.6.16', '3.6.16') }));
  const on35 = (clusterVersion: string, ...versions: string[]): EtcdCluster => ({ ...running(clusterVersion, ...versions), spec: { replicas: 3, version: '3.5.35' } });
  allowed(await review(validateEtcdCluster, cluster({ replicas: 3, version: '3.4.37' }), { operation: 'UPDATE', oldObject: on35('3.4.0', '3.5.35', '3.4.37', '3.4.37') }));
  refused(
    await review(validateEtcdCluster, cluster({ replicas: 3, version: '3.4.37' }), { operation: 'UPDATE', oldObject: on35('3.5.0', '3.5.35', '3.5.35', '3.5.35') }),
    /^spec\.version 3\.4\.37: etcd 3\.5 cannot be downgraded to 3\.4/,
  );
});

// ---- the shared pieces ----

test('the manifests register one validating webhook per kind, failing open, at the paths the operator serves', () => {
  const config = operatorManifests().find((o) => o.kind === 'ValidatingWebhookConfiguration');
  assert.equal(config?.metadata.name, VALIDATING_WEBHOOK);
  type Webhook = { name: string; failurePolicy: string; clientConfig: { service: { path: string } }; rules: { resources: string[]; operations: string[] }[] };
  const webhooks = (config?.['webhooks'] ?? []) as Webhook[];
  assert.deepEqual(
    webhooks.map((w) => [w.rules[0]?.resources, w.clientConfig.service.path, w.rules[0]?.operations, w.failurePolicy, w.name]),
    [
      [['etcdclusters'], '/validate-etcdcluster', ['CREATE', 'UPDATE'], 'Ignore', 'validate.etcdclusters.etcd.quorum.dev'],
      [['etcdbackups'], '/validate-etcdbackup', ['CREATE'], 'Ignore', 'validate.etcdbackups.etcd.quorum.dev'],
      [['etcdbackupschedules'], '/validate-etcdbackupschedule', ['CREATE', 'UPDATE'], 'Ignore', 'validate.etcdbackupschedules.etcd.quorum.dev'],
      [['etcdrestores'], '/validate-etcdrestore', ['CREATE'], 'Ignore', 'validate.etcdrestores.etcd.quorum.dev'],
    ],
  );
  assert.deepEqual(webhooks.map((w) => w.clientConfig.service.path), Object.values(VALIDATING_WEBHOOKS).map((w) => w.path));
});
