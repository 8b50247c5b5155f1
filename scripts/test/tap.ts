// Counts from node:test's TAP report of one file. A skip counts as failed unless its reason begins with
// "environment:" (a condition of the machine, which the summary lists): coverage must not vanish unseen.

export interface FileCounts {
  passed: number;
  failed: number;
  /** Skips that name an environment condition: reported, not failed. */
  environmentSkips: string[];
  /** Skips without an environment reason: each also counts in `failed`. */
  unexplainedSkips: string[];
  /** Whether the report was complete (node:test wrote its closing counts). */
  complete: boolean;
}

export const ENVIRONMENT_SKIP = /^environment:/i;

export function countTap(report: string): FileCounts {
  const environmentSkips: string[] = [];
  const unexplainedSkips: string[] = [];
  for (const match of report.matchAll(/^\s*ok \d+ - (.*?) # SKIP ?(.*)$/gm)) {
    const [, name = '', reason = ''] = match;
    (ENVIRONMENT_SKIP.test(reason.trim()) ? environmentSkips : unexplainedSkips).push(`${name}: ${reason.trim() || '(no reason given)'}`);
  }
  const total = (label: string): number | undefined => {
    const found = [...report.matchAll(new RegExp(`^# ${label} (\\d+)$`, 'gm'))].at(-1)?.[1];
    return found === undefined ? undefined : Number(found);
  };
  const pass = total('pass');
  if (pass === undefined) {
    // Cut short (a timeout kills the process): count the top-level results written so far.
    const passed = [...report.matchAll(/^ok \d+ - (?!.* # SKIP)/gm)].length;
    const failed = [...report.matchAll(/^not ok \d+ - /gm)].length;
    return { passed, failed: failed + unexplainedSkips.length, environmentSkips, unexplainedSkips, complete: false };
  }
  const failed = (total('fail') ?? 0) + (total('cancelled') ?? 0);
  return { passed: pass, failed: failed + unexplainedSkips.length, environmentSkips, unexplainedSkips, complete: true };
}
