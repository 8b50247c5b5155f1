// What the step handlers do to Kubernetes objects more than once: a member's claim, certificates and pod, an
// eviction the PodDisruptionBudget may refuse, and clearing every member for a re-creation.
import { AlreadyExistsError, ApiError, NotFoundError, PersistentVolumeClaims, Pods } from '@quorum/runtime';
import { staleDisruptions } from '../disruption.ts';
import { FIELD_MANAGER, LABELS, memberHost, peerURL, pvcName } from '../../names.ts';
import { memberPod, memberPVC, type RestoreSource } from '../resources.ts';
import { operatorManaged, peerScheme, tlsSides } from '../../tls/members.ts';
import { writeTLSSecrets } from '../../tls/cluster-secrets.ts';
import { clusterKey, ignoreNotFound, StepError, type ActContext } from './context.ts';

async function ensurePVC(c: ActContext, member: string): Promise<void> {
  if (c.spec.storage.emptyDir || c.pvcs.some((p) => p.metadata.name === pvcName(member))) return;
  try {
    await c.client.create(PersistentVolumeClaims, memberPVC(c.cluster, c.spec, member), { fieldManager: FIELD_MANAGER, signal: c.signal });
    await c.wrote(`create pvc ${member}`);
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
  }
}

/** Writes the TLS Secrets `members` need now (issued or renewed); an event names them. */
export async function ensureTLS(c: ActContext, members: string[]): Promise<{ name: string; reason: string }[]> {
  if (!c.tls || !operatorManaged(tlsSides(c.spec))) return [];
  const written = await writeTLSSecrets({ client: c.client, cluster: c.cluster, clusterDomain: c.tls.clusterDomain, now: c.tls.now, signal: c.signal, mayIssueCA: c.tls.mayIssueCA }, members);
  if (written.length > 0) {
    await c.wrote(`write secrets ${written.map((w) => w.name).join(' ')}`);
    c.event('Normal', 'CertificatesIssued', `issued ${written.map((w) => `${w.name} (${w.reason})`).join(', ')}`);
  }
  return written;
}

export interface NewPod {
  member: string;
  state: 'new' | 'existing';
  initialMembers: string[];
  restore?: RestoreSource;
  forceNewCluster?: boolean;
}

/** Creates a member's pod; false when it already existed (the cache had not caught up): no event then. */
export async function createPod(c: ActContext, { member, state, initialMembers, restore, forceNewCluster = false }: NewPod): Promise<boolean> {
  const { name, namespace } = clusterKey(c);
  await ensurePVC(c, member);
  // The member's certificates before its pod: etcd would not start without the files its flags name.
  await ensureTLS(c, [member]);
  // etcd checks a joining member's --initial-cluster against its member list, URL by URL, scheme included.
  const initialCluster = initialMembers.map((m) => `${m}=${peerURL(name, namespace, m, c.peerSchemes?.get(m) ?? peerScheme(c.spec))}`);
  // Names etcd dials at start: every initial member whose pod exists (or is being created with it).
  // A member without a pod has no DNS record, and waiting for it could hold back a quorum's return.
  const withPods = new Set([member, ...c.pods.map((p) => p.metadata.labels?.[LABELS.member] ?? ''), ...(state === 'new' ? initialMembers : [])]);
  const waitForNames = initialMembers.filter((m) => withPods.has(m)).map((m) => memberHost(name, namespace, m));
  if (restore && !(c.agentImage && c.peerWaitImage)) throw new StepError('RestoreNotConfigured', 'restoring needs the agent and member init images (AGENT_IMAGE, PEER_WAIT_IMAGE), and the operator has none');
  const pod = memberPod(c.cluster, c.spec, {
    member,
    initialClusterState: state,
    initialCluster,
    waitForNames,
    peerWaitImage: c.peerWaitImage,
    ...(forceNewCluster ? { forceNewCluster } : {}),
    ...(restore && c.agentImage ? { restore: { source: restore, agentImage: c.agentImage } } : {}),
    ...(c.tls?.caBundles ? { caBundles: c.tls.caBundles } : {}),
    ...(c.tlsStage ? { tlsStage: c.tlsStage(member) } : {}),
  });
  try {
    await c.client.create(Pods, pod, { fieldManager: FIELD_MANAGER, signal: c.signal });
    await c.wrote(`create pod ${member}`);
    return true;
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
    const existing = await c.client.find(Pods, { namespace, name: member });
    if (existing && existing.metadata.labels?.[LABELS.instance] === name && existing.metadata.labels?.[LABELS.member] === member) return false;
    throw new StepError('PodNameTaken', `a pod named ${member} exists that this cluster does not manage; delete or rename it`);
  }
}

/** The eviction API, not a delete: it refuses when the PodDisruptionBudget does not allow it (a drain under way shares it). */
export async function evict(c: ActContext, member: string): Promise<void> {
  const { namespace } = clusterKey(c);
  try {
    await c.client.request('POST', `/api/v1/namespaces/${namespace}/pods/${member}/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: member, namespace } }, { signal: c.signal });
  } catch (err) {
    if (err instanceof NotFoundError) return;
    // 429: the budget allows no disruption now (another member is down or being drained): a wait, retried.
    if (err instanceof ApiError && err.code === 429) {
      const why = staleDisruptions(c.pdb, c.pods);
      throw new StepError('DisruptionBudget', `the PodDisruptionBudget allows no eviction of ${member} now: ${err.status.message ?? err.message}${why ? `; ${why}` : ''}`);
    }
    throw err;
  }
  await c.wrote(`evict pod ${member}`);
}

/** Every member pod and claim of the cluster, for a re-creation from a backup. */
export async function clearCluster(c: ActContext): Promise<void> {
  const { namespace } = clusterKey(c);
  for (const p of c.pods.filter((x) => !x.metadata.deletionTimestamp)) {
    await c.client.delete(Pods, { namespace, name: p.metadata.name! }, { signal: c.signal }).catch(ignoreNotFound);
    await c.wrote(`delete pod ${p.metadata.name}`);
  }
  for (const claim of c.pvcs.filter((x) => !x.metadata.deletionTimestamp)) {
    await c.client.delete(PersistentVolumeClaims, { namespace, name: claim.metadata.name! }, { signal: c.signal }).catch(ignoreNotFound);
    await c.wrote(`delete pvc ${claim.metadata.name}`);
  }
}
