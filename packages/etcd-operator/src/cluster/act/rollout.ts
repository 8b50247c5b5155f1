// Steps of a rolling update: its record and halt are status (written before the step), so these say it; a
// member's update (evicted onto its volume, or replaced on emptyDir), a peer URL switched to https, leadership
// moved off the leader before its turn, the backup before a version change, and etcd's downgrade API.
import { AlreadyExistsError } from '@quorum/runtime';
import { BACKUP_KIND } from '../../api/etcdbackup.ts';
import { API_VERSION } from '../../api/etcdcluster.ts';
import { EtcdBackups } from '../../resources.ts';
import { changeMembership } from '../membership.ts';
import { FIELD_MANAGER, LABELS, peerURL, PURPOSE_LABEL } from '../../names.ts';
import { clusterKey, StepError, type ActContext, type Handlers } from './context.ts';
import { checkClusterVersion, downgradeEnabledTo, endpointOf, requireEndpoint, through, votingEndpoints } from './etcd.ts';
import { evict } from './kube.ts';

export const rolloutSteps: Handlers<'startRollout' | 'updateMember' | 'switchPeerURL' | 'moveLeader' | 'createBackup' | 'downgrade' | 'haltRollout'> = {
  startRollout(a, c) {
    // Status records the rollout (written before this step): nothing else to do.
    c.event('Normal', 'RollingUpdateStarted', a.detail);
    return Promise.resolve({ requeueAfter: 100 });
  },
  async updateMember(a, c) {
    // Status already names this member as the rollout's (a crash from here resumes with it).
    if (a.clusterVersionAtMost) await checkClusterVersion(c, a.clusterVersionAtMost);
    if (a.storageVersion) await checkStorageVersion(c, a.member, a.storageVersion);
    if (a.via === 'evict') {
      await evict(c, a.member);
      c.event('Normal', 'MemberUpdating', `evicted pod ${a.member}: it is recreated from the current spec on its volume, as the same member (${a.detail})`);
    } else {
      // emptyDir: deleting the pod loses the data, so the member is replaced by a new one made from the spec.
      const r = await changeMembership({ kind: 'remove', id: a.id }, votingEndpoints(c), c.etcd, c.signal);
      await c.wrote(`etcd member remove ${a.member}`);
      c.event('Normal', 'MemberUpdating', `removed ${a.member} to replace it with a new member made from the current spec (its data is on emptyDir)${through(r)}`);
    }
    return { requeueAfter: 1000 };
  },
  async switchPeerURL(a, c) {
    const { name, namespace } = clusterKey(c);
    const r = await changeMembership({ kind: 'update', id: a.id, peerURL: peerURL(name, namespace, a.member, 'https') }, votingEndpoints(c), c.etcd, c.signal);
    await c.wrote(`etcd member update ${a.member}`);
    c.event('Normal', 'PeerURLSwitched', `changed ${a.member}'s peer URL to https${through(r)}; its pod is updated next to listen on it`);
    return { requeueAfter: 500 };
  },
  async moveLeader(a, c) {
    const endpoint = endpointOf(c, a.from);
    if (!endpoint) throw new StepError('LeaderUnreachable', `the leader ${a.from} has no running pod to send the leadership transfer to`);
    // It returns once the transfer is done: longer than an ordinary call.
    await c.etcd.get(endpoint).moveLeader(a.toId, { signal: c.signal, timeoutMs: 10_000 });
    await c.wrote(`etcd move-leader ${a.to}`);
    c.event('Normal', 'LeaderMoved', `moved leadership from ${a.from} to the updated member ${a.to}, so that ${a.from} is updated last, as a follower`);
    return { requeueAfter: 500 };
  },
  async createBackup(a, c) {
    const { name, namespace } = clusterKey(c);
    // No ownerReference: the backup must outlive the cluster it was taken of.
    try {
      await c.client.create(
        EtcdBackups,
        {
          apiVersion: API_VERSION,
          kind: BACKUP_KIND,
          metadata: { name: a.name, namespace, labels: { [PURPOSE_LABEL]: 'before-version-change', [LABELS.instance]: name } },
          spec: { clusterName: name, destination: a.destination },
        },
        { fieldManager: FIELD_MANAGER, signal: c.signal },
      );
      await c.wrote(`create EtcdBackup ${a.name}`);
      c.event('Normal', 'BackupBeforeUpgrade', `created EtcdBackup ${a.name}; no member is updated until it succeeds`);
    } catch (err) {
      if (!(err instanceof AlreadyExistsError)) throw err;
    }
    return { requeueAfter: 2000 };
  },
  async downgrade(a, c) {
    const client = c.etcd.get(requireEndpoint(c, a.via, "call etcd's downgrade API through"));
    const enabledTo = async (): Promise<string | undefined> => downgradeEnabledTo(await client.status({ signal: c.signal }));
    if (a.op === 'enable') {
      try {
        await client.downgrade('VALIDATE', a.target, { signal: c.signal });
        await client.downgrade('ENABLE', a.target, { signal: c.signal });
      } catch (err) {
        // An ENABLE whose answer was lost is refused when tried again (the cluster version moved): the status says.
        if ((await enabledTo().catch(() => undefined)) !== a.target) throw err;
      }
      await c.wrote(`etcd downgrade enable ${a.target}`);
      c.event('Normal', 'DowngradeEnabled', `etcd's downgrade to ${a.target} is enabled: its cluster version is now ${a.target}.0, and every member migrates its data to that storage version before any member goes back`);
    } else {
      await client.downgrade('CANCEL', '', { signal: c.signal });
      // 3.6 answers a failed cancel with success: only the status tells.
      if ((await enabledTo()) !== undefined) throw new StepError('DowngradeNotCancelled', `etcd still reports its downgrade to ${a.target} enabled after CANCEL`);
      await c.wrote(`etcd downgrade cancel`);
      c.event('Normal', 'DowngradeCancelled', `etcd's downgrade to ${a.target} was cancelled: spec.version no longer goes there`);
    }
    return { requeueAfter: 1000 };
  },
  haltRollout(a, c) {
    // Status records the halt (written before this step); what remains is to say it.
    c.event('Warning', 'UpgradeFailed', `rolling update halted at ${a.member} (${a.reason}): ${a.message}`);
    return Promise.resolve({ requeueAfter: 30_000 });
  },
};

/** A downgrade's member goes back only if its own data says it was migrated (read from it at the last moment). */
async function checkStorageVersion(c: ActContext, member: string, expected: string): Promise<void> {
  const endpoint = endpointOf(c, member);
  const storage = endpoint ? (await c.etcd.get(endpoint).version({ signal: c.signal })).storage : undefined;
  if (storage !== expected) throw new StepError('StorageNotMigrated', `${member}'s data has storage version ${storage ?? 'unknown'}, not ${expected}: an older etcd would not read it, so it does not go back yet`);
}
