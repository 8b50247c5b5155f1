// A reconcile while the escalation webhook is not in place (webhook-gate.ts): the deletions go ahead (taking
// access away needs no check), every create and update is withheld and reported in status as `Withheld`, and
// the definition gets a Warning event that names what is missing.
import type { EventRecorder } from '@quorum/runtime';
import type { RBACDefinition, Skipped } from '../api/rbacdefinition.ts';
import type { Action } from '../plan/actions.ts';

export interface Withheld {
  /** What may still be done: the deletions. */
  actions: Action[];
  /** What is not done, by binding. */
  skipped: Map<string, Skipped[]>;
}

export function withhold(definition: RBACDefinition, planned: readonly Action[], problem: string, events: Pick<EventRecorder, 'record'>): Withheld {
  const withheld: Withheld = { actions: [], skipped: new Map() };
  const message = `withheld until the escalation webhook is in place: ${problem}`;
  for (const action of planned) {
    if (action.type === 'delete') {
      withheld.actions.push(action);
      continue;
    }
    const d = action.desired;
    const list = withheld.skipped.get(d.binding) ?? [];
    list.push({ kind: d.kind, ...(d.namespace ? { namespace: d.namespace } : {}), name: d.name, reason: 'Withheld', message });
    withheld.skipped.set(d.binding, list);
  }
  const count = planned.length - withheld.actions.length;
  events.record(definition, { type: 'Warning', reason: 'WebhookMissing', action: 'Withhold', note: `${count} object(s) not created or updated: ${message}` });
  return withheld;
}
