// A duration as the API writes it (DURATION_PATTERN: `90m`, `8h`, `7d`), read in one place: the planner's
// windows (plan/window.ts) and the code mirror of the CRD's checks (validate.ts) both use it. It sits in api/,
// at the bottom, because the text it reads is the API's: a planner-side parser would make api/ import plan/.
import { DURATION_PATTERN } from './rbacdefinition.ts';

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = new RegExp(DURATION_PATTERN);

/** `90m`, `8h`, `7d` in milliseconds; undefined for anything the CRD's pattern refuses. */
export function parseDuration(text: string): number | undefined {
  if (!DURATION.test(text)) return undefined;
  return Number(text.slice(0, -1)) * UNIT_MS[text.slice(-1) as keyof typeof UNIT_MS];
}
