// One RBACDefinition: observe (caches) → plan (pure) → act (writes, events, metrics) → report (status), then
// come back at the next start or end of a binding. A deleted definition needs nothing: its objects carry
// its owner reference, and the garbage collector removes them.
import { writeStatus } from '@quorum/kit';
import { setCondition, type Informer, type Reconciler } from '@quorum/runtime';
import type { RBACDefinition, RBACDefinitionStatus } from '../api/rbacdefinition.ts';
import { validateDefinition } from '../api/validate.ts';
import { planActions } from '../plan/actions.ts';
import { desiredState } from '../plan/desired.ts';
import { buildStatus } from '../plan/status.ts';
import { RBACDefinitions } from '../resources.ts';
import { act, type ActDeps } from './act.ts';
import { FIELD_MANAGER } from './kinds.ts';
import { ownedFromCaches, worldOf, type Caches } from './observe.ts';
import { withhold, type Withheld } from './withhold.ts';
import { WEBHOOK_RECHECK_MS } from './webhook-gate.ts';

/** After a refused write, look again this often even when nothing changes (a grant of RBAC may fix it). */
export const REFUSED_RETRY_MS = 30_000;
/** A timer set for a window's edge fires this much later, so the edge has passed on every clock reading. */
const EDGE_SLACK_MS = 20;

export interface ReconcileDeps extends ActDeps {
  definitions: Informer<RBACDefinition>;
  caches: Caches;
  client: ActDeps['client'] & Parameters<typeof writeStatus>[0];
  now: () => Date;
  /** Counts windows reaching their edges (rbac_manager_window_transitions_total). */
  transitions: { inc(labels: { state: string }): void };
  /** Why the escalation webhook is not in place (nothing is granted then), or undefined (webhook-gate.ts). */
  webhookProblem: () => Promise<string | undefined>;
}

export function rbacDefinitionReconciler(deps: ReconcileDeps): Reconciler {
  return async ({ name }, { signal }) => {
    const definition = deps.definitions.store.get(name);
    if (!definition || definition.metadata.deletionTimestamp) return;
    const now = deps.now();
    const invalid = validateDefinition(definition);
    if (invalid.length > 0) {
      await report(deps, definition, invalidStatus(definition, invalid, now), signal);
      return;
    }
    const desired = desiredState(definition, worldOf(deps.caches), now);
    const planned = planActions(desired, ownedFromCaches(deps.caches, definition.metadata.uid ?? ''));
    const gate = await deps.webhookProblem();
    const withheld: Withheld | undefined = gate === undefined ? undefined : withhold(definition, planned, gate, deps.events);
    const outcome = await act(definition, withheld?.actions ?? planned, deps, signal);
    for (const [binding, list] of withheld?.skipped ?? []) outcome.skipped.set(binding, [...(outcome.skipped.get(binding) ?? []), ...list]);
    const status = buildStatus(desired, outcome.skipped, definition.status, definition.metadata.generation, now, gate);
    announceTransitions(deps, definition, status);
    await report(deps, definition, status, signal);
    if (outcome.transient.length > 0) throw outcome.transient[0];
    const next = status.nextTransition === undefined ? undefined : Date.parse(status.nextTransition) - now.getTime() + EDGE_SLACK_MS;
    const refused = outcome.skipped.size > 0 ? REFUSED_RETRY_MS : undefined;
    const after = [next, refused, gate === undefined ? undefined : WEBHOOK_RECHECK_MS].filter((ms): ms is number => ms !== undefined);
    return after.length > 0 ? { requeueAfter: Math.max(EDGE_SLACK_MS, Math.min(...after)) } : undefined;
  };
}

async function report(deps: ReconcileDeps, definition: RBACDefinition, status: RBACDefinitionStatus, signal: AbortSignal): Promise<void> {
  await writeStatus(deps.client, RBACDefinitions, { namespace: '', name: definition.metadata.name ?? '' }, definition.status, status, { fieldManager: FIELD_MANAGER, signal });
}

/**
 * Each binding whose state changed since the last status, a grant that started or ended: counted, and told in
 * an event on the definition (GrantStarted, GrantEnded, GrantPending), beside the events of the writes it caused.
 */
function announceTransitions(deps: ReconcileDeps, definition: RBACDefinition, next: RBACDefinitionStatus): void {
  const before = new Map((definition.status?.bindings ?? []).map((b) => [b.name, b.state]));
  for (const b of next.bindings ?? []) {
    const was = before.get(b.name);
    if (was === undefined || was === b.state) continue;
    deps.transitions.inc({ state: b.state });
    const said = {
      Active: { reason: 'GrantStarted', note: `binding ${b.name} started (it was ${was}): its access is granted` },
      Expired: { reason: 'GrantEnded', note: `binding ${b.name} ended${b.expiresAt ? ` at ${b.expiresAt}` : ''}: its access is revoked` },
      Pending: { reason: 'GrantPending', note: `binding ${b.name} starts at ${b.startsAt ?? 'a later time'} (it was ${was})` },
    }[b.state];
    deps.events.record(definition, { type: 'Normal', action: 'Window', ...said });
  }
}

/** A definition that breaks a rule grants nothing new and keeps what it has; the status names the rule. */
function invalidStatus(definition: RBACDefinition, errors: readonly string[], now: Date): RBACDefinitionStatus {
  const generation = definition.metadata.generation ?? 0;
  const message = errors.join('; ');
  let conditions = setCondition(definition.status?.conditions, { type: 'Ready', status: 'False', reason: 'InvalidDefinition', message, observedGeneration: generation }, now);
  conditions = setCondition(conditions, { type: 'Degraded', status: 'True', reason: 'InvalidDefinition', message, observedGeneration: generation }, now);
  return { ...definition.status, observedGeneration: generation, conditions };
}
