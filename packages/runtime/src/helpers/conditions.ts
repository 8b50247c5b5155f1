// Status conditions with the semantics of apimachinery's meta.SetStatusCondition: a condition's
// lastTransitionTime records when its status last flipped, not when it was last written.

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** metav1.Condition. */
export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

/** What a controller sets; lastTransitionTime defaults to now when the status changes. */
export type ConditionInput = Omit<Condition, 'lastTransitionTime'> & { lastTransitionTime?: string };

/** RFC 3339 at second precision (`2026-01-01T00:00:00Z`): what the API server stores for metav1.Time. */
export function rfc3339(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/**
 * A new list with `input` set: added if its type is absent; otherwise reason, message and observedGeneration
 * are updated, and lastTransitionTime changes only if the status did. Never mutates `conditions`.
 */
export function setCondition(conditions: readonly Condition[] | undefined, input: ConditionInput, now: Date = new Date()): Condition[] {
  const list = conditions ?? [];
  const index = list.findIndex((c) => c.type === input.type);
  const existing = index < 0 ? undefined : list[index];
  const transitioned = !existing || existing.status !== input.status;
  const condition = makeCondition(input, transitioned ? (input.lastTransitionTime ?? rfc3339(now)) : existing.lastTransitionTime);
  if (index < 0) return [...list, condition];
  return list.map((c, i) => (i === index ? condition : c));
}

export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

/** A new list without conditions of `type`. */
export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

/**
 * Whether two lists hold the same conditions in any order: lets a reconcile skip a status write that would
 * change nothing. A missing observedGeneration equals 0 (the field is omitempty), and times are compared as
 * instants so a differently formatted but equal time does not count as a change.
 */
export function conditionsEqual(a: readonly Condition[] | undefined, b: readonly Condition[] | undefined): boolean {
  const left = (a ?? []).map(canonical).sort();
  const right = (b ?? []).map(canonical).sort();
  return left.length === right.length && left.every((c, i) => c === right[i]);
}

function makeCondition(input: ConditionInput, lastTransitionTime: string): Condition {
  const condition: Condition = { type: input.type, status: input.status, reason: input.reason, message: input.message, lastTransitionTime };
  // Absent rather than undefined, so the object serialises and compares like one read back from the server.
  if (input.observedGeneration !== undefined) condition.observedGeneration = input.observedGeneration;
  return condition;
}

function canonical(c: Condition): string {
  const instant = Date.parse(c.lastTransitionTime);
  return JSON.stringify([c.type, c.status, c.reason, c.message, c.observedGeneration ?? 0, Number.isNaN(instant) ? c.lastTransitionTime : instant]);
}
