// Backup, restore and disaster-recovery figures on localkube, each against its floor in the same run, against
// a real MinIO (`localkube addon enable s3`). `npm run bench -- backup`. Phases, chosen with
// QUORUM_BENCH_PHASES=backup,restore,dr (default: all three); QUORUM_BENCH_RUNS runs each (default 5).
//
// backup (a 3-member cluster filled to QUORUM_BACKUP_DB_MIB, default 1024, of 1 MiB values)
//   backup.throughput_mib_s        median over the runs of size / time, EtcdBackup created → Succeeded (the
//                                  Job's pod start, the snapshot streamed from a follower, the multipart
//                                  upload to MinIO, the hash checks, the status written).
//   backup.floor_throughput_mib_s  the floor: `etcdctl snapshot save` of the same member to the local disk of
//                                  a pod (an emptyDir), in a Job created → Complete: the same pod start and
//                                  the same snapshot, without the upload.
//   backup.throughput_ratio        median of the per-pair ratios ours / floor (goal ≥ 0.8); .min and .max.
//                                  Pairs are interleaved, the order alternating within each pair, after one
//                                  warm-up backup that is not counted (it also says which member is used).
//   backup.rss_growth_mib          median over the runs of the agent's peak RSS minus its RSS when the
//                                  backup began, as the agent itself reports (goal ≤ 64).
// restore (a backup of QUORUM_RESTORE_DB_MIB, default 128)
//   restore.available_s.3          median: an EtcdCluster with spec.bootstrap.fromBackup applied → Available
//                                  with 3 voting members.
//   restore.floor_s.3              median: the same EtcdCluster without fromBackup → Available with 3.
//   restore.available_ratio.3      median of the per-pair ratios; .min and .max.
// dr
//   dr.restore_s                   median: under disasterRecovery.policy Restore, two members' volumes wiped
//                                  and their etcd killed (quorum lost for good) → Available with 3 and
//                                  status.recovery.completedAt set.
import { randomBytes } from 'node:crypto';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { PersistentVolumeClaims, Pods, type Client, type KubeObject } from '@quorum/runtime';
import { eventually, type TestEnv } from '@quorum/localkube/testing';
import { applyDefaults, etcdImage } from '../src/api/defaults.ts';
import type { EtcdBackup } from '../src/api/etcdbackup.ts';
import { BACKUP_LABEL } from '../src/backup/job.ts';
import { memberHost } from '../src/names.ts';
import { EtcdClient } from '../src/etcd/client.ts';
import { EtcdBackups, EtcdClusters, Jobs } from '../src/resources.ts';
import { applyCluster, clientServiceEndpoint, getCluster, PLAINTEXT, setUpOperator, waitAvailable } from '../test/integration/support.ts';
import { converged } from '../test/support/soak.ts';
import { enableS3, type S3Addon } from '../test/support/s3-addon.ts';
import { benchRuns, interleavedPairs, median, progressTo, report, reportRatio, seconds, selectedPhases } from './figures.ts';

const progress = progressTo('backup bench');
const MiB = 1024 * 1024;
const IMAGE = etcdImage(applyDefaults({ replicas: 1 }));

const PHASES = ['backup', 'restore', 'dr'] as const;
type Phase = (typeof PHASES)[number];
const phases = selectedPhases(PHASES);
const runs = benchRuns();
const backupDbMiB = Number(process.env['QUORUM_BACKUP_DB_MIB'] ?? 1024);
const restoreDbMiB = Number(process.env['QUORUM_RESTORE_DB_MIB'] ?? 128);
// Both sides are polled at the same rate, so neither gains from a finer clock.
const POLL_MS = 200;

/** Room for the data, its WAL and etcd's snapshots; a 1 GiB database exceeds etcd's default 2 GiB quota soon. */
// Plaintext, as the bench talks plain http to the client Service and its floor (etcdutl, etcdctl) has no TLS.
const bigCluster = (replicas: number, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  replicas,
  ...PLAINTEXT,
  etcd: { quotaBackendBytes: 8 * 1024 * MiB },
  storage: { volumeClaimTemplate: { resources: { requests: { storage: '8Gi' } } } },
  ...extra,
});

/** Writes `mib` MiB of 1 MiB values (random, so nothing on the way can compress them), 4 at a time. */
async function fill(client: Client, ns: string, cluster: string, mib: number): Promise<void> {
  const etcd = new EtcdClient({ endpoint: await clientServiceEndpoint(client, ns, cluster), timeoutMs: 30_000 });
  try {
    let next = 0;
    const t0 = performance.now();
    const worker = async (): Promise<void> => {
      for (let i = next++; i < mib; i = next++) {
        await etcd.put(`/bench/${String(i).padStart(6, '0')}`, randomBytes(MiB).toString('base64').slice(0, MiB));
        if (i % 128 === 127) progress(`  ${i + 1}/${mib} MiB written (${seconds(t0).toFixed(0)} s)`);
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    const status = await etcd.status();
    progress(`  ${cluster}: database ${(Number(status.dbSize) / MiB).toFixed(0)} MiB`);
  } finally {
    etcd.close();
  }
}

async function takeBackup(client: Client, ns: string, name: string, cluster: string, s3: S3Addon): Promise<{ seconds: number; backup: EtcdBackup; rssGrowthMiB?: number }> {
  const t0 = performance.now();
  const createdAt = Date.now();
  await client.create(EtcdBackups, { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdBackup', metadata: { name, namespace: ns }, spec: { clusterName: cluster, destination: s3.destination(`bench-${ns}`) } });
  const backup = await eventually(`EtcdBackup ${name} finished`, async () => {
    const b = await client.get(EtcdBackups, { namespace: ns, name });
    return b.status?.phase === 'Succeeded' || b.status?.phase === 'Failed' ? b : undefined;
  }, { timeoutMs: 1_800_000, intervalMs: POLL_MS });
  const took = seconds(t0);
  if (backup.status?.phase !== 'Succeeded') throw new Error(`backup ${name} failed: ${JSON.stringify(backup.status?.conditions)}`);
  // The agent's own account of its memory, from its termination message.
  const pods = (await client.list(Pods, { namespace: ns, labelSelector: `${BACKUP_LABEL}=${name}` })).items as (KubeObject & { status?: { containerStatuses?: { state?: { terminated?: { message?: string; startedAt?: string; finishedAt?: string } } }[] } })[];
  const terminated = pods[0]?.status?.containerStatuses?.[0]?.state?.terminated;
  const message = terminated?.message?.trim().split('\n').at(-1);
  const result = message ? (JSON.parse(message) as { rssStartBytes?: number; rssPeakBytes?: number; startedAt?: string; completedAt?: string; sizeBytes?: number }) : {};
  // Where the time went: inside the agent (status, quorum check, snapshot, upload) against the whole.
  const inAgent = (Date.parse(result.completedAt ?? '') - Date.parse(result.startedAt ?? '')) / 1000;
  if (Number.isFinite(inAgent)) progress(`  ${name}: ${took.toFixed(1)} s in all, ${inAgent.toFixed(1)} s in the agent (${((result.sizeBytes ?? 0) / MiB / inAgent).toFixed(1)} MiB/s there)`);
  // The rest, from the pod's own (whole-second) timestamps: created → container started → agent began;
  // agent done → container finished → Succeeded seen.
  const since = (at: string | undefined): string => (at ? `+${((Date.parse(at) - createdAt) / 1000).toFixed(1)}` : '?');
  progress(`  ${name}: container started ${since(terminated?.startedAt)} s, agent ${since(result.startedAt)}…${since(result.completedAt)} s, container finished ${since(terminated?.finishedAt)} s, Succeeded seen +${took.toFixed(1)} s`);
  const rssGrowthMiB = result.rssPeakBytes !== undefined && result.rssStartBytes !== undefined ? Math.max(0, result.rssPeakBytes - result.rssStartBytes) / MiB : undefined;
  return { seconds: took, backup, ...(rssGrowthMiB !== undefined ? { rssGrowthMiB } : {}) };
}

/** Frees MinIO's volume for the next run: the object and the record. */
async function dropBackup(client: Client, ns: string, backup: EtcdBackup, s3: S3Addon): Promise<void> {
  if (backup.status?.key) await s3.hostClient.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: backup.status.key }));
  await client.delete(EtcdBackups, { namespace: ns, name: backup.metadata.name! });
}

/** The floor: etcdctl snapshot save from the same member into an emptyDir, Job created → Complete. */
async function floorSnapshot(client: Client, ns: string, name: string, cluster: string, member: string): Promise<number> {
  const endpoint = `http://${memberHost(cluster, ns, member)}:2379`;
  const job = {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: ns },
    spec: {
      backoffLimit: 0,
      template: {
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'snapshot', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['etcdctl', `--endpoints=${endpoint}`, 'snapshot', 'save', '/scratch/snapshot.db'], volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] }],
          volumes: [{ name: 'scratch', emptyDir: {} }],
        },
      },
    },
  };
  const t0 = performance.now();
  await client.create(Jobs, job);
  await eventually(`floor Job ${name} complete`, async () => {
    const j = (await client.get(Jobs, { namespace: ns, name })) as unknown as { status?: { conditions?: { type: string; status: string; message?: string }[] } };
    const failed = j.status?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
    if (failed) throw new Error(`floor Job ${name} failed: ${failed.message ?? ''}`);
    return j.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True');
  }, { timeoutMs: 1_800_000, intervalMs: POLL_MS });
  const took = seconds(t0);
  await client.delete(Jobs, { namespace: ns, name }, { propagationPolicy: 'Background' });
  return took;
}

async function backupPhase(env: TestEnv, s3: S3Addon, ns: string): Promise<void> {
  progress(`backup: a 3-member cluster with ${backupDbMiB} MiB`);
  await applyCluster(env.client, ns, 'big', bigCluster(3));
  await waitAvailable(env.client, ns, 'big', 3);
  await fill(env.client, ns, 'big', backupDbMiB);
  progress('backup: warm-up backup (not counted)');
  const warm = await takeBackup(env.client, ns, 'warm-up', 'big', s3);
  const member = warm.backup.status!.member!;
  const sizeMiB = warm.backup.status!.sizeBytes! / MiB;
  await dropBackup(env.client, ns, warm.backup, s3);
  const rss: number[] = [];
  const { ours, floor, ratios } = await interleavedPairs(runs, async (i) => {
    const taken = await takeBackup(env.client, ns, `run-${i}`, 'big', s3);
    if (taken.backup.status?.member !== member) progress(`  note: run ${i + 1} took its snapshot from ${taken.backup.status?.member}, the floor from ${member}`);
    if (taken.rssGrowthMiB !== undefined) rss.push(taken.rssGrowthMiB);
    await dropBackup(env.client, ns, taken.backup, s3);
    const mibPerSecond = sizeMiB / taken.seconds;
    progress(`  run ${i + 1}/${runs}: ours ${mibPerSecond.toFixed(1)} MiB/s, agent RSS growth ${taken.rssGrowthMiB?.toFixed(1) ?? '?'} MiB`);
    return mibPerSecond;
  }, async (i) => {
    const mibPerSecond = sizeMiB / (await floorSnapshot(env.client, ns, `floor-${i}`, 'big', member));
    progress(`  run ${i + 1}/${runs}: floor ${mibPerSecond.toFixed(1)} MiB/s`);
    return mibPerSecond;
  });
  report('backup.throughput_mib_s', median(ours), 'MiB/s');
  report('backup.floor_throughput_mib_s', median(floor), 'MiB/s');
  reportRatio('backup.throughput_ratio', ratios);
  report('backup.size_mib', sizeMiB, 'MiB');
  if (rss.length) report('backup.rss_growth_mib', median(rss), 'MiB');
  await env.client.delete(EtcdClusters, { namespace: ns, name: 'big' });
  await dropClaims(env.client, ns, 'big');
}

/** Waits until a deleted cluster's pods are gone, then deletes its claims and waits for those too. */
async function dropClaims(client: Client, ns: string, cluster: string): Promise<void> {
  const selector = `app.kubernetes.io/instance=${cluster}`;
  await eventually(`${cluster}'s pods gone`, async () => (await client.list(Pods, { namespace: ns, labelSelector: selector })).items.length === 0, { timeoutMs: 300_000, intervalMs: 1000 });
  for (const pvc of (await client.list(PersistentVolumeClaims, { namespace: ns, labelSelector: selector })).items) await client.delete(PersistentVolumeClaims, { namespace: ns, name: pvc.metadata.name! });
  await eventually(`${cluster}'s claims gone`, async () => (await client.list(PersistentVolumeClaims, { namespace: ns, labelSelector: selector })).items.length === 0, { timeoutMs: 300_000, intervalMs: 1000 });
}

async function availableWith(client: Client, ns: string, name: string, spec: Record<string, unknown>): Promise<number> {
  const t0 = performance.now();
  await applyCluster(client, ns, name, spec);
  await eventually(`${ns}/${name} Available with 3`, async () => converged(await client.get(EtcdClusters, { namespace: ns, name }), 3), { timeoutMs: 600_000, intervalMs: POLL_MS });
  const took = seconds(t0);
  await client.delete(EtcdClusters, { namespace: ns, name });
  await dropClaims(client, ns, name);
  return took;
}

async function restorePhase(env: TestEnv, s3: S3Addon, ns: string): Promise<void> {
  progress(`restore: a backup of ${restoreDbMiB} MiB`);
  await applyCluster(env.client, ns, 'source', bigCluster(1));
  await waitAvailable(env.client, ns, 'source', 1);
  await fill(env.client, ns, 'source', restoreDbMiB);
  const { backup } = await takeBackup(env.client, ns, 'restore-source', 'source', s3);
  const { ours, floor, ratios } = await interleavedPairs(runs, async (i) => {
    const took = await availableWith(env.client, ns, `restored-${i}`, bigCluster(3, { bootstrap: { fromBackup: { backupName: backup.metadata.name } } }));
    progress(`  run ${i + 1}/${runs}: restored ${took.toFixed(1)} s`);
    return took;
  }, async (i) => {
    const took = await availableWith(env.client, ns, `plain-${i}`, bigCluster(3));
    progress(`  run ${i + 1}/${runs}: plain bootstrap ${took.toFixed(1)} s`);
    return took;
  });
  report('restore.available_s.3', median(ours), 's');
  report('restore.floor_s.3', median(floor), 's');
  reportRatio('restore.available_ratio.3', ratios);
  report('restore.size_mib', backup.status!.sizeBytes! / MiB, 'MiB');
  await env.client.delete(EtcdClusters, { namespace: ns, name: 'source' });
  await dropClaims(env.client, ns, 'source');
  await dropBackup(env.client, ns, backup, s3);
}

async function drPhase(env: TestEnv, s3: S3Addon, ns: string): Promise<void> {
  progress('dr: quorum lost for good (2 of 3 volumes wiped) → Available under policy Restore');
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const name = `dr-${i}`;
    await applyCluster(env.client, ns, name, { replicas: 3, ...PLAINTEXT, disasterRecovery: { policy: 'Restore' } });
    const state = await waitAvailable(env.client, ns, name, 3);
    await fill(env.client, ns, name, 8);
    const { backup } = await takeBackup(env.client, ns, `${name}-backup`, name, s3);
    const victims = state.members.filter((m) => !m.leader).map((m) => m.name).slice(0, 2);
    for (const m of victims) await env.kube.wipeVolume(ns, `data-${m}`);
    const t0 = performance.now();
    for (const m of victims) await env.kube.killContainer(ns, m, 'etcd');
    const recovered = await eventually(`${name} recovered`, async () => {
      const s = await getCluster(env.client, ns, name);
      return s.cluster.status?.recovery?.completedAt && converged(s.cluster, 3) ? s : undefined;
    }, { timeoutMs: 600_000, intervalMs: POLL_MS });
    times.push(seconds(t0));
    progress(`  run ${i + 1}/${runs}: ${times.at(-1)!.toFixed(1)} s (${recovered.cluster.status?.recovery?.method} from ${recovered.cluster.status?.recovery?.from ?? '?'})`);
    await env.client.delete(EtcdClusters, { namespace: ns, name });
    await dropClaims(env.client, ns, name);
    await dropBackup(env.client, ns, backup, s3);
  }
  report('dr.restore_s', median(times), 's');
  report('dr.restore_s.min', Math.min(...times), 's');
  report('dr.restore_s.max', Math.max(...times), 's');
}

const run: Record<Phase, (env: TestEnv, s3: S3Addon, ns: string) => Promise<void>> = { backup: backupPhase, restore: restorePhase, dr: drPhase };
let env: TestEnv | undefined;
let s3: S3Addon | undefined;
try {
  progress(`operator: build, load, install (phases: ${[...phases].join(', ')}; ${runs} runs each)`);
  env = await setUpOperator();
  const ns = await env.namespace('bench-backup');
  s3 = await enableS3(env, [ns]);
  for (const phase of PHASES) {
    if (!phases.has(phase)) continue;
    // One phase failing still lets the others report.
    try {
      await run[phase](env, s3, ns);
    } catch (err) {
      progress(`phase ${phase} failed: ${(err as Error).message}`);
      process.exitCode = 1;
    }
  }
} finally {
  s3?.hostClient.destroy();
  await env?.stop();
}
