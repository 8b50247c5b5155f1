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
import { madeWithTLS } from './resources.ts';
import { LABELS } from '../names.ts';
import type { EtcdCluster } from './spec.ts';
import { tlsOffIssue, withEffectiveTLS, type TLSFacts } from '../tls/defaults.ts';

export type { ReconcilerDeps, StepMetrics } from './deps.ts';

/** `memory` is given by tests that look at what the reconciler keeps between reconciles; one of its own otherwise. */
export function etcdClusterReconciler(deps: ReconcilerDeps, memory = new ReconcilerMemory()): Reconciler {
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
    const tls = tlsFacts(deps, cluster);
    const errors = validateSpec(cluster.spec ?? {}, undefined).filter((e) => !e.warning);
    const tlsOff = tlsOffIssue(cluster.spec?.tls, tls);
    if (errors.length > 0 || tlsOff) {
      const invalid = [...errors.map((e) => e.message), ...(tlsOff ? [tlsOff] : [])].join('; ');
      await reportInvalid(deps, cluster, previous, now, invalid, signal);
      log.warn({ invalid }, 'invalid spec: nothing changed');
      return {};
    }
    // TLS by default for a cluster that never ran, what it runs for one that did (tls/defaults.ts).
    const spec = withEffectiveTLS(applyDefaults(cluster.spec ?? {}), tls);
    if (!spec.paused) await applyClusterObjects(deps, cluster, spec, signal);

    const seen = await observe({ deps, memory, cluster, spec, previous, now, signal });
    const action: Action = spec.paused ? { type: 'wait', reason: 'Paused', detail: 'spec.paused is true', requeueAfterMs: STEADY_RESYNC_MS } : plan(seen.observed);
    const failure = memory.takeFailure(key);
    const step = nextStep(previous?.step, action, failure, now);
    await report({ deps, memory, cluster, spec, previous, now, signal, log, event, seen, action, step, failure, stepDeadlineMs });
    if (spec.paused) return { requeueAfter: STEADY_RESYNC_MS };
    return take({ deps, memory, cluster, spec, seen, action, step, failure, now, signal, log, event });
  };
}

/** What the cluster runs, for its TLS default: its status and its member pods (as the pod cache has them). */
function tlsFacts(deps: ReconcilerDeps, cluster: EtcdCluster): TLSFacts {
  const name = cluster.metadata.name;
  const pods = deps.pods.store.byIndex('namespace', cluster.metadata.namespace ?? '').filter((p) => p.metadata.labels?.[LABELS.instance] === name && p.metadata.labels?.[LABELS.managedBy] === 'quorum');
  return { status: cluster.status, podsExist: pods.length > 0, podsWithTLS: pods.some(madeWithTLS) };
}
