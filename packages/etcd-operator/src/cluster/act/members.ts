// Steps on members: their pods and claims, and etcd's membership (add as a learner, promote, remove), each
// change through the voting members in turn.
import { PersistentVolumeClaims, Pods } from '@quorum/runtime';
import { changeMembership } from '../membership.ts';
import { LABELS, peerURL, pvcName } from '../../names.ts';
import { clusterKey, ignoreNotFound, type Handlers } from './context.ts';
import { endFinishedDowngrade, through, votingEndpoints } from './etcd.ts';
import { createPod, evict } from './kube.ts';

export const memberSteps: Handlers<'bootstrap' | 'createPod' | 'deletePod' | 'deletePVC' | 'addMember' | 'promoteMember' | 'removeMember' | 'restartMember'> = {
  async bootstrap(a, c) {
    for (const m of a.members) await createPod(c, { member: m, state: 'new', initialMembers: a.members, ...(a.restore ? { restore: a.restore } : {}) });
    c.event('Normal', 'ClusterBootstrapped', `started the initial members ${a.members.join(', ')}${a.restore ? `, restoring ${a.restore.key}` : ''}`);
    return { requeueAfter: 2000 };
  },
  async createPod(a, c) {
    if (await createPod(c, a)) {
      c.event('Normal', a.reason === 'MemberAdded' ? 'MemberPodCreated' : 'MemberPodRecreated', `created pod ${a.member} (${a.reason})`);
    }
    return { requeueAfter: 2000 };
  },
  async deletePod(a, c) {
    const pod = c.pods.find((p) => p.metadata.labels?.[LABELS.member] === a.member);
    await c.client.delete(Pods, { namespace: clusterKey(c).namespace, name: a.member }, { preconditions: { uid: pod?.metadata.uid }, signal: c.signal }).catch(ignoreNotFound);
    await c.wrote(`delete pod ${a.member}`);
    c.event(a.reason === 'PodFailed' ? 'Warning' : 'Normal', 'MemberPodDeleted', `deleted pod ${a.member} (${a.reason})`);
    return { requeueAfter: 1000 };
  },
  async deletePVC(a, c) {
    await c.client.delete(PersistentVolumeClaims, { namespace: clusterKey(c).namespace, name: pvcName(a.member) }, { signal: c.signal }).catch(ignoreNotFound);
    await c.wrote(`delete pvc ${a.member}`);
    c.event('Normal', 'MemberClaimDeleted', `deleted the claim of former member ${a.member} (reclaimPolicy Delete)`);
    return { requeueAfter: 1000 };
  },
  async addMember(a, c) {
    const { name, namespace } = clusterKey(c);
    if (a.endDowngradeTo) await endFinishedDowngrade(c, a.endDowngradeTo);
    const r = await changeMembership({ kind: 'add', peerURL: peerURL(name, namespace, a.member, a.peerScheme ?? 'http') }, votingEndpoints(c), c.etcd, c.signal);
    await c.wrote(`etcd member add ${a.member}`);
    c.event('Normal', 'MemberAdded', `added ${a.member} as a learner${through(r)}`);
    return { requeueAfter: 500 };
  },
  async promoteMember(a, c) {
    const r = await changeMembership({ kind: 'promote', id: a.id }, votingEndpoints(c), c.etcd, c.signal);
    await c.wrote(`etcd member promote ${a.member}`);
    c.event('Normal', 'MemberPromoted', `promoted ${a.member} to a voting member${through(r)}`);
    return { requeueAfter: 500 };
  },
  async removeMember(a, c) {
    const r = await changeMembership({ kind: 'remove', id: a.id }, votingEndpoints(c), c.etcd, c.signal);
    await c.wrote(`etcd member remove ${a.member}`);
    c.event(a.reason === 'ScaleDown' ? 'Normal' : 'Warning', 'MemberRemoved', `removed ${a.member} from the cluster (${a.reason})${through(r)}`);
    return { requeueAfter: 500 };
  },
  async restartMember(a, c) {
    await evict(c, a.member);
    c.event('Warning', 'MemberRestarted', `evicted pod ${a.member} so that its peers reconnect to it: ${a.detail}`);
    return { requeueAfter: 2000 };
  },
};
