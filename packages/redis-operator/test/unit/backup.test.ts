// RedisBackup's pure parts: the planner (a replica, never the primary unless there are no replicas; bounded
// retries with the failure recorded; a crash between recording an attempt and its Job resumes it), the Job and the
// restore init container as built, the agent's result parsed, and the replication-protocol reader against a fake
// server speaking both framings (a disk snapshot with its length, a diskless one between EOF marks).
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { test } from 'node:test';
import { MAX_BACKUP_ATTEMPTS } from '../../src/api/backup.ts';
import { attemptOutcome, backupJob, parseResult, restoreInitContainer } from '../../src/backup/job.ts';
import { planBackup, SOURCE_WAIT_BOUND_MS, type ObservedBackup, type SourceInstance } from '../../src/backup/plan.ts';
import { openRdbStream, PayloadCutter, RdbShapeCheck } from '../../src/backup/rdb.ts';

const primary: SourceInstance = { name: 'shop-0', role: 'primary', ready: true, linkUp: false };
const r1: SourceInstance = { name: 'shop-1', role: 'replica', ready: true, linkUp: true, lagBytes: 300 };
const r2: SourceInstance = { name: 'shop-2', role: 'replica', ready: true, linkUp: true, lagBytes: 10 };
const base = (over: Partial<ObservedBackup> = {}): ObservedBackup => ({ attempts: 0, now: 1_000_000, redis: { replicas: 2, instances: [primary, r1, r2] }, ...over });

test('the source is the replica least behind, never the primary of a Redis with replicas', () => {
  assert.deepEqual(planBackup(base()), { type: 'start', attempt: 1, instance: 'shop-2', role: 'replica' });
  const noLinked = base({ redis: { replicas: 2, instances: [primary, { ...r1, linkUp: false }, { ...r2, ready: false }] }, startedAt: 1_000_000 });
  assert.equal(planBackup(noLinked).type, 'wait');
  const past = planBackup({ ...noLinked, now: 1_000_000 + SOURCE_WAIT_BOUND_MS });
  assert.equal(past.type, 'fail');
  assert.match((past as { message: string }).message, /never forks the primary/);
});

test('a Redis without replicas is backed up from its primary, and the action says so', () => {
  assert.deepEqual(planBackup(base({ redis: { replicas: 0, instances: [primary] } })), { type: 'start', attempt: 1, instance: 'shop-0', role: 'primary' });
});

test('a failed attempt is retried with its failure recorded, up to the bound; then the backup fails', () => {
  const failed = { type: 'failed' as const, reason: 'StorageUnreachable', message: 'connect ECONNREFUSED' };
  const retry = planBackup(base({ phase: 'Running', attempts: 1, source: 'shop-2', job: failed }));
  assert.deepEqual(retry, { type: 'start', attempt: 2, instance: 'shop-2', role: 'replica', failure: { reason: 'StorageUnreachable', message: `attempt 1 of ${MAX_BACKUP_ATTEMPTS}: connect ECONNREFUSED` } });
  const last = planBackup(base({ phase: 'Running', attempts: MAX_BACKUP_ATTEMPTS, source: 'shop-2', job: failed }));
  assert.deepEqual(last, { type: 'fail', reason: 'StorageUnreachable', message: `attempt ${MAX_BACKUP_ATTEMPTS} of ${MAX_BACKUP_ATTEMPTS}: connect ECONNREFUSED` });
});

test('Running without its Job (a crash after the status write) recreates the same attempt from the recorded source', () => {
  assert.deepEqual(planBackup(base({ phase: 'Running', attempts: 2, source: 'shop-1' })), { type: 'start', attempt: 2, instance: 'shop-1', role: 'replica' });
});

test('refusals before any Job: the Redis missing, the credentials Secret not labelled', () => {
  assert.equal((planBackup({ attempts: 0, now: 0 }) as { reason: string }).reason, 'RedisNotFound');
  const refusal = { reason: 'CredentialsNotLabelled' as const, message: 'not labelled' };
  assert.deepEqual(planBackup(base({ credentials: refusal })), { type: 'fail', reason: 'CredentialsNotLabelled', message: 'not labelled' });
  assert.deepEqual(planBackup(base({ phase: 'Succeeded' })), { type: 'done' });
});

test('the Job: one try, restricted, the password and the credentials mounted, never on its command line', () => {
  const backup = { metadata: { name: 'b1', namespace: 'ns', uid: 'u1' }, spec: { redisName: 'shop', destination: { s3: { bucket: 'bk', prefix: '', credentialsSecret: 's3' } } } };
  const job = backupJob(backup, { attempt: 2, instance: 'shop-1', host: 'shop-1.shop-headless.ns.svc', redis: 'shop', auth: { secretName: 'shop-auth', key: 'password' }, agentImage: 'op:dev' });
  assert.match(job.metadata.name ?? '', /^b1-backup-[0-9a-f]{8}-2$/);
  assert.equal(job.spec?.backoffLimit, 0);
  // The Redis reconciler counts pods with app.kubernetes.io/instance as its instances: a backup's pod must not be one.
  assert.equal(job.spec?.template.metadata?.labels?.['app.kubernetes.io/instance'], undefined);
  assert.equal(job.spec?.template.metadata?.labels?.['redis.quorum.dev/redis'], 'shop');
  const pod = job.spec.template.spec!;
  const args = pod.containers[0]!.args!.join(' ');
  assert.match(args, /--host=shop-1\.shop-headless\.ns\.svc --port=6379/);
  assert.doesNotMatch(args, /shop-auth/);
  assert.match(args, /--password-file=\/var\/run\/quorum\/redis-auth\/password/);
  assert.deepEqual(pod.volumes!.map((v) => v.secret?.secretName).filter(Boolean), ['s3', 'shop-auth']);
  assert.equal(pod.securityContext?.runAsNonRoot, true);
  assert.equal(pod.automountServiceAccountToken, false);
});

test('the restore init container fetches into the data volume, only as the bootstrap primary, checked against the sha256', () => {
  const sha = 'a'.repeat(64);
  const { container, volumes } = restoreInitContainer({ backup: 'b1', destination: { pvc: { claimName: 'backups' } }, key: 'k.rdb', sha256: sha, sizeBytes: 1 }, 'op:dev', { data: '/data', template: '/config' });
  const args = container.args!.join(' ');
  for (const flag of [`--sha256=${sha}`, '--out=/data/dump.rdb', '--primary-file=/config/primary', '--pod-name=$(POD_NAME)']) assert.ok(args.includes(flag), flag);
  assert.deepEqual(volumes, [{ name: 'restore-backup-volume', persistentVolumeClaim: { claimName: 'backups' } }]);
});

test("the agent's result line, a crash and a Job that cannot start are each an outcome", () => {
  const sha = 'b'.repeat(64);
  assert.deepEqual(parseResult(`{"ok":true,"key":"k","location":"s3://b/k","sizeBytes":9,"sha256":"${sha}","serverVersion":"7.0.15"}`), { type: 'stored', key: 'k', location: 's3://b/k', sizeBytes: 9, sha256: sha, serverVersion: '7.0.15' });
  assert.deepEqual(parseResult('{"ok":false,"reason":"NotAnRdb","message":"truncated"}'), { type: 'failed', reason: 'NotAnRdb', message: 'truncated' });
  assert.equal(parseResult('Segmentation fault'), undefined);
  const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: {} };
  const pod = (state: object) => ({ apiVersion: 'v1', kind: 'Pod', metadata: {}, status: { containerStatuses: [{ name: 'backup', state }] } }) as never;
  assert.equal(attemptOutcome(job, [pod({ running: {} })]).type, 'running');
  assert.equal((attemptOutcome(job, [pod({ waiting: { reason: 'ImagePullBackOff' } })]) as { reason: string }).reason, 'JobCannotStart');
  assert.match((attemptOutcome(job, [pod({ terminated: { exitCode: 137, reason: 'OOMKilled' } })]) as { message: string }).message, /exited 137 \(OOMKilled\)/);
});

/** A minimal RDB: magic, version, EOF opcode, an 8-byte checksum. */
const RDB = Buffer.concat([Buffer.from('REDIS0010'), Buffer.from([0xfa, 0x01, 0x41, 0x01, 0x42]), Buffer.from([0xff]), Buffer.alloc(8, 7)]);

test('an EOF-marked payload is cut at the mark, even split across chunks', () => {
  const mark = Buffer.from('x'.repeat(40));
  const out: Buffer[] = [];
  const cutter = new PayloadCutter({ kind: 'eof-mark', mark }, (c) => out.push(Buffer.from(c)));
  const wire = Buffer.concat([RDB, mark, Buffer.from('*1\r\n$4\r\nPING\r\n')]);
  for (let i = 0; i < wire.length; i += 7) cutter.write(wire.subarray(i, i + 7));
  assert.ok(cutter.done);
  assert.deepEqual(Buffer.concat(out), RDB);
  const shape = new RdbShapeCheck();
  shape.update(RDB.subarray(0, 5));
  shape.update(RDB.subarray(5));
  assert.equal(shape.problem(), undefined);
  const truncated = new RdbShapeCheck();
  truncated.update(RDB.subarray(0, RDB.length - 3));
  assert.match(truncated.problem() ?? '', /truncated/);
});

/** A fake server: AUTH, INFO, REPLCONF, then SYNC answered with keep-alive newlines and the snapshot. */
async function fakeServer(answer: (socket: Socket) => void): Promise<{ port: number; close(): void }> {
  const server = createServer((socket) => {
    let seen = '';
    socket.on('data', (d) => {
      seen += d.toString('latin1');
      if (seen.includes('AUTH') && !seen.includes('#auth')) {
        seen += '#auth';
        socket.write(seen.includes('$5\r\nwrong') ? '-WRONGPASS invalid username-password pair\r\n' : '+OK\r\n');
      }
      if (seen.includes('INFO') && !seen.includes('#info')) {
        seen += '#info';
        const info = '# Server\r\nredis_version:7.0.15\r\n';
        socket.write(`$${info.length}\r\n${info}\r\n`);
      }
      if (seen.includes('REPLCONF') && !seen.includes('#repl')) {
        seen += '#repl';
        socket.write('+OK\r\n');
      }
      if (seen.includes('SYNC') && !seen.includes('#sync')) {
        seen += '#sync';
        socket.write('\n\n');
        answer(socket);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, close: () => server.close() };
}

async function readAll(body: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

test('the replication protocol: a snapshot with its length, and a diskless one between EOF marks', async () => {
  const mark = 'm'.repeat(40);
  const withLength = await fakeServer((s) => s.write(Buffer.concat([Buffer.from(`$${RDB.length}\r\n`), RDB])));
  const diskless = await fakeServer((s) => s.write(Buffer.concat([Buffer.from(`$EOF:${mark}\r\n`), RDB, Buffer.from(mark)])));
  try {
    const a = await openRdbStream({ host: '127.0.0.1', port: withLength.port, password: 'pw' });
    assert.equal(a.sizeBytes, RDB.length);
    assert.equal(a.version, '7.0.15');
    assert.deepEqual(await readAll(a.body), RDB);
    const b = await openRdbStream({ host: '127.0.0.1', port: diskless.port, password: 'pw' });
    assert.equal(b.sizeBytes, undefined);
    assert.deepEqual(await readAll(b.body), RDB);
    await assert.rejects(openRdbStream({ host: '127.0.0.1', port: withLength.port, password: 'wrong' }), /AUTH refused: WRONGPASS/);
  } finally {
    withLength.close();
    diskless.close();
  }
});

test('a connection that ends before the snapshot is complete is an error, not a short RDB', async () => {
  const cut = await fakeServer((s) => s.end(Buffer.concat([Buffer.from(`$${RDB.length + 100}\r\n`), RDB])));
  try {
    const stream = await openRdbStream({ host: '127.0.0.1', port: cut.port });
    await assert.rejects(readAll(stream.body), /closed the connection before the snapshot was complete/);
  } finally {
    cut.close();
  }
});

test("the backup-age metric: per Redis, its newest Succeeded backup's completion", async () => {
  const { lastBackupSamples } = await import('../../src/operator/metrics.ts');
  const b = (name: string, redisName: string, phase: string, completedAt: string) => ({ apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'RedisBackup', metadata: { name, namespace: 'ns' }, spec: { redisName, destination: { pvc: { claimName: 'c' } } }, status: { phase, completedAt } }) as never;
  const samples = lastBackupSamples([b('a', 'shop', 'Succeeded', '2026-11-27T10:00:00Z'), b('b', 'shop', 'Succeeded', '2026-11-27T11:00:00Z'), b('c', 'shop', 'Failed', '2026-11-27T12:00:00Z'), b('d', 'cart', 'Succeeded', '2026-11-27T09:00:00Z')]);
  assert.deepEqual(samples, [
    { labels: { namespace: 'ns', redis: 'shop' }, value: Date.parse('2026-11-27T11:00:00Z') / 1000 },
    { labels: { namespace: 'ns', redis: 'cart' }, value: Date.parse('2026-11-27T09:00:00Z') / 1000 },
  ]);
});

test("the operator may create Jobs (and delete them: a schedule's failed prune Job) and write RedisBackup status, and reads backup credentials only as Secret metadata", async () => {
  const { RULES, operatorManifests } = await import('../../src/deploy/manifests.ts');
  const verbs = (group: string, resource: string): string[] => RULES.filter((r) => r.apiGroups.includes(group) && r.resources.includes(resource)).flatMap((r) => r.verbs);
  assert.deepEqual(verbs('batch', 'jobs').sort(), ['create', 'delete', 'get', 'list', 'watch']);
  assert.deepEqual(verbs('redis.quorum.dev', 'redisbackups/status'), ['patch']);
  assert.ok(!verbs('', 'secrets').includes('list') && !verbs('', 'secrets').includes('watch'), 'no Secret is listed or watched');
  const objects = operatorManifests();
  assert.ok(objects.some((o) => o.kind === 'CustomResourceDefinition' && o.metadata.name === 'redisbackups.redis.quorum.dev'));
  const env = JSON.stringify(objects.find((o) => o.kind === 'Deployment'));
  assert.match(env, /"name":"OPERATOR_IMAGE","value":"ghcr\.io\/quorum-dev\/redis-operator:/);
});
