// When a binding is in force: from notBefore (else the definition's creation) until expiresAt, or until
// expiresAfter past its start. Pure: the caller passes the time.
import { parseDuration } from '../api/duration.ts';
import type { RBACBinding } from '../api/rbacdefinition.ts';

export type BindingState = 'Active' | 'Pending' | 'Expired';

export interface BindingWindow {
  state: BindingState;
  /** When it starts, if that is still ahead. */
  startsAt?: Date;
  /** When it ends (ahead or past), if it ends. */
  endsAt?: Date;
}

/** Invalid times never grant: a window that cannot be read is treated as already over. */
export function bindingWindow(binding: RBACBinding, createdAt: string | undefined, now: Date): BindingWindow {
  const notBefore = binding.notBefore === undefined ? undefined : new Date(binding.notBefore);
  const start = notBefore ?? (createdAt === undefined ? now : new Date(createdAt));
  let endsAt: Date | undefined;
  if (binding.expiresAt !== undefined) endsAt = new Date(binding.expiresAt);
  else if (binding.expiresAfter !== undefined) {
    const ms = parseDuration(binding.expiresAfter);
    endsAt = ms === undefined ? new Date(Number.NaN) : new Date(start.getTime() + ms);
  }
  if (Number.isNaN(start.getTime()) || (endsAt && Number.isNaN(endsAt.getTime()))) return { state: 'Expired' };
  if (endsAt && now.getTime() >= endsAt.getTime()) return { state: 'Expired', endsAt };
  if (notBefore && now.getTime() < notBefore.getTime()) return { state: 'Pending', startsAt: notBefore, ...(endsAt ? { endsAt } : {}) };
  return { state: 'Active', ...(endsAt ? { endsAt } : {}) };
}

/** The earliest start or end still ahead, over all windows: when the manager must look again. */
export function nextTransition(windows: readonly BindingWindow[]): Date | undefined {
  const ahead = windows.flatMap((w) => [w.startsAt, w.state === 'Expired' ? undefined : w.endsAt]).filter((d): d is Date => d !== undefined);
  return ahead.length === 0 ? undefined : new Date(Math.min(...ahead.map((d) => d.getTime())));
}
