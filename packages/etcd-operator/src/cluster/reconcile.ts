// The EtcdCluster reconciler: observe (caches + etcd: observe.ts), decide the one next step (plan/), report it
// (status first, so a crash right after the step still left a record: report.ts), take it (act/). A step that
// is refused is retried with a voice (progress.ts): status, events, a metric and a warn log say what and why.
import type { Reconciler, Result } from '@quorum/runtime';
import { applyClusterObjects } from './cluster-objects.ts';
import { STEADY_RESYNC_MS, type ReconcilerDeps } from './deps.ts';
import { ReconcilerMemory } from './memory.ts';
import { observe } from './observe.ts';
import { plan } from './plan/index.ts';
import type { Action } from './plan/types.ts';
import { DEFAULT_STEP_DEADLINE_MS } from '@quorum/kit';
import { nextStep } from './progress.ts';
import { report, reportInvalid, type Say } from './report.ts';
import { applyDefaults, validateSpec } from './spec.ts';
import { take } from './take.ts';

export type { ReconcilerDeps, StepMetrics } from './deps.ts';

export function etcdClusterReconciler(deps: ReconcilerDeps): Reconciler {
  const memory = new ReconcilerMemory();
  const stepDeadlineMs = deps.stepDeadlineMs ?? DEFAULT_STEP_DEADLINE_MS;

  return async ({ namespace, name }, { signal, log }): Promise<Result> => {
    const key = `${namespace}/${name}`;
    const cluster = deps.clusters.store.get(key);
    if (!cluster || cluster.metadata.deletionTimestamp) {
      // A cluster that is gone leaves nothing behind in the reconciler's memory.
      memory.forget(key);
      return {};
    }
    const previous = cluster.status;
    const now = deps.now?.() ?? new Date();
    const event: Say = (type, reason, note) => deps.events.record(cluster, { type, reason, action: reason, note });

    // Invalid specs (possible when the webhooks are off) are reported and change nothing.
    const errors = validateSpec(cluster.spec ?? {}, undefined).filter((e) => !e.warning);
    if (errors.length > 0) {
      const invalid = errors.map((e) => e.message).join('; ');
      await reportInvalid(deps, cluster, previous, now, invalid, signal);
      log.warn({ invalid }, 'invalid spec: nothing changed');
      return {};
    }
    const spec = applyDefaults(cluster.spec ?? {});
    if (!spec.paused) await applyClusterObjects(deps, cluster, spec.replicas, signal);

    const seen = await observe({ deps, memory, cluster, spec, previous, now, signal });
    const action: Action = spec.paused ? { type: 'wait', reason: 'Paused', detail: 'spec.paused is true', requeueAfterMs: STEADY_RESYNC_MS } : plan(seen.observed);
    const failure = memory.takeFailure(key);
    const step = nextStep(previous?.step, action, failure, now);
    await report({ deps, memory, cluster, spec, previous, now, signal, log, event, seen, action, step, failure, stepDeadlineMs });
    if (spec.paused) return { requeueAfter: STEADY_RESYNC_MS };
    return take({ deps, memory, cluster, spec, seen, action, step, failure, now, signal, log, event });
  };
}
