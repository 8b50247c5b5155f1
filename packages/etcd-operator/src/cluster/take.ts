// Taking the step the planner chose: the handlers' context (act/) from what was observed, and a refusal kept
// for the next reconcile, whose report gives it its voice; the step is retried after a delay that grows with it.
import { ApiError, type Logger, type Result } from '@quorum/runtime';
import { DEFAULT_CLUSTER_DOMAIN } from '../tls/issue.ts';
import { act, describeFailure } from './act/index.ts';
import { STEADY_RESYNC_MS, type ReconcilerDeps } from './deps.ts';
import type { ReconcilerMemory } from './memory.ts';
import { pdbName } from '../names.ts';
import type { Observation } from './observe.ts';
import type { Action } from './plan/types.ts';
import { retryDelayMs } from '@quorum/kit';
import type { StepFailure, StepRecord } from './progress.ts';
import type { Say } from './report.ts';
import { madeWithTLS } from './resources.ts';
import type { DefaultedSpec, EtcdCluster } from './spec.ts';
import { actionMessage } from './status.ts';

export interface TakeInput {
  deps: ReconcilerDeps;
  memory: ReconcilerMemory;
  cluster: EtcdCluster;
  spec: DefaultedSpec;
  seen: Observation;
  action: Action;
  step: StepRecord | undefined;
  failure: StepFailure | undefined;
  now: Date;
  signal: AbortSignal;
  log: Logger;
  event: Say;
}

/** The step taken; when it is refused, the refusal is kept for the next reconcile's report, and retried after a delay. */
export async function take(i: TakeInput): Promise<Result> {
  const { deps, cluster, spec, seen, action, step, now, signal, event } = i;
  const namespace = cluster.metadata.namespace!;
  const name = cluster.metadata.name!;
  const { pods, tls } = seen;
  try {
    const result = await act(action, {
      client: deps.client, etcd: deps.etcd, cluster, spec, pods, pvcs: seen.pvcs, pdb: deps.pdbs.store.get(`${namespace}/${pdbName(name)}`), view: seen.view, peerWaitImage: deps.peerWaitImage, agentImage: deps.agentImage, signal, event,
      wrote: async (what) => { await deps.afterWrite?.(what); },
      ...(tls ? { tls: { ...(tls.credentials ? { credentials: tls.credentials } : {}), clusterDomain: deps.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN, mayIssueCA: seen.memberSecrets.length === 0 && !pods.some(madeWithTLS), now, caBundles: tls.caBundles } } : {}),
      peerSchemes: seen.peerSchemes,
      tlsStage: seen.stageOf,
      maintained: (r) => {
        i.memory.maintainedNow(`${namespace}/${name}`, r);
        if (r.kind !== 'defragmented') return;
        deps.metrics?.defragmented?.(namespace, name, r.member, r.reason, r.durationMs / 1000);
        i.log.info({ member: r.member, reason: r.reason, durationMs: r.durationMs, dbSizeBefore: r.dbSizeBefore, dbSizeAfter: r.dbSizeAfter }, `defragmented ${r.member}`);
      },
    });
    return action.type === 'steady' ? { requeueAfter: STEADY_RESYNC_MS } : { requeueAfter: retryDelayMs(step, now, result.requeueAfter ?? 1000) };
  } catch (err) {
    if (signal.aborted) throw err;
    const f = describeFailure(step?.name ?? action.type, err);
    i.memory.failed(`${namespace}/${name}`, f);
    deps.metrics?.stepRetried(action.type, f.reason);
    // Kubernetes refusals (admission, quota) are news at once; etcd's are reported when they persist.
    if (err instanceof ApiError && i.failure?.message !== f.message) event('Warning', 'StepFailed', `${actionMessage(action)}: ${f.message}`);
    return { requeueAfter: retryDelayMs({ ...(step ?? { name: action.type, startedAt: now.toISOString() }), lastError: f.message }, now, 1000) };
  }
}
