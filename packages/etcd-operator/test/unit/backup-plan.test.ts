import assert from 'node:assert/strict';
import test from 'node:test';
import { backupJob, backupJobName, jobDeadlineSeconds, JOB_CONTROLLER_UID_LABEL, observeJob, parseAgentResult, podsOfJob } from '../../src/backup/job.ts';
import { pickMember, planBackup, type BackupObserved, type ObservedMember } from '../../src/backup/plan.ts';
import type { EtcdBackup } from '../../src/api/etcdbackup.ts';
import type { Job, Pod } from '@quorum/runtime';

type ContainerState = NonNullable<NonNullable<NonNullable<Pod['status']>['containerStatuses']>[number]['state']>;
/** A Job's pod whose backup container is in `state` (the status fields the API server always sets, at their zero). */
const agentPod = (state: ContainerState, metadata: Pod['metadata'] = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata,
  status: { containerStatuses: [{ name: 'backup', image: 'agent', imageID: '', ready: false, restartCount: 0, state }] },
});

const member = (name: string, over: Partial<ObservedMember> = {}): ObservedMember => ({ name, healthy: true, leader: false, learner: false, hasLeader: true, appliedIndex: '100', dbSize: 1000, ...over });
const base = (over: Partial<BackupObserved> = {}): BackupObserved => ({ phase: undefined, clusterExists: true, members: [], job: undefined, now: 1_000_000, cannotStartGraceMs: 60_000, ...over });
const OK = { ok: true as const, key: 'p/c-20261123T000000Z-rev9.db', location: 's3://quorum/p/c-20261123T000000Z-rev9.db', sizeBytes: 10, sha256: 'a'.repeat(64), revision: '9', etcdVersion: '3.6.16', member: 'c-1', startedAt: '', completedAt: '' };

test('the snapshot comes from the follower with the newest applied index, never the leader while a follower serves', () => {
  const members = [member('c-0', { leader: true, appliedIndex: '900' }), member('c-1', { appliedIndex: '899' }), member('c-2', { appliedIndex: '18446744073709551000' })];
  assert.equal(pickMember(members)?.name, 'c-2');
  assert.equal(pickMember([member('c-0', { leader: true }), member('c-1', { healthy: false })])?.name, 'c-0', 'the leader when it alone serves');
  assert.equal(pickMember([member('c-0', { learner: true }), member('c-1', { leader: true })])?.name, 'c-1', 'never a learner');
});

test('no quorum fails at once, naming it, instead of timing out', () => {
  const a = planBackup(base({ members: [member('c-0', { hasLeader: false }), member('c-1', { healthy: false, hasLeader: false })] }));
  assert.equal(a.type, 'fail');
  assert.ok(a.type === 'fail' && a.reason === 'NoQuorum' && /no quorum/.test(a.message) && /c-0/.test(a.message), JSON.stringify(a));
  assert.equal(planBackup(base({ clusterExists: false })).type, 'fail');
});

test('a Running backup whose Job is gone starts it again for the recorded member (a crash between the two writes)', () => {
  assert.deepEqual(planBackup(base({ phase: 'Running', recordedMember: 'c-1', members: [member('c-1', { dbSize: 5 })] })), { type: 'startJob', member: 'c-1', dbSize: 5 });
});

test("the Job's result decides: success with the agent's figures, failure with its reason", () => {
  const running = (job: BackupObserved['job']): BackupObserved => base({ phase: 'Running', recordedMember: 'c-1', job });
  assert.deepEqual(planBackup(running({ succeeded: true, failed: false, result: OK })), { type: 'succeed', result: OK });
  assert.deepEqual(planBackup(running({ succeeded: false, failed: true, result: { ok: false, reason: 'AccessDenied', message: 'refused' } })), { type: 'fail', reason: 'AccessDenied', message: 'refused' });
  assert.equal(planBackup(running({ succeeded: true, failed: false })).type, 'fail', 'success without a result is not trusted');
  assert.equal(planBackup(running({ succeeded: false, failed: false })).type, 'wait');
  const stuck = (since: number): BackupObserved => running({ succeeded: false, failed: false, cannotStart: { message: 'CreateContainerConfigError: secret "s" not found', since } });
  assert.equal(planBackup(stuck(1_000_000 - 1000)).type, 'wait');
  const failed = planBackup(stuck(1_000_000 - 61_000));
  assert.ok(failed.type === 'fail' && failed.reason === 'JobCannotStart' && /secret "s" not found/.test(failed.message));
  assert.equal(planBackup(base({ phase: 'Succeeded' })).type, 'done');
});

test('the agent result is read from the termination message; anything else is not a result', () => {
  assert.deepEqual(parseAgentResult(JSON.stringify(OK)), OK);
  assert.deepEqual(parseAgentResult('{"ok":false,"reason":"BucketNotFound","message":"bucket x does not exist"}'), { ok: false, reason: 'BucketNotFound', message: 'bucket x does not exist' });
  assert.equal(parseAgentResult('panic: something\n at line 3'), undefined);
  const observed = observeJob(
    { apiVersion: 'batch/v1', kind: 'Job', metadata: {}, status: { conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' }] } },
    [agentPod({ terminated: { exitCode: 137, reason: 'Error' } })],
    0,
  );
  assert.equal(observed.failed, true);
  assert.match(observed.failureMessage ?? '', /DeadlineExceeded.*exit code 137/);
});

test('a backup succeeds when the agent exited 0 with its result, before the Job controller says Complete', () => {
  const job: Job = { apiVersion: 'batch/v1', kind: 'Job', metadata: {}, status: { active: 1 } };
  const pod = (exitCode: number, message?: string): Pod => agentPod({ terminated: { exitCode, ...(message ? { message } : {}) } });
  const running = (observed: BackupObserved['job']): BackupObserved => base({ phase: 'Running', recordedMember: 'c-1', job: observed });
  const done = observeJob(job, [pod(0, JSON.stringify(OK))], 0);
  assert.equal(done.succeeded, true);
  assert.deepEqual(planBackup(running(done)), { type: 'succeed', result: OK });
  // Exit 0 without a result is still not trusted; a failed exit is not a success.
  assert.equal(planBackup(running(observeJob(job, [pod(0)], 0))).type, 'fail');
  assert.equal(observeJob(job, [pod(1)], 0).succeeded, false);
});

test("a Job's result is read only from the pods its controller made: its UID in controller-uid and as controlling owner, never a name label alone", () => {
  const job: Job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'main-backup-1', uid: 'job-uid' }, status: { active: 1 } };
  const names = { 'batch.kubernetes.io/job-name': 'main-backup-1', 'etcd.quorum.dev/backup': 'b' };
  const madeBy = (uid: string, ownerUid = uid): Pod['metadata'] => ({ labels: { ...names, [JOB_CONTROLLER_UID_LABEL]: uid }, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'main-backup-1', uid: ownerUid, controller: true }] });
  const result = { terminated: { exitCode: 0, message: JSON.stringify(OK) } };
  const forged = [
    agentPod(result, { labels: names }), // the Job's name and the backup's, written by anyone who may create pods
    agentPod(result, madeBy('old-job-uid')), // a Job of the same name deleted and made again
    agentPod(result, madeBy('job-uid', 'other-uid')), // the label copied, not the owner
    agentPod(result, { ...madeBy('job-uid'), ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'main-backup-1', uid: 'job-uid' }] }), // owned, not controlled
  ];
  assert.deepEqual(podsOfJob(job, forged), []);
  assert.equal(observeJob(job, podsOfJob(job, forged), 0).succeeded, false, 'no forged pod passes for the result');
  const own = agentPod(result, madeBy('job-uid'));
  assert.deepEqual(podsOfJob(job, [...forged, own]), [own]);
  assert.deepEqual(observeJob(job, podsOfJob(job, [...forged, own]), 0).result, OK);
  assert.deepEqual(podsOfJob({ ...job, metadata: { name: 'main-backup-1' } }, [own]), [], 'a Job without a UID (not from the API server) has no pods');
});

test("a pod that cannot start is timed from its creation, which survives an operator restart", () => {
  const created = Date.parse('2026-11-23T10:00:00Z');
  const pod = agentPod({ waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "x"' } }, { creationTimestamp: '2026-11-23T10:00:00Z' });
  const job: Job = { apiVersion: 'batch/v1', kind: 'Job', metadata: {}, status: {} };
  const observed = observeJob(job, [pod], created + 90_000);
  assert.deepEqual(observed.cannotStart, { message: 'ImagePullBackOff: Back-off pulling image "x"', since: created });
  // A fresh operator process sees the same start of the wait, so the grace ends when it would have.
  assert.equal(observeJob(job, [pod], created + 95_000).cannotStart?.since, created);
});

test('the backup Job: one attempt, a size-scaled deadline, the Secret mounted only in it, restricted security', () => {
  const backup: EtcdBackup = {
    metadata: { name: 'nightly', namespace: 'prod', uid: 'u-1' },
    spec: { clusterName: 'main', destination: { s3: { bucket: 'quorum', prefix: 'p', credentialsSecret: 's3-credentials' } } },
  };
  const job = backupJob(backup, { member: 'main-1', dbSize: 1024 ** 3, agentImage: 'img' }) as unknown as {
    metadata: { name: string };
    spec: { backoffLimit: number; activeDeadlineSeconds: number; template: { spec: { volumes: { secret?: { secretName: string } }[]; containers: { args: string[]; securityContext: Record<string, unknown> }[] } } };
  };
  assert.equal(job.metadata.name, backupJobName(backup));
  assert.ok(job.metadata.name.length <= 63);
  assert.equal(job.spec.backoffLimit, 0);
  assert.equal(job.spec.activeDeadlineSeconds, jobDeadlineSeconds(1024 ** 3));
  assert.ok(jobDeadlineSeconds(1024 ** 3) > 60 * 8, 'a 1 GiB database gets minutes, not a fixed 60 s');
  assert.deepEqual(job.spec.template.spec.volumes.find((v) => v.secret)?.secret?.secretName, 's3-credentials');
  const args = job.spec.template.spec.containers[0]!.args;
  assert.ok(args.includes('--endpoint=http://main-1.main.prod.svc:2379'));
  assert.equal(job.spec.template.spec.containers[0]!.securityContext['allowPrivilegeEscalation'], false);
});
