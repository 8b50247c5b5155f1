// When a binding is in force: from notBefore (else the definition's creation) until expiresAt, or until
// expiresAfter past its start. Pure: the caller passes the time.
import type { RBACBinding } from '../api/rbacdefinition.ts';

export type BindingState = 'Active' | 'Pending' | 'Expired';

export interface BindingWindow {
  state: BindingState;
  /** When it starts, if that is still ahead. */
  startsAt?: Date;
  /** When it ends (ahead or past), if it ends. */
  endsAt?: Date;
}

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `90m`, `8h`, `7d` in milliseconds; undefined for anything else (the CRD's pattern refuses it). */
export function parseDuration(text: string): number | undefined {
  const match = /^([1-9][0-9]*)([smhd])$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
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
