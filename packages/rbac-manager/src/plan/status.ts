// The status a definition reports: per binding, what is in place and what is not and why, its window, and
// the conditions. Pure: built from the plan and from what the writes of this reconcile met.
import { rfc3339, setCondition, type Condition } from '@quorum/runtime';
import type { BindingStatus, RBACDefinitionStatus, Skipped } from '../api/rbacdefinition.ts';
import type { DesiredState } from './desired.ts';
import { nextTransition } from './window.ts';

/** Conditions' reasons, with what each means (docs/rbac.md lists them). */
export const REASONS = {
  Ready: {
    InPlace: 'Everything the definition asks for within its windows is in place.',
    Waiting: 'Something is waiting for a namespace or role that does not exist yet; the rest is in place.',
    Skipped: 'Something could not be made (a name taken by an object the manager did not make, or a write refused); the rest is in place.',
    InvalidDefinition: 'The definition breaks a rule of the API (the message names it): nothing new is granted, nothing is removed.',
    WebhookMissing: 'The escalation webhook is not in place (the message says how): the manager creates and updates nothing, and still revokes, until it is.',
  },
  Degraded: {
    AsAsked: 'Nothing is refused or taken.',
    Skipped: 'A name is taken by an object the manager did not make, or the API server refused a write (status.bindings[].skipped says which and why).',
    InvalidDefinition: 'As for Ready.',
    WebhookMissing: 'As for Ready.',
  },
} as const;

/**
 * `skippedByWrites`: what this reconcile's writes could not do (NameTaken, Refused, Withheld), by binding.
 * `webhookProblem`: why the escalation webhook is not in place, when it is not (both conditions say so).
 */
export function buildStatus(
  desired: DesiredState,
  skippedByWrites: ReadonlyMap<string, readonly Skipped[]>,
  previous: RBACDefinitionStatus | undefined,
  generation: number | undefined,
  now: Date,
  webhookProblem?: string,
): RBACDefinitionStatus {
  const failedKeys = new Set([...skippedByWrites.values()].flat().map((s) => `${s.kind}/${s.namespace ?? ''}/${s.name}`));
  const bindings = desired.bindings.map((plan): BindingStatus => {
    const mine = desired.objects.filter((d) => d.binding === plan.name && !failedKeys.has(`${d.kind}/${d.namespace ?? ''}/${d.name}`));
    const skipped = [...plan.skipped, ...(skippedByWrites.get(plan.name) ?? [])];
    const missingIn = new Set(skipped.filter((s) => s.kind === 'RoleBinding').map((s) => s.namespace));
    const namespaces = [...new Set(mine.filter((d) => d.kind === 'RoleBinding').map((d) => d.namespace!))].filter((n) => !missingIn.has(n)).sort();
    const crbs = mine.filter((d) => d.kind === 'ClusterRoleBinding').map((d) => d.name);
    const { window } = plan;
    return {
      name: plan.name,
      state: window.state,
      ...(crbs.length ? { clusterRoleBindings: crbs } : {}),
      ...(namespaces.length ? { namespaces } : {}),
      ...(skipped.length ? { skipped } : {}),
      ...(window.startsAt ? { startsAt: rfc3339(window.startsAt) } : {}),
      ...(window.endsAt ? { expiresAt: rfc3339(window.endsAt) } : {}),
    };
  });
  const next = nextTransition(desired.bindings.map((b) => b.window));
  return {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    conditions: webhookProblem === undefined ? conditions(bindings, previous?.conditions, generation, now) : webhookConditions(webhookProblem, previous?.conditions, generation, now),
    ...(bindings.length ? { bindings } : {}),
    ...(next ? { nextTransition: rfc3339(next) } : {}),
  };
}

function conditions(bindings: readonly BindingStatus[], previous: readonly Condition[] | undefined, generation: number | undefined, now: Date): Condition[] {
  const skipped = bindings.flatMap((b) => (b.skipped ?? []).map((s) => ({ ...s, binding: b.name })));
  const wrong = skipped.filter((s) => s.reason === 'NameTaken' || s.reason === 'Refused');
  const summary = (list: typeof skipped): string =>
    list
      .slice(0, 3)
      .map((s) => `${s.binding}: ${s.kind} ${s.namespace ? `${s.namespace}/` : ''}${s.name}: ${s.message}`)
      .join('; ') + (list.length > 3 ? `; and ${list.length - 3} more` : '');
  const observedGeneration = generation ?? 0;
  const readyReason = wrong.length ? 'Skipped' : skipped.length ? 'Waiting' : 'InPlace';
  let list = setCondition(
    previous,
    { type: 'Ready', status: skipped.length ? 'False' : 'True', reason: readyReason, message: skipped.length ? summary(skipped) : REASONS.Ready.InPlace, observedGeneration },
    now,
  );
  list = setCondition(
    list,
    { type: 'Degraded', status: wrong.length ? 'True' : 'False', reason: wrong.length ? 'Skipped' : 'AsAsked', message: wrong.length ? summary(wrong) : REASONS.Degraded.AsAsked, observedGeneration },
    now,
  );
  return list;
}

function webhookConditions(problem: string, previous: readonly Condition[] | undefined, generation: number | undefined, now: Date): Condition[] {
  const message = `nothing is granted or set back until the escalation webhook is in place: ${problem}`;
  const observedGeneration = generation ?? 0;
  const list = setCondition(previous, { type: 'Ready', status: 'False', reason: 'WebhookMissing', message, observedGeneration }, now);
  return setCondition(list, { type: 'Degraded', status: 'True', reason: 'WebhookMissing', message, observedGeneration }, now);
}
