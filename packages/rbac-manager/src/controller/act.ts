// Takes the planner's actions: creates, updates, recreates and deletes, each with an Event on the definition
// and a count in rbac_manager_writes_total. What the API server refuses (403, 422) or a name someone else
// holds becomes a skipped entry of the status; anything else (the network, a 5xx, a conflict) is thrown
// after the other writes, and the reconcile is retried with backoff.
import { AlreadyExistsError, ApiError, needsApply, NotFoundError, type Client, type EventRecorder, type KubeObject, type OpenObject } from '@quorum/runtime';
import type { RBACDefinition, Skipped } from '../api/rbacdefinition.ts';
import { classifyExisting, type Action } from '../plan/actions.ts';
import type { DesiredObject, ObjectKind } from '../plan/desired.ts';
import { FIELD_MANAGER, MADE_KINDS } from './kinds.ts';

export interface WriteCounter {
  inc(labels: { kind: string; action: string; reason: string }): void;
}

export interface ActDeps {
  client: Pick<Client, 'create' | 'apply' | 'delete' | 'get' | 'mergePatch'>;
  events: Pick<EventRecorder, 'record'>;
  writes: WriteCounter;
  /** Writes in flight at once for one definition. */
  concurrency: number;
}

export interface ActOutcome {
  /** What could not be made, by binding. */
  skipped: Map<string, Skipped[]>;
  /** Errors worth a retry (the first is thrown by the reconcile once the status is written). */
  transient: unknown[];
}

type Said = { reason: string; note: string; type?: 'Normal' | 'Warning' };

export async function act(definition: RBACDefinition, actions: readonly Action[], deps: ActDeps, signal: AbortSignal): Promise<ActOutcome> {
  const outcome: ActOutcome = { skipped: new Map(), transient: [] };
  const tell = (kind: ObjectKind, action: string, said: Said): void => {
    deps.writes.inc({ kind, action, reason: said.reason });
    deps.events.record(definition, { type: said.type ?? 'Normal', reason: said.reason, action, note: said.note });
  };
  const queue = [...actions];
  const worker = async (): Promise<void> => {
    for (let next = queue.shift(); next && !signal.aborted; next = queue.shift()) {
      try {
        await take(definition, next, deps, signal, tell);
      } catch (err) {
        refusedOrTransient(next, err, outcome);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(deps.concurrency, queue.length) }, worker));
  return outcome;
}

function describe(kind: ObjectKind, namespace: string | undefined, name: string): string {
  return `${kind} ${namespace ? `${namespace}/` : ''}${name}`;
}

function roleOf(obj: OpenObject): string {
  const ref = obj['roleRef'] as { kind: string; name: string } | undefined;
  return ref ? ` (${ref.kind} ${ref.name})` : '';
}

async function take(definition: RBACDefinition, action: Action, deps: ActDeps, signal: AbortSignal, tell: (kind: ObjectKind, action: string, said: Said) => void): Promise<void> {
  if (action.type === 'delete') {
    // Gone already (the cache lagged behind an earlier delete): nothing was revoked now, nothing to tell.
    if (!(await deleteMade(deps, action.kind, action.namespace, action.name, signal))) return;
    const why = action.reason === 'Expired' ? `binding ${action.binding ?? ''} expired` : 'no longer asked for';
    tell(action.kind, 'Delete', { reason: action.reason, note: `deleted ${describe(action.kind, action.namespace, action.name)}: ${why}` });
    return;
  }
  const d = action.desired;
  const what = `${describe(d.kind, d.namespace, d.name)}${roleOf(d.object)}`;
  if (action.type === 'update') {
    if (action.remove) await deps.client.mergePatch(MADE_KINDS[d.kind], { namespace: d.namespace ?? '', name: d.name }, action.remove, { fieldManager: FIELD_MANAGER, signal });
    await apply(deps, d, signal);
    tell(d.kind, 'Update', { reason: 'Updated', note: `set ${what} back to binding ${d.binding}` });
    return;
  }
  // A role reference cannot change: the binding to the old role goes first, told as a revocation.
  if (action.type === 'recreate' && (await deleteMade(deps, d.kind, d.namespace, d.name, signal))) {
    tell(d.kind, 'Delete', { reason: 'Revoked', note: `deleted ${describe(d.kind, d.namespace, d.name)}: binding ${d.binding} now grants${roleOf(d.object)}, and a role reference cannot change` });
  }
  try {
    await deps.client.create(MADE_KINDS[d.kind], d.object, { fieldManager: FIELD_MANAGER, signal });
    tell(d.kind, 'Create', { reason: 'Granted', note: `created ${what} for binding ${d.binding}` });
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
    await nameHeld(definition, d, what, deps, signal, tell);
  }
}

/** A create found the name taken: ours after all (the cache lagged, or our label was removed), FairwindsOps', or someone else's. */
async function nameHeld(definition: RBACDefinition, d: DesiredObject, what: string, deps: ActDeps, signal: AbortSignal, tell: (kind: ObjectKind, action: string, said: Said) => void): Promise<void> {
  const existing = await deps.client.get(MADE_KINDS[d.kind], { namespace: d.namespace ?? '', name: d.name }, { signal });
  const holder = classifyExisting(existing, { name: definition.metadata.name ?? '', uid: definition.metadata.uid ?? '' });
  if (holder === 'taken') {
    // A ServiceAccount someone else made still serves as a subject; only what we would have set on it is lost.
    if (d.kind === 'ServiceAccount' && d.object['imagePullSecrets'] === undefined && d.object['automountServiceAccountToken'] === undefined) return;
    throw new NameTakenError(d, `a ${d.kind} the manager did not make has this name; it is left alone`);
  }
  // Ours and as asked: the cache had not caught up with an earlier create. Nothing to write or tell.
  if (holder === 'ours' && !needsApply(d.object, existing)) return;
  if (holder === 'adopt') {
    // One merge patch, guarded by the resourceVersion: the owner references become ours alone (a merge patch
    // replaces the list), so deleting the FairwindsOps definition later leaves the object to us.
    const metadata = { resourceVersion: existing.metadata.resourceVersion, ownerReferences: d.object.metadata.ownerReferences, labels: d.object.metadata.labels };
    await deps.client.mergePatch(MADE_KINDS[d.kind], { namespace: d.namespace ?? '', name: d.name }, { metadata }, { fieldManager: FIELD_MANAGER, signal });
  }
  await apply(deps, d, signal);
  tell(d.kind, holder === 'adopt' ? 'Adopt' : 'Update', holder === 'adopt' ? { reason: 'Adopted', note: `adopted ${what} from FairwindsOps rbac-manager for binding ${d.binding}` } : { reason: 'Updated', note: `set ${what} back to binding ${d.binding}` });
}

class NameTakenError extends Error {
  readonly desired: DesiredObject;
  constructor(desired: DesiredObject, message: string) {
    super(message);
    this.desired = desired;
  }
}

function apply(deps: ActDeps, d: DesiredObject, signal: AbortSignal): Promise<KubeObject> {
  return deps.client.apply(MADE_KINDS[d.kind], d.object, { fieldManager: FIELD_MANAGER, force: true, signal });
}

/** False when there was nothing to delete. */
async function deleteMade(deps: ActDeps, kind: ObjectKind, namespace: string | undefined, name: string, signal: AbortSignal): Promise<boolean> {
  try {
    await deps.client.delete(MADE_KINDS[kind], { namespace: namespace ?? '', name }, { signal });
    return true;
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    return false;
  }
}

function refusedOrTransient(action: Action, err: unknown, outcome: ActOutcome): void {
  const target = action.type === 'delete' ? { kind: action.kind, namespace: action.namespace, name: action.name, binding: action.binding } : { ...action.desired };
  const skip = (reason: Skipped['reason'], message: string): void => {
    const binding = target.binding ?? '';
    const list = outcome.skipped.get(binding) ?? [];
    list.push({ kind: target.kind, ...(target.namespace ? { namespace: target.namespace } : {}), name: target.name, reason, message });
    outcome.skipped.set(binding, list);
  };
  if (err instanceof NameTakenError) skip('NameTaken', err.message);
  else if (err instanceof ApiError && (err.code === 403 || err.code === 422)) skip('Refused', err.message);
  else outcome.transient.push(err);
}
