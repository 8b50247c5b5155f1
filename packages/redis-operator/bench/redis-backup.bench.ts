// RedisBackup's throughput against its floor on localkube, against a real MinIO (the s3 addon):
// `npm run bench -- redis-backup`. A Redis (1 primary, 1 replica, no Sentinels) filled with QUORUM_REDIS_BACKUP_MIB
// (default 256) MiB of 1 MiB random values; then QUORUM_BENCH_RUNS (default 5) interleaved pairs, the order
// alternating within each pair, after one warm-up backup that is not counted:
//   redis.backup_throughput_mib_s        median of size / time, RedisBackup created → Succeeded (the Job's pod
//                                        start, the RDB streamed from the replica, the upload to MinIO, the hash).
//   redis.backup_floor_throughput_mib_s  the floor: `redis-cli --rdb` of the same replica to the local disk of a
//                                        pod (an emptyDir), a Job created → Complete: the same pod start and the
//                                        same snapshot, without the upload.
//   redis.backup_throughput_ratio        median of the per-pair ratios ours / floor (goal ≥ 0.8); .min and .max.
import { randomBytes } from 'node:crypto';
import { restrictedContainerSecurity, restrictedPodSecurity } from '@quorum/kit';
import { Jobs, Secrets, type Job } from '@quorum/runtime';
import { eventually } from '@quorum/localkube/testing';
import { Redis } from 'ioredis';
import { benchRuns, interleavedPairs, median, progressTo, report, reportRatio } from '../../etcd-operator/bench/figures.ts';
import { REDIS_BACKUP_CREDENTIALS_LABEL } from '../src/api/backup.ts';
import { serverImage } from '../src/image/names.ts';
import { podHost } from '../src/names.ts';
import { RedisBackups } from '../src/resources.ts';
import { redisReaders, settled, startRedisEnv } from '../test/integration/support.ts';

const progress = progressTo('redis backup bench');
const MiB = 1024 * 1024;
const mib = Number(process.env['QUORUM_REDIS_BACKUP_MIB'] ?? 256);
const runs = benchRuns();
const NAME = 'bench';
const POLL_MS = 200;

const t = await startRedisEnv({ agentImage: true });
try {
  const addon = await t.env.kube.enableAddon('s3', { namespaces: [t.ns] });
  await t.env.client.mergePatch(Secrets, { namespace: t.ns, name: addon.secretName }, { metadata: { labels: { [REDIS_BACKUP_CREDENTIALS_LABEL]: 'true' } } }, { fieldManager: 'quorum-bench' });
  const redis = redisReaders(t, NAME);
  await redis.create({ replicas: 1, sentinel: { replicas: 0 }, storage: { size: `${Math.ceil((mib * 3) / 1024) + 1}Gi` } });
  await eventually('the Redis settled', async () => settled(await redis.status(), 2, 0, 0), { timeoutMs: 180_000, intervalMs: 500 });
  const client = new Redis({ host: await redis.serviceIP(NAME), port: 6379, password: await redis.password(), tls: await redis.serviceTLS(NAME) });
  for (let i = 0; i < mib; i++) await client.set(`bench:${i}`, randomBytes(MiB));
  await client.call('WAIT', '1', '60000');
  client.disconnect();
  progress(`${mib} MiB written`);

  const destination = { s3: { bucket: addon.bucket, prefix: 'redis-bench', endpoint: addon.endpoint, forcePathStyle: true, credentialsSecret: addon.secretName } };
  const ours = async (run: number): Promise<number> => {
    const name = `b${run}`;
    const t0 = performance.now();
    await t.env.client.create(RedisBackups, { apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'RedisBackup', metadata: { name, namespace: t.ns }, spec: { redisName: NAME, destination } });
    const s = await eventually(`${name} done`, async () => {
      const st = (await t.env.client.get(RedisBackups, { namespace: t.ns, name })).status;
      return st?.phase === 'Succeeded' || st?.phase === 'Failed' ? st : undefined;
    }, { timeoutMs: 900_000, intervalMs: POLL_MS });
    if (s.phase !== 'Succeeded') throw new Error(`${name}: ${JSON.stringify(s.conditions)}`);
    const secs = (performance.now() - t0) / 1000;
    progress(`ours ${run}: ${secs.toFixed(1)} s, ${(s.sizeBytes ?? 0) / MiB} MiB from ${s.source}`);
    return (s.sizeBytes ?? 0) / MiB / secs;
  };
  const floor = async (run: number): Promise<number> => {
    const name = `floor-${run}`;
    const t0 = performance.now();
    await t.env.client.create(Jobs, floorJob(name, t.ns), {});
    // Complete or Failed: a failed floor ends the bench at once with its pod's log, not at the wait's bound.
    const outcome = await eventually(`${name} complete or failed`, async () => {
      const job = await t.env.client.get(Jobs, { namespace: t.ns, name });
      const ended = job.status?.conditions?.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
      return ended?.type;
    }, { timeoutMs: 900_000, intervalMs: POLL_MS });
    if (outcome === 'Failed') throw new Error(`${name} failed: ${(await t.env.kube.kubectl(['logs', '-n', t.ns, `job/${name}`, '--tail=20'], { allowFailure: true })).trim()}`);
    const secs = (performance.now() - t0) / 1000;
    progress(`floor ${run}: ${secs.toFixed(1)} s`);
    return mib / secs;
  };
  await ours(99); // warm-up: the agent image's first start on the node, not counted
  const pairs = await interleavedPairs(runs, ours, floor);
  report('redis.backup_throughput_mib_s', median(pairs.ours), 'MiB/s');
  report('redis.backup_floor_throughput_mib_s', median(pairs.floor), 'MiB/s');
  reportRatio('redis.backup_throughput_ratio', pairs.ratios);
} finally {
  await t.stopOperator();
  await t.env.stop();
}

/** `redis-cli --rdb` of the replica to an emptyDir over TLS (the Redis's default), in the Redis image, as a user would take one by hand. */
function floorJob(name: string, namespace: string): Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace },
    spec: {
      backoffLimit: 0,
      template: {
        spec: {
          restartPolicy: 'Never',
          securityContext: restrictedPodSecurity(),
          containers: [
            {
              name: 'floor',
              image: serverImage('redis', '7.0.15'),
              // Retried while the connection is refused: the pod's first packets may come before the NetworkPolicy
              // agent knows the new pod (the backup agent retries an unreachable source too).
              command: ['sh', '-c', `i=0; until redis-cli -h ${podHost(NAME, namespace, `${NAME}-1`)} --tls --cacert /tls/ca.crt --no-auth-warning --rdb /backup/dump.rdb; do i=$((i+1)); [ $i -lt 50 ] || exit 1; busybox sleep 0.2; done`],
              env: [{ name: 'REDISCLI_AUTH', valueFrom: { secretKeyRef: { name: `${NAME}-auth`, key: 'password' } } }],
              securityContext: restrictedContainerSecurity(),
              volumeMounts: [{ name: 'backup', mountPath: '/backup' }, { name: 'tls', mountPath: '/tls', readOnly: true }],
            },
          ],
          volumes: [{ name: 'backup', emptyDir: {} }, { name: 'tls', secret: { secretName: `${NAME}-tls`, items: [{ key: 'ca.crt', path: 'ca.crt' }] } }],
        },
      },
    },
  };
}
