// The Redis API: the CRD's CEL rules, run by a real CEL evaluator (@marcbachmann/cel-js), agree with their
// mirror in defaults.ts on a table of specs; defaults fill a bare spec; refused input names its field; the
// committed CRD and the reference in docs/redis.md are what the generator writes.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { evaluate } from '@marcbachmann/cel-js';
import { BACKUP_CRD_FILE, CRD_FILE, redisBackupCRDYAML, redisBackupScheduleCRDYAML, redisCRD, redisCRDYAML, SCHEDULE_CRD_FILE, SCHEMA_DATA_FILE, schemaDataSource } from '../../src/api/crd.ts';
import { applyDefaults, validateBackupSpec, validateSpec } from '../../src/api/defaults.ts';
import { DOCS_FILE, withReference } from '../../src/api/docs.ts';
import { RULES } from '../../src/api/redis.ts';

const packageDir = join(import.meta.dirname, '../..');

const celOk = (rule: string, self: unknown): boolean => cel(rule, self);

function cel(rule: string, self: unknown, oldSelf?: unknown): boolean {
  return evaluate(rule, oldSelf === undefined ? { self } : { self, oldSelf }) === true;
}

test('a bare spec is defaulted to redis 7.0.15, 1 primary + 2 replicas, 3 Sentinels, RDB, 1Gi retained, a generated password', () => {
  const spec = applyDefaults({});
  assert.equal(spec.engine, 'redis');
  assert.equal(spec.version, '7.0.15');
  assert.equal(spec.replicas, 2);
  assert.deepEqual(spec.sentinel, { replicas: 3, downAfterMilliseconds: 5000, failoverTimeoutMilliseconds: 10_000 });
  assert.deepEqual(spec.persistence, { rdb: true, aof: false });
  assert.deepEqual(spec.storage, { size: '1Gi', reclaimPolicy: 'Retain' });
  assert.deepEqual(spec.auth, { key: 'password' });
  assert.equal(spec.minReplicasToWrite, 1, 'a primary with replicas refuses writes no replica acknowledges');
  assert.equal(applyDefaults({ replicas: 0 }).minReplicasToWrite, 0, 'a lone primary must not refuse every write');
  assert.deepEqual(validateSpec(spec), []);
});

test('spec rules: supported versions per engine and minReplicasToWrite ≤ replicas, CEL and code agree', () => {
  const specs = [
    {},
    { engine: 'redis', version: '7.0.15' },
    { engine: 'redis', version: '7.2.4' },
    { engine: 'valkey', version: '8.0.1' },
    { replicas: 1, minReplicasToWrite: 2 },
    { replicas: 2, minReplicasToWrite: 2 },
    { replicas: 0, minReplicasToWrite: 0 },
  ];
  for (const input of specs) {
    const spec = applyDefaults(input);
    const { minReplicasToWrite: _resolved, ...stored } = spec;
    const asStored = 'minReplicasToWrite' in input ? spec : stored; // the API server sees only what the user set
    const celErrors = [RULES.supportedVersion, RULES.minReplicasToWrite].filter((r) => !cel(r.rule, asStored)).map((r) => r.message);
    assert.deepEqual(validateSpec(spec), celErrors, JSON.stringify(input));
  }
  assert.deepEqual(validateSpec(applyDefaults({ engine: 'valkey', version: '8.0.1' })), []);
  assert.match(validateSpec(applyDefaults({ engine: 'valkey', version: '7.0.15' }))[0] ?? '', /^spec\.version .*valkey: 8\.0\.1/);
});

test('the engine moves from redis to valkey, never back; CEL and code agree', () => {
  const cases: [unknown, unknown, boolean][] = [
    [{}, { engine: 'valkey', version: '8.0.1' }, true],
    [{ engine: 'valkey', version: '8.0.1' }, { engine: 'valkey', version: '8.0.1', replicas: 3 }, true],
    [{ engine: 'valkey', version: '8.0.1' }, { engine: 'redis', version: '7.0.15' }, false],
  ];
  for (const [before, after, allowed] of cases) {
    const old = applyDefaults(before);
    const spec = applyDefaults(after);
    assert.equal(cel(RULES.engineForward.rule, spec, old), allowed, JSON.stringify([before, after]));
    assert.equal(validateSpec(spec, old).includes(RULES.engineForward.message), !allowed, JSON.stringify([before, after]));
  }
});

test('storage is immutable but for reclaimPolicy, CEL and code agree', () => {
  const old = applyDefaults({ storage: { size: '1Gi' } });
  const cases: [unknown, boolean][] = [
    [{ storage: { size: '1Gi', reclaimPolicy: 'Delete' } }, true],
    [{ storage: { size: '2Gi' } }, false],
    [{ storage: { size: '1Gi', storageClassName: 'fast' } }, false],
  ];
  for (const [input, allowed] of cases) {
    const spec = applyDefaults(input);
    assert.equal(cel(RULES.storageImmutable.rule, spec.storage, old.storage), allowed, JSON.stringify(input));
    assert.equal(validateSpec(spec, old).includes(RULES.storageImmutable.message), !allowed, JSON.stringify(input));
  }
});

test('config directives outside the allowlist are refused with the field named, and why', () => {
  const spec = applyDefaults({ config: [{ name: 'hz', value: '20' }, { name: 'replicaof', value: 'evil 6379' }, { name: 'maxmemory', value: '1gb' }, { name: 'rename-command', value: 'CONFIG ""' }] });
  assert.deepEqual(validateSpec(spec), [
    'spec.config[1].name "replicaof" is not allowed: the operator manages it, or it could break management',
    'spec.config[2].name "maxmemory" is not allowed: set spec.maxmemory instead',
    'spec.config[3].name "rename-command" is not allowed: the operator manages it, or it could break management',
  ]);
  // The CRD refuses the same names through the enum (the API server names spec.config[1].name).
  const directive = redisCRD().spec.versions[0]!.schema.openAPIV3Schema.properties?.spec?.properties?.config?.items?.properties?.name;
  for (const name of ['replicaof', 'slaveof', 'port', 'dir', 'dbfilename', 'rename-command', 'include', 'loadmodule', 'requirepass', 'save', 'appendonly']) {
    assert.ok(!directive?.enum?.includes(name), name);
  }
  assert.ok(directive?.enum?.includes('hz'));
});

test('a value cannot smuggle a second directive in', () => {
  const errors = validateSpec(applyDefaults({ config: [{ name: 'timeout', value: '0\nreplicaof evil 6379' }] }));
  assert.equal(errors.length, 1);
  assert.match(errors[0] ?? '', /^spec\.config\[0\]\.value must match/);
});

test('replicas and Sentinels out of range are refused by field', () => {
  assert.match(validateSpec(applyDefaults({ replicas: -1 })).join('\n'), /^spec\.replicas must be at least 0/m);
  assert.match(validateSpec(applyDefaults({ sentinel: { replicas: 9 } })).join('\n'), /^spec\.sentinel\.replicas must be at most 7/m);
  assert.match(validateSpec(applyDefaults({ engine: 'memcached' })).join('\n'), /^spec\.engine must be one of/m);
});

test('the committed CRD and the API reference in docs/redis.md are up to date (node packages/redis-operator/scripts/generate.ts)', async () => {
  assert.equal(await readFile(join(packageDir, CRD_FILE), 'utf8'), redisCRDYAML());
  assert.equal(await readFile(join(packageDir, BACKUP_CRD_FILE), 'utf8'), redisBackupCRDYAML());
  assert.equal(await readFile(join(packageDir, SCHEDULE_CRD_FILE), 'utf8'), redisBackupScheduleCRDYAML());
  assert.equal(await readFile(join(packageDir, SCHEMA_DATA_FILE), 'utf8'), schemaDataSource());
  const doc = await readFile(join(packageDir, '../..', DOCS_FILE), 'utf8');
  assert.equal(doc, withReference(doc));
});

test('spec.tls: on by default, never turned off (or on) in place, no Secret with disabled; CEL and code agree', () => {
  assert.deepEqual(applyDefaults({}).tls, {});
  const cases: [unknown, unknown, boolean][] = [
    [{}, { replicas: 3 }, true],
    [{}, { tls: { secretName: 'mine' } }, true],
    [{ tls: { disabled: true } }, { tls: { disabled: true }, replicas: 1 }, true],
    [{}, { tls: { disabled: true } }, false],
    [{ tls: { secretName: 'mine' } }, { tls: { disabled: true } }, false],
    [{ tls: { disabled: true } }, {}, false],
  ];
  for (const [before, after, allowed] of cases) {
    const old = applyDefaults(before);
    const spec = applyDefaults(after);
    assert.equal(cel(RULES.tlsStaysOn.rule, spec, old), allowed, JSON.stringify([before, after]));
    assert.equal(validateSpec(spec, old).includes(RULES.tlsStaysOn.message), !allowed, JSON.stringify([before, after]));
  }
  assert.match(RULES.tlsStaysOn.message, /^spec\.tls\.disabled /, 'the refusal names the field');
  const both = applyDefaults({ tls: { disabled: true, secretName: 'mine' } });
  assert.equal(cel(RULES.tlsOneSource.rule, both.tls), false);
  assert.ok(validateSpec(both).includes(RULES.tlsOneSource.message));
  const crd = JSON.stringify(redisCRD());
  assert.ok(crd.includes(JSON.stringify(RULES.tlsStaysOn.rule)) && crd.includes(JSON.stringify(RULES.tlsOneSource.rule)), 'both rules are in the CRD');
});

test('spec.users: not default, rules without passwords or nopass; CEL and code agree, the field named', () => {
  const user = (name: string, rules: string) => ({ users: [{ name, passwordSecret: { name: 's' }, rules }] });
  const cases: [unknown, string[]][] = [
    [user('app', '~app:* +@read +@write -@dangerous'), []],
    [user('default', '+@all'), [RULES.userNotDefault.message]],
    [user('app', '~* nopass'), [RULES.userRulesNoPassword.message]],
    [user('app', 'reset +@all'), [RULES.userRulesNoPassword.message]],
  ];
  for (const [input, expected] of cases) {
    const spec = applyDefaults(input);
    const u = spec.users![0]!;
    const cel = [RULES.userNotDefault, RULES.userRulesNoPassword].filter((r) => !celOk(r.rule, u)).map((r) => r.message);
    assert.deepEqual(cel, expected, JSON.stringify(input));
    assert.deepEqual(validateSpec(spec), expected, JSON.stringify(input));
  }
  for (const rules of ['>secret +@all', '#abc +@all', '"~*" +@all', '+@all\nuser evil on nopass']) {
    assert.ok(validateSpec(applyDefaults(user('app', rules))).some((e) => e.startsWith('spec.users[0].rules')), rules);
  }
  assert.match(RULES.userNotDefault.message, /^spec\.users\[\]\.name /);
});

test('every CEL rule passes on the schema defaults as written (`{}`), which the API server evaluates them on', () => {
  assert.ok(cel(RULES.tlsStaysOn.rule, {}, {}));
  assert.ok(cel(RULES.tlsOneSource.rule, {}));
  assert.ok(cel(RULES.supportedVersion.rule, {}));
  assert.ok(cel(RULES.minReplicasToWrite.rule, {}));
  assert.ok(cel(RULES.storageImmutable.rule, {}, {}));
  assert.ok(cel(RULES.bootstrapImmutable.rule, {}, {}));
  assert.ok(cel(RULES.bootstrapWithoutAof.rule, {}));
});

test('spec.bootstrap: fixed at creation, and refused with AOF on (the RDB would be ignored); CEL and code agree', () => {
  const from = { fromBackup: { backupName: 'b1' } };
  const cases: [unknown, unknown, boolean][] = [
    [{}, {}, true],
    [{ bootstrap: from }, { bootstrap: from, replicas: 3 }, true],
    [{}, { bootstrap: from }, false],
    [{ bootstrap: from }, {}, false],
    [{ bootstrap: from }, { bootstrap: { fromBackup: { backupName: 'b2' } } }, false],
  ];
  for (const [before, after, allowed] of cases) {
    const old = applyDefaults(before);
    const spec = applyDefaults(after);
    assert.equal(cel(RULES.bootstrapImmutable.rule, spec, old), allowed, JSON.stringify([before, after]));
    assert.equal(validateSpec(spec, old).includes(RULES.bootstrapImmutable.message), !allowed, JSON.stringify([before, after]));
  }
  const aof = applyDefaults({ bootstrap: from, persistence: { aof: true } });
  assert.equal(cel(RULES.bootstrapWithoutAof.rule, aof), false);
  assert.deepEqual(validateSpec(aof), [RULES.bootstrapWithoutAof.message]);
  assert.match(RULES.bootstrapWithoutAof.message, /^spec\.persistence\.aof /);
  assert.ok(cel(RULES.bootstrapWithoutAof.rule, applyDefaults({ bootstrap: from })));
});

test('a RedisBackup spec: the destination defaulted, bad input refused with the field named', () => {
  const s3 = { bucket: 'backups', endpoint: 'http://minio.storage.svc:9000', credentialsSecret: 's3' };
  const ok = validateBackupSpec({ redisName: 'shop', destination: { s3 } });
  assert.deepEqual(ok.errors, []);
  assert.equal(ok.spec.destination.s3?.prefix, '');
  const plain = validateBackupSpec({ redisName: 'shop', destination: { s3: { ...s3, endpoint: 'http://minio.example.com' } } }).errors;
  assert.deepEqual(plain, ['spec.destination.s3.endpoint: an endpoint must be https://, or http:// only to a Service in this cluster (<service>.<namespace>.svc or <service>.<namespace>.svc.cluster.local): the credentials are sent to it']);
  assert.match(validateBackupSpec({ redisName: 'shop', destination: { s3, pvc: { claimName: 'x' } } }).errors.join(), /^spec\.destination: a destination must set exactly one/);
  assert.match(validateBackupSpec({ redisName: 'Shop!', destination: { s3 } }).errors.join(), /^spec\.redisName /);
  assert.match(validateBackupSpec({ redisName: 'shop', destination: { s3 } }, { redisName: 'other', destination: { s3 } }).errors.join(), /spec is immutable/);
});
