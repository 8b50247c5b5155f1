// Steps of a recovery from quorum loss: the status already records it (written before the step), so a crash
// from here resumes it.
import { Pods } from '@quorum/runtime';
import { clusterKey, ignoreNotFound, type Handlers } from './context.ts';
import { clearCluster } from './kube.ts';

export const recoverySteps: Handlers<'startRecovery' | 'clearForRestore'> = {
  async startRecovery(a, c) {
    c.event('Warning', 'RecoveryStarted', `${a.detail}. Writes after revision ${a.revision}${a.dataTime ? ` (${a.dataTime})` : ''} are lost`);
    if (a.method === 'Backup') await clearCluster(c);
    else {
      await c.client.delete(Pods, { namespace: clusterKey(c).namespace, name: a.from }, { signal: c.signal }).catch(ignoreNotFound);
      await c.wrote(`delete pod ${a.from}`);
    }
    return { requeueAfter: 1000 };
  },
  async clearForRestore(_a, c) {
    await clearCluster(c);
    return { requeueAfter: 2000 };
  },
};
