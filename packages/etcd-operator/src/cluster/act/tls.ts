// Steps on the cluster's operator-managed certificates: issue, delete a former member's, rotate a CA.
import { LABELS } from '../../names.ts';
import { deleteMemberSecret, rotateCA } from '../../tls/cluster-secrets.ts';
import type { Handlers } from './context.ts';
import { ensureTLS } from './kube.ts';

export const tlsSteps: Handlers<'issueTLSSecrets' | 'deleteTLSSecret' | 'rotateCA'> = {
  async issueTLSSecrets(_a, c) {
    // The cluster-wide Secrets and those of members that have pods; a new member's come with its pod.
    const members = c.pods.filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.labels?.[LABELS.member] ?? '').filter(Boolean);
    await ensureTLS(c, members);
    return { requeueAfter: 500 };
  },
  async deleteTLSSecret(a, c) {
    await deleteMemberSecret(c.client, c.cluster, a.member, c.signal);
    await c.wrote(`delete secret ${a.member}-tls`);
    return { requeueAfter: 500 };
  },
  async rotateCA(a, c) {
    const wrote = await rotateCA(c.client, c.cluster, a.ca, a.step, c.tls?.now ?? new Date(), c.signal);
    if (wrote) {
      await c.wrote(`rotate ${a.ca} CA ${a.step}`);
      c.event('Normal', 'CARotation', a.detail);
    }
    return { requeueAfter: 1000 };
  },
};
