// Healing: pods Kubernetes gave up on, a cluster that has no quorum (bootstrap, bringing known members back,
// quorum lost for good and what to restore from), and members replaced or restarted while a quorum holds.
// A member is never presumed gone on silence: only Kubernetes or a quorum's member list is evidence.
import { MAX_STALE_PEER_RESTARTS } from '../../api/etcdcluster.ts';
import { quorum } from '../../etcd/quorum.ts';
import { memberName } from '../../names.ts';
import { nextIndex, podDetail, podLookup, restoredMembers, seconds, unreachableDetail, type Facts } from './core.ts';
import type { Action, Observed, ObservedMember } from './types.ts';

// Declared with the API, whose status.step.restarts description states it.
export { MAX_STALE_PEER_RESTARTS };

/** Pods Kubernetes gave up on (evicted, failed), or that never got past an outdated init container: replaced in place, same member, same PVC. */
export function podsGivenUpStep(o: Observed): Action | undefined {
  const failed = o.pods.find((p) => p.phase === 'Failed' && !p.deleting);
  if (failed) return { type: 'deletePod', member: failed.member, reason: 'PodFailed' };
  const staleInit = o.pods.find((p) => p.initOutdated && !p.deleting);
  if (staleInit) return { type: 'deletePod', member: staleInit.member, reason: 'InitContainerOutdated' };
  return undefined;
}

/** A Backup recovery under way: the old cluster is cleared, then bootstrapped anew from the backup. */
export function backupRecoveryStep(o: Observed): Action | undefined {
  if (o.recovery?.method === 'Backup' && !o.bootstrapped && o.recovery.source && o.bootstrapMembers.length === 0) {
    if (o.pods.some((p) => !p.deleting) || o.pvcs.length > 0) return { type: 'clearForRestore', reason: `restoring from EtcdBackup ${o.recovery.from}` };
    if (o.pods.length > 0) return { type: 'wait', reason: 'RestoringFromBackup', detail: `waiting for the old members' pods to go before restoring from EtcdBackup ${o.recovery.from}`, requeueAfterMs: 2000 };
    const first = nextIndex(o);
    return { type: 'bootstrap', members: Array.from({ length: restoredMembers(o.replicas, o.recovery.source) }, (_, i) => memberName(o.cluster, first + i)), restore: o.recovery.source };
  }
  return undefined;
}

/** No quorum answered a member list: bootstrap, bring known members' pods back, or face a quorum lost for good. */
export function withoutQuorumStep(o: Observed): Action {
  const pod = podLookup(o);
  const hasPVC = (member: string): boolean => o.pvcs.includes(member);
  // Nothing exists yet: bootstrap the initial size statically, all members at once. The member list is
  // recorded (status) before any pod exists, so a crash part-way resumes the same bootstrap.
  // A restore waits for its snapshot (an EtcdBackup still running, or not there yet) before any member exists.
  const restore = o.bootstrapped ? undefined : o.restore;
  if (restore && !restore.ready) {
    // A snapshot with no SHA-256 is never restored: nothing to wait for soon, but the cluster says why.
    // Credentials their owner has not marked for backups wait for the label (or the Secret): a person must act.
    switch (restore.reason) {
      case 'SnapshotHashMissing':
        return { type: 'wait', reason: 'SnapshotHashMissing', detail: restore.why, requeueAfterMs: 30_000 };
      case 'CredentialsNotLabelled':
        return { type: 'wait', reason: 'CredentialsNotLabelled', detail: restore.why, requeueAfterMs: 15_000 };
      case 'CredentialsSecretNotFound':
        return { type: 'wait', reason: 'CredentialsSecretNotFound', detail: restore.why, requeueAfterMs: 15_000 };
      case 'BackupNotReady':
        return { type: 'wait', reason: 'BackupNotReady', detail: restore.why, requeueAfterMs: 5000 };
    }
  }
  const source = restore?.ready ? { restore: restore.source } : {};
  if (!o.bootstrapped && o.bootstrapMembers.length === 0 && o.pods.length === 0 && o.pvcs.length === 0 && o.lastKnownMembers.length === 0) {
    const first = nextIndex(o);
    return { type: 'bootstrap', members: Array.from({ length: restoredMembers(o.replicas, source.restore) }, (_, i) => memberName(o.cluster, first + i)), ...source };
  }
  if (!o.bootstrapped && o.bootstrapMembers.length > 0) {
    const missing = o.bootstrapMembers.find((m) => !pod(m));
    if (missing) return { type: 'createPod', member: missing, state: 'new', initialMembers: o.bootstrapMembers, reason: 'Bootstrap', ...source };
    // Refused by a check before etcd started: nothing serves it, and waiting will not change the bytes.
    const refused = o.pods.filter((p) => p.restoreFailed);
    if (refused.length > 0) {
      return { type: 'wait', reason: 'SnapshotRefused', detail: `the snapshot was refused before any member started; no member serves it: ${refused.map((p) => `${p.member}: ${p.restoreFailed}`).join('; ')}`, requeueAfterMs: 10_000 };
    }
    return { type: 'wait', reason: 'Bootstrapping', detail: `waiting for the initial members (${o.bootstrapMembers.join(', ')}) to form a quorum${unreachableDetail(o)}`, requeueAfterMs: 1000 };
  }
  // No quorum answered. Bringing back a deleted pod of a known member is always safe (same member, same
  // data) and may be what restores the quorum; anything touching membership must wait.
  const known = o.bootstrapped ? o.lastKnownMembers : o.pods.map((p) => p.member).concat(o.pvcs);
  if (o.recovery?.method === 'ForceNewCluster') {
    const survivor = o.recovery.from;
    const p = pod(survivor);
    if (!p) return { type: 'createPod', member: survivor, state: 'existing', initialMembers: [survivor], reason: 'ForceNewCluster', forceNewCluster: true };
    if (!p.forcedNewCluster && !p.deleting) return { type: 'deletePod', member: survivor, reason: 'ForceNewCluster' };
    return { type: 'wait', reason: 'ForcingNewCluster', detail: `${survivor} restarts alone on its data with --force-new-cluster${podDetail(p)}`, requeueAfterMs: 2000 };
  }
  for (const member of known) {
    if (!pod(member) && (hasPVC(member) || !o.persistent)) {
      const first = !o.bootstrapped && known.length === 1;
      return { type: 'createPod', member, state: first ? 'new' : 'existing', initialMembers: first ? [member] : known, reason: 'PodMissing' };
    }
  }
  if (!o.bootstrapped) return { type: 'wait', reason: 'Bootstrapping', detail: `waiting for the first member to serve${unreachableDetail(o)}`, requeueAfterMs: 2000 };
  const lost = disaster(o);
  if (lost) return lost;
  return { type: 'wait', reason: 'QuorumUnavailable', detail: `no quorum answered a member list; membership is left alone${unreachableDetail(o)}`, requeueAfterMs: 5000 };
}

/**
 * --force-new-cluster did its work once the member serves alone: every later restart must be a plain one
 * (the flag would rewrite the membership again).
 */
export function forcedNewClusterStep(o: Observed): Action | undefined {
  const forced = o.pods.find((p) => p.forcedNewCluster && !p.deleting);
  if (forced) {
    // The cluster grows back only after that restart (status records the recovery complete first).
    if (o.recovery === undefined) return { type: 'deletePod', member: forced.member, reason: 'ForceNewClusterDone' };
    return { type: 'wait', reason: 'ForcingNewCluster', detail: `${forced.member} serves alone after --force-new-cluster; it restarts without the flag, then the cluster grows back`, requeueAfterMs: 1000 };
  }
  return undefined;
}

/** With a quorum: members whose pod is stuck, whose data is gone, that crash-loop, or that others see as stale. */
export function replaceBrokenStep(f: Facts): Action | undefined {
  const { o, members, inMembership, pod, survivesWithout } = f;
  // A pod stuck Terminating (its node is down: the kubelet cannot confirm the deletion) holds only its own
  // member back. Past the bound, with a quorum without it, the member is replaced under a new name: its
  // data is on that node, and Kubernetes will not let the pod go until the node returns or a person acts.
  const stuck = o.pods.find((p) => p.deleting && p.deletingSince !== undefined && o.now - p.deletingSince >= o.stuckTerminatingReplaceMs && inMembership.has(p.member));
  const stuckMember = stuck && members.find((m) => m.member === stuck.member);
  if (stuck && stuckMember && !stuckMember.healthy && survivesWithout(stuckMember)) {
    return { type: 'removeMember', member: stuckMember.member, id: stuckMember.id, reason: 'PodStuckTerminating' };
  }

  // A member whose data etcd's own words call gone (observe.ts etcdSaysDataLost: an empty data directory the
  // cluster knows, or an initial member's empty raft log): nothing brings it back, and waiting out the
  // crash-loop grace (and the kubelet's back-off) only keeps the cluster a member short. Replace it at once, while the rest keep a
  // quorum; not during a rollout, for the same reason as a crash-looping member below.
  // Only a member that had started: a learner that never did has no data to lose (its pod's stale
  // --initial-cluster is another matter).
  const wiped = members.find((m) => m.started && !m.healthy && pod(m.member)?.dataLost && !pod(m.member)?.ready);
  if (wiped && !o.rollout.record && survivesWithout(wiped)) return { type: 'removeMember', member: wiped.member, id: wiped.id, reason: 'DataLost' };

  // A member crash-looping for longer than the grace period, while the rest keep a quorum: replace it. Not
  // during a rollout: a member that crash-loops on a new spec is the rollout's failure (it halts), and a
  // replacement would get the same spec, over and over.
  const crashing = members.find((m) => {
    const since = pod(m.member)?.crashLoopingSince;
    return since !== undefined && o.now - since >= o.crashLoopGraceMs;
  });
  if (crashing && !o.rollout.record && survivesWithout(crashing)) return { type: 'removeMember', member: crashing.member, id: crashing.id, reason: 'CrashLooping' };

  // A change etcd has refused through every member for too long, while all members are healthy: some
  // member holds a stale "inactive" view of a peer (etcd-io/etcd#14523). Restart the peer it reports
  // inactive (a follower, if quorum survives it) so that the streams reconnect and the view is fresh.
  if (o.refused && (o.refused.restarts ?? 0) < MAX_STALE_PEER_RESTARTS && o.now - o.refused.since >= o.refusedRestartMs && members.every((m) => m.started && m.healthy && pod(m.member)?.ready)) {
    return stalePeer(o, members);
  }
  return undefined;
}

/**
 * The member to restart when a change is refused everywhere: one that another member reports inactive.
 * A follower is preferred (the leader's restart costs an election); the restart must leave a quorum.
 */
function stalePeer(o: Observed, members: ObservedMember[]): Action | undefined {
  const voters = members.filter((m) => !m.learner);
  // Restarting either side resets the view: the reported member's streams reconnect, or the reporter's
  // peer state is rebuilt. The follower of the two goes (a leader's restart costs an election).
  const candidates: { member: ObservedMember; why: string }[] = [];
  for (const [reporter, active] of Object.entries(o.refused!.activePeers)) {
    const reporterMember = voters.find((v) => v.member === reporter);
    for (const m of voters) {
      if (m.member === reporter || active.includes(m.member) || !reporterMember) continue;
      const target = m.id === o.membership!.leaderId ? reporterMember : m;
      candidates.push({ member: target, why: `${reporter} reports ${m.member} inactive while it serves` });
    }
  }
  const pick = candidates.find((c) => c.member.id !== o.membership!.leaderId && voters.filter((v) => v.id !== c.member.id).length >= quorum(voters.length));
  if (!pick) return undefined;
  return {
    type: 'restartMember',
    member: pick.member.member,
    reason: 'StalePeerView',
    detail: `${pick.why} (etcd-io/etcd#14523), and every member has refused the change for ${seconds(o.now - o.refused!.since)} s`,
  };
}

/**
 * Quorum lost for good: a majority of the known members has no data any more (PVC gone, or etcd refuses
 * its empty data directory), so waiting cannot bring the quorum back. Manual says so and stops; Restore
 * picks the newest data: a survivor newer than the newest backup, else that backup.
 */
function disaster(o: Observed): Action | undefined {
  const known = o.lastKnownMembers;
  const lost = known.filter((m) => (o.persistent && !o.pvcs.includes(m)) || o.pods.find((p) => p.member === m)?.dataLost);
  const survivors = known.filter((m) => !lost.includes(m));
  if (lost.length === 0 || survivors.length >= quorum(known.length)) return undefined;
  const what = `members ${lost.join(', ')} lost their data for good; ${survivors.length === 0 ? 'no member survives' : `the survivors (${survivors.join(', ')}) cannot make a quorum of ${known.length}`}`;
  if (o.disasterRecovery === 'Manual') {
    return { type: 'wait', reason: 'QuorumLost', detail: `${what}. spec.disasterRecovery.policy is Manual: nothing is changed; docs/operations.md#quorum-lost has the steps`, requeueAfterMs: 30_000 };
  }
  // Every survivor that has a pod must have answered: one that did not may hold the newest data, and the
  // choice cannot be taken back once the old members are gone.
  const silent = survivors.filter((m) => o.localRevisions?.[m] === undefined && o.pods.some((p) => p.member === m && !p.deleting));
  if (silent.length > 0) return { type: 'wait', reason: 'QuorumLost', detail: `${what}; waiting for ${silent.join(', ')} to answer its revision before choosing what to restore from${unreachableDetail(o)}`, requeueAfterMs: 3000 };
  const answered = survivors.filter((m) => o.localRevisions?.[m] !== undefined).sort((a, b) => (BigInt(o.localRevisions![b]!) > BigInt(o.localRevisions![a]!) ? 1 : -1));
  const best = answered[0];
  const backup = o.newestBackup;
  if (best && (!backup || BigInt(o.localRevisions![best]!) > BigInt(backup.revision))) {
    const revision = o.localRevisions![best]!;
    return {
      type: 'startRecovery', method: 'ForceNewCluster', from: best, revision, dataTime: new Date(o.now).toISOString(), lost,
      detail: `${what}; ${best} holds revision ${revision}, newer than ${backup ? `EtcdBackup ${backup.name} (revision ${backup.revision})` : 'any backup (there is none)'}: it restarts alone with --force-new-cluster and the cluster grows back from it`,
    };
  }
  if (backup) {
    return {
      type: 'startRecovery', method: 'Backup', from: backup.name, revision: backup.revision, ...(backup.completedAt ? { dataTime: backup.completedAt } : {}), lost, source: backup.source,
      detail: `${what}; the newest data is EtcdBackup ${backup.name} (revision ${backup.revision}${best ? `; ${best} holds only revision ${o.localRevisions![best]}` : ''}): the cluster is re-created from it`,
    };
  }
  return { type: 'wait', reason: 'QuorumLost', detail: `${what}, and this cluster has no Succeeded EtcdBackup: nothing to restore from`, requeueAfterMs: 30_000 };
}
