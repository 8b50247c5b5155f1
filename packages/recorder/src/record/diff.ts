// Unified diffs between two versions' YAML, by jsdiff (the npm package `diff`, maintained, with no
// dependencies of its own): its Myers line diff and unified formatting are what `diff -u` and git print, and
// its applyPatch lets the tests check that a diff really turns one version into the other.
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from 'diff';

/** Lines of context around each change, as `diff -u` uses. */
const CONTEXT_LINES = 3;

/**
 * Past this many changed lines the diff is not computed: Myers' algorithm is quadratic in the edit length in
 * the worst case, and the recorder's event loop (its watches) must not stall on one huge object.
 */
export const MAX_DIFF_EDIT_LENGTH = 20_000;

/**
 * The unified diff turning `before` into `after`, with `---`/`+++` headers naming each side; '' when they
 * are equal, undefined when the edit is too long to compute (see MAX_DIFF_EDIT_LENGTH).
 */
export function unifiedDiff(before: string, after: string, beforeLabel: string, afterLabel: string): string | undefined {
  if (before === after) return '';
  return createTwoFilesPatch(beforeLabel, afterLabel, before, after, undefined, undefined, {
    context: CONTEXT_LINES,
    maxEditLength: MAX_DIFF_EDIT_LENGTH,
    headerOptions: FILE_HEADERS_ONLY,
  });
}
