// Every condition reason, phase and event reason the operator sets, with what it means. status.ts and
// reconcile.ts use these names; docs/operations.md's tables are generated from this file
// (`node packages/etcd-operator/scripts/generate.ts`), so the docs list exactly what the code can set.

import { STEP_WARN_MS } from '@quorum/kit';
import { PERSON_WAITS } from './progress.ts';

export interface ReasonDoc {
  reason: string;
  status: 'True' | 'False';
  meaning: string;
}

/** Progressing's reason is the step under way; a wait's reason is the plan's own (see WAIT_REASONS). */
export const STEP_REASONS = {
  bootstrap: 'Bootstrapping',
  createPod: 'CreatingMemberPod',
  deletePod: 'DeletingPod',
  deletePVC: 'DeletingClaim',
  addMember: 'AddingMember',
  promoteMember: 'PromotingLearner',
  removeMember: 'RemovingMember',
  restartMember: 'RestartingMember',
  startRecovery: 'RecoveringFromQuorumLoss',
  clearForRestore: 'ClearingForRestore',
  startRollout: 'RollingUpdate',
  updateMember: 'RollingUpdate',
  moveLeader: 'RollingUpdate',
  switchPeerURL: 'RollingUpdate',
  haltRollout: 'UpgradeFailed',
  createBackup: 'BackupBeforeUpgrade',
  downgrade: 'Downgrading',
  issueTLSSecrets: 'IssuingCertificates',
  rotateCA: 'RotatingCA',
  deleteTLSSecret: 'DeletingSecret',
  compact: 'Compacting',
  defragment: 'Defragmenting',
  disarmAlarm: 'DisarmingAlarm',
} as const;

/** The reasons of the planner's waits (plan/ returns them; Progressing carries them while it waits). */
export const WAIT_REASONS = {
  Bootstrapping: 'the initial members are starting and have not formed a quorum yet',
  NoSpace:
    "etcd's NOSPACE alarm is raised and the recovery cannot go on: every member was compacted and defragmented, but the data in use still takes 90 % or more of the quota (the alarm would come back at once); raise spec.etcd.quotaBackendBytes (rolled out even under the alarm) or delete data. The message gives the sizes",
  CARotation: 'a CA rotation waits for every member to serve a certificate of the new CA (the kubelet refreshes mounted Secrets within about a minute) before the old CA is dropped; the message names those that do not yet',
  QuorumUnavailable: 'no quorum answered a member list; membership is left alone (the message names the members that did not answer, and why)',
  QuorumUnhealthy: 'fewer than a quorum of voting members are healthy; the message names those that are not',
  LearnerStarting: 'a learner was added and its etcd has not started serving yet',
  WaitingForHealthyMembers: 'a membership change waits until the members it depends on serve',
  MembersNotReady: 'every member is in the membership, some are not ready yet',
  PodTerminating: 'a member pod is being deleted; it is recreated once it is gone',
  QuorumLost: 'a majority of members lost its data for good (PVC gone, or an empty data directory etcd refuses); with spec.disasterRecovery.policy Manual nothing is changed (docs/operations.md#quorum-lost), with Restore the message says why there is nothing to recover from yet',
  ForcingNewCluster: 'a Restore recovery: the surviving member with the newest data restarts alone with --force-new-cluster',
  RestoringFromBackup: "a Restore recovery from a backup: the old members' pods are going before the cluster is re-created from it",
  BackupNotReady: 'spec.bootstrap.fromBackup names an EtcdBackup that does not exist or has not succeeded yet; no member is created until it has (the message says which)',
  SnapshotHashMissing: 'the snapshot spec.bootstrap.fromBackup names has no SHA-256 to check it against (destination and key without sha256, or an EtcdBackup that recorded none); no member is created from it (the message says which)',
  CredentialsNotLabelled: "the credentials Secret spec.bootstrap.fromBackup's destination names is not labelled etcd.quorum.dev/backup-credentials=true, so no member mounts it (the operator mounts only Secrets their owner marked for backups); label it, and the restore goes on",
  CredentialsSecretNotFound: "the credentials Secret spec.bootstrap.fromBackup's destination names does not exist in the cluster's namespace; create it (labelled etcd.quorum.dev/backup-credentials=true), and the restore goes on",
  SnapshotRefused: "a restored member's init containers refused the snapshot (SHA-256 mismatch, truncated, or etcd's own hash check failed); no member started on it, and the message has the refusal",
  PodStuckTerminating: 'a member pod has been terminating for a long time (its node is probably down); the message names the node and what a person can do, and the member is replaced after spec.replaceStuckMemberAfterSeconds',
  RollingUpdate:
    "a rolling update of member pods is under way (docs/upgrades.md): the message names the member being updated or waited for and what it still lacks (Ready for long enough, caught up with the leader's commit index), how many members are updated, and whether leadership is moving",
  UpgradeBlocked:
    'a rolling update changes no member: etcd would refuse the version move (a skipped minor version, back a minor version after the cluster version moved), or a CORRUPT alarm (or NOSPACE, for a version move) is raised; the message says which and what to do',
  DowngradeMigratingStorage:
    "a downgrade (spec.version one minor below etcd's cluster version) was enabled through etcd's downgrade API; no member goes back to the older binary until every member on the newer one has migrated its data to the older storage version and the cluster version is the older one (the message names the members still migrating)",
  BackupBeforeUpgrade:
    'a rolling update that changes spec.version waits, before it touches any member, for the EtcdBackup spec.backup asks for (named in the message) to succeed; a failed one halts the rollout (UpgradeFailed, BackupFailed)',
  UpgradeFailed:
    "a rolling update halted at a member that failed its gate (crash-looping, cannot start, not healthy and caught up within the bound, or another etcd version than spec.version), or before any member because the backup taken before a version change failed (BackupFailed); no further member is updated until spec changes (a rollback) or the etcd.quorum.dev/retry-rollout annotation gets a new value. While it is halted no member is added either",
  TLSSecretInvalid:
    "the certificates of spec.tls cannot be used: a Secret named in spec.tls is missing or fails its check (not signed by its ca.crt, names or key usages missing, expired, tls.key not its key), or an operator-managed CA Secret is unreadable; no pod is created or changed until it is fixed, and the message says what is wrong (docs/tls.md)",
} as const;

export type WaitReason = keyof typeof WAIT_REASONS;

export const CONDITIONS: Record<string, { trueMeans: string; reasons: ReasonDoc[] }> = {
  Available: {
    trueMeans: 'a quorum of the voting members serves: the cluster takes reads and writes',
    reasons: [
      { reason: 'QuorumServes', status: 'True', meaning: 'at least a quorum of voting members is ready; the message counts them' },
      { reason: 'QuorumLost', status: 'False', meaning: 'a member list was read, but fewer than a quorum of voters serve' },
      { reason: 'Unreachable', status: 'False', meaning: 'no quorum answered' },
      { reason: 'InvalidSpec', status: 'False', meaning: 'the spec is invalid and nothing was observed' },
    ],
  },
  Progressing: {
    trueMeans: 'a step is under way or being retried; the reason names it, the message says for how long and the last refusal in etcd\'s or Kubernetes\' words',
    reasons: [
      // A step whose reason is also a wait's (a rolling update's steps and waits share one) is documented once, as the wait.
      ...[...new Set(Object.values(STEP_REASONS))].filter((reason) => !(reason in WAIT_REASONS)).map((reason): ReasonDoc => ({ reason, status: 'True', meaning: `the step ${reason.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase()} is under way` })),
      ...Object.entries(WAIT_REASONS).map(([reason, meaning]): ReasonDoc => ({ reason, status: PERSON_WAITS.includes(reason) ? 'False' : 'True', meaning })),
      { reason: 'ProgressDeadlineExceeded', status: 'False', meaning: 'the current step has made no progress for longer than its bound; Degraded says which step and why' },
      { reason: 'Stable', status: 'False', meaning: 'membership, pods and spec agree; nothing to do' },
      { reason: 'Paused', status: 'False', meaning: 'spec.paused is true: the operator makes no changes' },
      { reason: 'InvalidSpec', status: 'False', meaning: 'the spec is invalid; nothing is changed until it is fixed' },
    ],
  },
  Degraded: {
    trueMeans: 'something needs attention: a member does not serve, a step is stuck, a rolling update halted or is blocked, or the spec is invalid',
    reasons: [
      { reason: 'InvalidSpec', status: 'True', meaning: 'the spec failed validation (possible when the webhooks are off); the message is the validation error' },
      { reason: 'UpgradeFailed', status: 'True', meaning: "a rolling update halted at a member: the message names it, says why in etcd's or the kubelet's words, and how to roll back or retry (docs/upgrades.md)" },
      { reason: 'UpgradeBlocked', status: 'True', meaning: 'a rolling update changes no member: the message says what etcd would refuse or which alarm is raised, and what to do' },
      { reason: 'MembersCrashLooping', status: 'True', meaning: 'member containers keep exiting; the message names each with its exit code and the last lines etcd printed' },
      { reason: 'MembersCannotStart', status: 'True', meaning: 'a member container cannot start (image pull failure, bad configuration); the message has the kubelet\'s reason and message' },
      { reason: 'SnapshotRefused', status: 'True', meaning: 'the snapshot of spec.bootstrap.fromBackup was refused before any member started; the message says why (restore from another backup: create a new EtcdCluster)' },
      { reason: 'TLSSecretInvalid', status: 'True', meaning: 'the certificates of spec.tls cannot be used; no pod is created or changed until the Secret is fixed, and the message says what is wrong (docs/tls.md)' },
      { reason: 'CertificateExpiring', status: 'True', meaning: 'every member serves, but a certificate of a user-supplied Secret (spec.tls secretName) ends within 30 days: update the Secret (docs/tls.md)' },
      { reason: 'NoSpace', status: 'True', meaning: "etcd's NOSPACE alarm is raised: writes are refused, reads are served; the message says what the operator does about it (compaction, a defragmentation of each member, the disarm) and where it is (docs/operations.md#nospace)" },
      { reason: 'StepStalled', status: 'True', meaning: 'a step has made no progress for longer than its bound; the message names the step, the time and the last refusal' },
      { reason: 'MembersUnhealthy', status: 'True', meaning: 'some members do not serve; the message names them' },
      { reason: 'QuorumUnavailable', status: 'True', meaning: 'no quorum answered a member list' },
      { reason: 'AllMembersHealthy', status: 'False', meaning: 'every member serves' },
    ],
  },
  MembersUpToDate: {
    trueMeans: 'every member pod runs what the spec asks for (version, image, podTemplate, antiAffinity, etcd options), rendered the way this operator renders member pods',
    reasons: [
      { reason: 'UpToDate', status: 'True', meaning: 'every member pod matches the spec' },
      { reason: 'RollingUpdate', status: 'False', meaning: 'the spec changed, or the operator now renders member pods differently (the field `render`, e.g. after an operator upgrade): members are being updated one at a time (docs/upgrades.md); the message counts them and names the members and fields that still differ' },
      { reason: 'UpgradeFailed', status: 'False', meaning: 'the rolling update halted (see Degraded); the message names the members and fields that still differ' },
    ],
  },
  EvenReplicas: {
    trueMeans: 'replicas is even, which tolerates no more failures than one member fewer',
    reasons: [{ reason: 'EvenReplicas', status: 'True', meaning: 'the message says how many failures are tolerated' }],
  },
};

export const PHASE_DOCS: Record<string, string> = {
  Creating: 'a new cluster, until it first runs with every member',
  Running: 'membership matches the spec and every member serves',
  Scaling: 'members are being added or removed because replicas changed',
  Healing: 'a member pod is being recreated or a lost member replaced',
  Updating: 'a rolling update of member pods is under way (spec.version, image, podTemplate, antiAffinity or etcd options changed)',
  Degraded: 'waiting on members that do not serve, or a step is stuck',
  Paused: 'spec.paused is true',
  Failed: 'the spec is invalid',
};

export const EVENT_REASONS: Record<string, { type: 'Normal' | 'Warning'; meaning: string }> = {
  ClusterBootstrapped: { type: 'Normal', meaning: 'the initial members were created' },
  MemberAdded: { type: 'Normal', meaning: 'a learner was added to the membership' },
  MemberPodCreated: { type: 'Normal', meaning: 'the pod of a newly added member was created' },
  MemberPodRecreated: { type: 'Normal', meaning: 'the pod of an existing member was recreated (same member, same data)' },
  MemberPromoted: { type: 'Normal', meaning: 'a learner became a voting member' },
  MemberRemoved: { type: 'Normal', meaning: 'a member was removed (Warning when it was replaced: DataLost, CrashLooping, PodStuckTerminating)' },
  MemberPodDeleted: { type: 'Normal', meaning: 'a pod that is no longer a member (or failed) was deleted' },
  MemberClaimDeleted: { type: 'Normal', meaning: 'the claim of a former member was deleted (reclaimPolicy Delete)' },
  QuorumLost: { type: 'Warning', meaning: 'a majority of members lost its data for good; the note says what the policy does about it' },
  RecoveryStarted: { type: 'Warning', meaning: 'a Restore recovery began: from which survivor or backup, and its revision (the data-loss window)' },
  RecoveryCompleted: { type: 'Normal', meaning: 'the cluster serves again after a recovery; the note repeats the revision and time it came back from' },
  MemberRestarted: { type: 'Warning', meaning: 'a member was evicted so that its peers reconnect to it (a stale peer view, etcd-io/etcd#14523)' },
  StepRetrying: { type: 'Warning', meaning: `a step has been retried for ${STEP_WARN_MS / 1000} s; the note carries the last refusal` },
  StepStalled: { type: 'Warning', meaning: 'a step made no progress within its bound' },
  StepFailed: { type: 'Warning', meaning: 'Kubernetes refused a write (admission, quota, validation); the note carries its message' },
  MembersCrashLooping: { type: 'Warning', meaning: 'member containers keep exiting; the note has the exit code and the last lines etcd printed' },
  RollingUpdateStarted: { type: 'Normal', meaning: 'a rolling update began: the target version and the members and fields that differ' },
  MemberUpdating: { type: 'Normal', meaning: "a member's pod was evicted to be recreated from the current spec on its volume, as the same member (on emptyDir: the member was replaced)" },
  LeaderMoved: { type: 'Normal', meaning: 'leadership moved to an updated member, so that the old leader is updated last, as a follower' },
  CARotation: { type: 'Normal', meaning: 'a step of an operator-managed CA rotation: TrustNew (both CAs trusted; members roll), Reissue (certificates signed by the new CA), DropOld (the old CA dropped; members roll)' },
  PeerURLSwitched: { type: 'Normal', meaning: "peer TLS turned on in place: a member's peer URL changed to https in etcd's member list; its pod is updated next to listen on it" },
  DowngradeEnabled: { type: 'Normal', meaning: "etcd's downgrade API was told to go one minor down (VALIDATE, then ENABLE): the cluster version moved to the older minor at once" },
  DowngradeFinished: { type: 'Normal', meaning: "a member was to be added while etcd still had a downgrade enabled with every member already on its minor: the downgrade was ended first (etcd ends it itself only when every member answers, and a new member cannot join while it is enabled)" },
  DowngradeCancelled: { type: 'Normal', meaning: "spec.version went back during a downgrade: etcd's downgrade was cancelled, and members already on the older minor are upgraded back" },
  BackupBeforeUpgrade: { type: 'Normal', meaning: 'an EtcdBackup was created before a version change touches any member (spec.backup.beforeVersionChange Always)' },
  RollingUpdateCompleted: { type: 'Normal', meaning: 'every member runs the current spec, each having passed its gate' },
  UpgradeFailed: { type: 'Warning', meaning: 'a rolling update halted at a member; the note says why and how to roll back or retry' },
  UpgradeBlocked: { type: 'Warning', meaning: 'a rolling update changes no member (a version move etcd would refuse, or an alarm); the note says why' },
  CertificatesIssued: { type: 'Normal', meaning: 'operator-managed TLS Secrets were issued or renewed; the note names them and why' },
  TLSSecretInvalid: { type: 'Warning', meaning: 'a TLS Secret cannot be used; the note says what is wrong' },
  NoSpace: { type: 'Warning', meaning: "etcd's NOSPACE alarm was raised: writes are refused until the operator's recovery (compaction, defragmentation, disarm) ends" },
  NoSpaceCleared: { type: 'Normal', meaning: 'no member reports the NOSPACE alarm any more; the note says for how long it was raised' },
  Compacted: { type: 'Normal', meaning: 'NOSPACE recovery: the keyspace was compacted to the current revision' },
  Defragmented: { type: 'Normal', meaning: "a member's backend was defragmented (Threshold, Schedule or NoSpace); the note says how long it took (the time it served no requests) and its size before and after" },
  AlarmDisarmed: { type: 'Normal', meaning: 'NOSPACE recovery: the alarm was disarmed once every member was defragmented and the data fits the quota' },
};

/** The Markdown for docs/operations.md between the generated markers. */
export function reasonsMarkdown(): string {
  const lines = ['| condition | True means | status | reason | meaning |', '|---|---|---|---|---|'];
  for (const [type, c] of Object.entries(CONDITIONS)) {
    c.reasons.forEach((r, i) => lines.push(`| ${i === 0 ? `\`${type}\`` : ''} | ${i === 0 ? c.trueMeans : ''} | ${r.status} | \`${r.reason}\` | ${r.meaning} |`));
  }
  lines.push('', '| phase | meaning |', '|---|---|', ...Object.entries(PHASE_DOCS).map(([p, m]) => `| \`${p}\` | ${m} |`));
  lines.push('', '| event | type | meaning |', '|---|---|---|', ...Object.entries(EVENT_REASONS).map(([r, e]) => `| \`${r}\` | ${e.type} | ${e.meaning} |`));
  return lines.join('\n') + '\n';
}

/** The runbook whose condition, phase and event tables are generated, relative to the repository root. */
export const OPERATIONS_FILE = 'docs/operations.md';
const BEGIN = '<!-- generated: reasons (packages/etcd-operator/src/cluster/reasons.ts); do not edit -->';
const END = '<!-- end of generated reasons -->';

/** `doc` with the text between the markers replaced by reasonsMarkdown(); the markers must be there. */
export function withGeneratedReasons(doc: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${OPERATIONS_FILE}: the generated-reasons markers are missing`);
  return `${doc.slice(0, start + BEGIN.length)}\n\n${reasonsMarkdown()}\n${doc.slice(end)}`;
}
