// Taking the one step the planner chose. Each is idempotent and recorded where the next reconcile reads it
// (etcd's membership or Kubernetes), so the operator may die between any two calls. A step that is refused
// throws; the reconciler reports the refusal (progress.ts) and retries.
//
// One handler per step kind, in a table the compiler checks complete: a new kind of Action does not build until
// it has its handler. The handlers live by concern: members.ts, recovery.ts, rollout.ts, tls.ts, maintenance.ts.
import { ApiError, type Result } from '@quorum/runtime';
import { EtcdError, EtcdUnavailableError, LearnerNotReadyError } from '../../etcd/errors.ts';
import { MembershipRefusedError } from '../membership.ts';
import type { Action } from '../plan/types.ts';
import type { StepFailure } from '../progress.ts';
import { TLSNotReadyError } from '../../tls/cluster-secrets.ts';
import { StepError, type ActContext, type Handler, type Handlers } from './context.ts';
import { maintenanceSteps } from './maintenance.ts';
import { memberSteps } from './members.ts';
import { recoverySteps } from './recovery.ts';
import { rolloutSteps } from './rollout.ts';
import { tlsSteps } from './tls.ts';

export { StepError, type ActContext, type MaintenanceResult } from './context.ts';

const steps: Handlers = {
  ...memberSteps,
  ...recoverySteps,
  ...rolloutSteps,
  ...tlsSteps,
  ...maintenanceSteps,
  wait: (a) => Promise.resolve({ requeueAfter: a.requeueAfterMs }),
  steady: () => Promise.resolve({}),
};

export async function act(a: Action, c: ActContext): Promise<Result> {
  // The table holds, for each kind, the handler of exactly that kind; the compiler cannot follow `a.type` into it.
  const handler = steps[a.type] as Handler<Action['type']>;
  return handler(a, c);
}

/** A refused step as the report shows it: a reason for the metric, and the refusal in its own words. */
export function describeFailure(step: string, err: unknown): StepFailure {
  if (err instanceof MembershipRefusedError) return { step, reason: err.reason, message: err.detail, refusedEverywhere: err.everywhere };
  if (err instanceof LearnerNotReadyError) return { step, reason: 'LearnerNotCaughtUp', message: `etcd refused: ${err.etcdMessage}`, refusedEverywhere: false };
  if (err instanceof EtcdError) return { step, reason: 'EtcdRefused', message: `etcd refused: ${err.etcdMessage}`, refusedEverywhere: false };
  if (err instanceof EtcdUnavailableError) return { step, reason: 'EtcdUnavailable', message: err.message, refusedEverywhere: false };
  if (err instanceof ApiError) return { step, reason: err.reason || `HTTP${err.code}`, message: `Kubernetes refused: ${err.status.message ?? err.message}`, refusedEverywhere: false };
  if (err instanceof StepError || err instanceof TLSNotReadyError) return { step, reason: err.reason, message: err.message, refusedEverywhere: false };
  return { step, reason: 'Error', message: err instanceof Error ? err.message : String(err), refusedEverywhere: false };
}
