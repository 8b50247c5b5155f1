// The Redis reconciler: observe (caches, the password, the instances and Sentinels: observe.ts), decide the one
// next step (plan/), report it (status first, so that a crash right after the step still left a record), take it
// (act.ts). A refused step is retried with a voice: the Progressing condition carries the refusal's words, a
// Warning event comes after 30 s and another past the bound (kit StepVoice), and the log warns.
import { nextStepRecord, retryDelayMs, StepVoice, DEFAULT_STEP_DEADLINE_MS, writeStatus, type StepRefusal } from '@quorum/kit';
import { ApiError, setCondition, type Reconciler, type Result } from '@quorum/runtime';
import { applyDefaults, validateSpec, type DefaultedSpec } from '../api/defaults.ts';
import type { RedisStatus, TlsStatus } from '../api/redis.ts';
import type { TLSObservation } from '../tls/certificates.ts';
import { plan, STEADY_RESYNC_MS } from '../plan/plan.ts';
import { stepName, type Action } from '../plan/types.ts';
import { Redises, type RedisObject } from '../resources.ts';
import { act } from './act.ts';
import { FIELD_MANAGER, type ReconcilerDeps } from './deps.ts';
import { observe } from './observe.ts';
import { reconcileNetworkPolicy } from './network-policy.ts';
import { reconcileDisruptionBudgets } from './disruption-budgets.ts';
import { LABELS } from '../names.ts';
import { buildStatus } from './status.ts';

export type { ReconcilerDeps } from './deps.ts';

/** How soon a step that was taken is looked at again (its own events usually come first). */
const AFTER_STEP_MS = 250;

function refusalOf(step: string, err: unknown): StepRefusal {
  const reason = err instanceof ApiError ? (err.status?.reason ?? `HTTP${err.code}`) : 'Refused';
  return { step, reason, message: err instanceof Error ? err.message : String(err) };
}

async function reportInvalid(deps: ReconcilerDeps, redis: RedisObject, errors: string[], now: Date, signal: AbortSignal): Promise<void> {
  const previous = redis.status;
  const message = errors.join('; ');
  const generation = redis.metadata.generation;
  const conditions = setCondition(previous?.conditions, { type: 'Degraded', status: 'True', reason: 'InvalidSpec', message, ...(generation !== undefined ? { observedGeneration: generation } : {}) }, now);
  const next: RedisStatus = { ...previous, conditions };
  if (previous?.conditions?.find((c) => c.type === 'Degraded')?.message !== message) deps.events.record(redis, { type: 'Warning', reason: 'InvalidSpec', action: 'Validate', note: message });
  await writeStatus(deps.client, Redises, { namespace: redis.metadata.namespace ?? '', name: redis.metadata.name ?? '' }, previous, next, { fieldManager: FIELD_MANAGER, signal });
}

function eventReason(action: Action): string {
  if (action.type === 'write-config' && action.reason === 'PrimaryChanged') return 'PrimaryChanged';
  if (action.type === 'failover') return 'PlannedFailover';
  if (action.type === 'rotate-ca') return 'CARotation';
  return 'Step';
}

interface KeepProblem {
  reason: 'NetworkPolicyConflict' | 'NetworkPolicyRefused' | 'DisruptionBudgetConflict' | 'DisruptionBudgetRefused';
  message: string;
}

/**
 * The objects kept beside the planner's step, as the spec says: the NetworkPolicy (reconcile/network-policy.ts)
 * and the PodDisruptionBudgets (reconcile/disruption-budgets.ts); what stands in the way, if anything.
 */
async function keepObjects(deps: ReconcilerDeps, redis: RedisObject, spec: DefaultedSpec, signal: AbortSignal, log: { info(o: object, m: string): void }): Promise<KeepProblem[]> {
  const ref = { name: redis.metadata.name ?? '', namespace: redis.metadata.namespace ?? '', uid: redis.metadata.uid ?? '' };
  const kinds = [
    { kind: 'NetworkPolicy', prefix: 'NetworkPolicy', keep: async () => [await reconcileNetworkPolicy(deps, ref, spec, signal)] },
    { kind: 'PodDisruptionBudgets', prefix: 'DisruptionBudget', keep: () => reconcileDisruptionBudgets(deps, ref, spec, signal) },
  ] as const;
  const problems: KeepProblem[] = [];
  for (const { kind, prefix, keep } of kinds) {
    try {
      for (const outcome of await keep()) {
        if (outcome !== undefined && 'conflict' in outcome) problems.push({ reason: `${prefix}Conflict`, message: outcome.conflict });
        else if (outcome !== undefined) {
          deps.events.record(redis, { type: 'Normal', reason: kind === 'NetworkPolicy' ? 'NetworkPolicy' : 'DisruptionBudget', action: kind, note: outcome.done });
          log.info({}, outcome.done);
          await deps.afterWrite?.(kind === 'NetworkPolicy' ? 'network-policy' : 'disruption-budget');
        }
      }
    } catch (err) {
      if (signal.aborted) throw err;
      problems.push({ reason: `${prefix}Refused`, message: `could not keep the ${kind} of ${ref.name} (retried at every reconcile): ${err instanceof Error ? err.message : String(err)}` });
    }
  }
  return problems;
}

function hasPods(deps: ReconcilerDeps, namespace: string, name: string): boolean {
  return deps.pods.store.byIndex('namespace', namespace).some((p) => p.metadata.labels?.[LABELS.instance] === name);
}

/** status.tls: what is served, and a CA rotation under way (a due one shows once its TrustNew is written). */
function tlsStatus(tls: TLSObservation, overlapMs: number): TlsStatus {
  const r = tls.caRotation;
  const since = r?.since !== undefined ? { since: r.since } : {};
  const reissueAfter = r?.phase === 'TrustNew' && r.since !== undefined ? { reissueAfter: new Date(Date.parse(r.since) + overlapMs).toISOString() } : {};
  return {
    mode: tls.mode,
    secretName: tls.secretName,
    ...(tls.notAfter !== undefined ? { notAfter: tls.notAfter } : {}),
    ...(r !== undefined && r.phase !== 'Start' ? { caRotation: { phase: r.phase, ...since, ...reissueAfter } } : {}),
  };
}

export function redisReconciler(deps: ReconcilerDeps): Reconciler {
  const voice = new StepVoice({ retryingReason: 'StepRetrying', stalledReason: 'StepStalled' });
  const refusals = new Map<string, StepRefusal>();
  // The halt a Redis last got a Warning for: a reconcile that reads the status before its own halt reached the
  // cache plans the same halt again, which is written again but not announced twice.
  const announcedHalts = new Map<string, string>();
  // The NetworkPolicy and budget problems each Redis last got Warnings for (a conflict, a refused write): said
  // once, not every 2 s.
  const announcedKeepProblems = new Map<string, string>();
  const stepDeadlineMs = deps.stepDeadlineMs ?? DEFAULT_STEP_DEADLINE_MS;

  return async ({ namespace, name }, { signal, log }): Promise<Result> => {
    const key = `${namespace}/${name}`;
    const redis = deps.redises.store.get(key);
    if (!redis || redis.metadata.deletionTimestamp) {
      // Pods, Services, the ConfigMap and claims with reclaimPolicy Delete go with it (owner references).
      voice.forget(key);
      refusals.delete(key);
      announcedHalts.delete(key);
      announcedKeepProblems.delete(key);
      return {};
    }
    const now = deps.now?.() ?? new Date();
    const spec = applyDefaults(redis.spec);
    // Invalid specs (an older CRD, or one applied without validation) are reported and change nothing.
    const errors = validateSpec(spec);
    if (errors.length > 0) {
      await reportInvalid(deps, redis, errors, now, signal);
      log.warn({ invalid: errors }, 'invalid spec: nothing changed');
      return {};
    }
    const problems = await keepObjects(deps, redis, spec, signal, log);
    const said = problems.map((p) => p.message).join('; ');
    if (problems.length === 0) announcedKeepProblems.delete(key);
    else if (announcedKeepProblems.get(key) !== said) {
      announcedKeepProblems.set(key, said);
      for (const problem of problems) {
        deps.events.record(redis, { type: 'Warning', reason: problem.reason, action: problem.reason.startsWith('NetworkPolicy') ? 'NetworkPolicy' : 'PodDisruptionBudgets', note: problem.message });
        log.warn({ reason: problem.reason }, problem.message);
      }
    }
    // A new Redis gets no pod before its policy: none is ever open. A running one keeps being managed meanwhile.
    if (problems.some((p) => p.reason === 'NetworkPolicyRefused') && !hasPods(deps, namespace, name)) return { requeueAfter: 10_000 };
    const seen = await observe(deps, redis, spec, now);
    deps.observed?.(seen.observed);
    const action: Action = plan(seen.observed);
    const refusal = refusals.get(key);
    refusals.delete(key);
    const name_ = stepName(action);
    const step = nextStepRecord(redis.status?.step, name_, refusal, now);
    if (step === undefined) voice.forget(key);
    const status = buildStatus({ observed: seen.observed, action, step, generation: redis.metadata.generation, previous: redis.status, now, stepDeadlineMs });
    // Recorded before the first pod is made from it (status is written before the step is taken).
    if (seen.bootstrap !== undefined) status.bootstrap = seen.bootstrap;
    if (seen.tls !== undefined) status.tls = tlsStatus(seen.tls, deps.caRotationOverlapMs ?? 0);
    if (step !== undefined && name_ !== undefined) {
      const message = status.conditions?.find((c) => c.type === 'Progressing')?.message ?? name_;
      const said = voice.repeated(
        { key, step: name_, ageMs: Math.max(0, now.getTime() - Date.parse(step.startedAt)), boundMs: stepDeadlineMs, now, message, recorded: step },
        { warning: (reason, note) => deps.events.record(redis, { type: 'Warning', reason, action: reason, note }), warn: (fields, msg) => log.warn(fields, msg) },
      );
      status.step = { ...step, ...said };
    }
    await writeStatus(deps.client, Redises, { namespace, name }, redis.status, status, { fieldManager: FIELD_MANAGER, signal });

    try {
      const done = await act(deps, seen, action, signal);
      if (done !== undefined) {
        if (action.type === 'halt-rollout') {
          if (announcedHalts.get(key) !== done) {
            deps.events.record(redis, { type: 'Warning', reason: 'RolloutHalted', action: action.type, note: done });
            log.warn({ step: name_, instance: action.instance, reason: action.reason }, done);
          }
          announcedHalts.set(key, done);
        } else {
          deps.events.record(redis, { type: 'Normal', reason: eventReason(action), action: action.type, note: done });
          log.info({ step: name_ }, done);
        }
        await deps.afterWrite?.(action.type);
      }
    } catch (err) {
      if (signal.aborted) throw err;
      refusals.set(key, refusalOf(name_ ?? action.type, err));
      log.warn({ step: name_, err: (err as Error).message }, 'step refused; retrying');
      return { requeueAfter: retryDelayMs(step, now, 1000) };
    }
    if (action.type === 'none') return { requeueAfter: STEADY_RESYNC_MS };
    if (action.type === 'wait') return { requeueAfter: retryDelayMs(step, now, action.requeueAfterMs) };
    return { requeueAfter: AFTER_STEP_MS };
  };
}
