// What a test file says it needs, read from its header comments (the harness never imports a test file to
// learn this: importing would run it). An integration file must say what it holds exclusively, even if
// nothing:
//
//   // @exclusive operator            holds these locks alone (several names, space-separated), or `none`
//   // @shared operator addons        uses what these locks guard, with others that only use it too
//   // @timeout 25m: why              overrides the 10-minute bound (s, m); the reason is required
//   // @quiet: why                    runs with nothing else beside it (tests of timing itself)
//
// Lock names are free-form (a cluster-scoped object a file installs is a fine name); the harness knows
// these: `nodes` and `control-plane` (faults that disturb every other file: such files run alone, at the end),
// `operator` (the etcd operator the harness installs once: a holder reinstalls or changes it, and the harness
// puts the suite's back afterwards), `addons/s3`, `addons/gcs`, `addons/azure` (the object stores, enabled once
// before the lanes; a holder may stop or disable one, and the harness enables it again afterwards) and
// `addons/prometheus`.

export const DEFAULT_TIMEOUT_MS = 10 * 60_000;
/** Locks whose holders disturb every other file: they run alone, after everything else. */
export const FAULT_LOCKS = ['nodes', 'control-plane'] as const;

export interface Declarations {
  /** Locks held alone; undefined when the file has no `@exclusive` line. */
  exclusive: string[] | undefined;
  shared: string[];
  timeoutMs: number;
  timeoutReason?: string;
  quietReason?: string;
}

export class DeclarationError extends Error {}

const LOCK_NAME = /^[a-z0-9][a-z0-9.:/-]*$/;

function lockNames(file: string, directive: string, rest: string): string[] {
  const names = rest.trim().split(/[\s,]+/).filter(Boolean);
  for (const name of names) if (!LOCK_NAME.test(name)) throw new DeclarationError(`${file}: @${directive} names an invalid lock "${name}" (lower-case words, e.g. operator, nodes, clusterrole/quorum-recorder)`);
  return names;
}

function parseDuration(file: string, text: string): number {
  const match = /^(\d+)\s*(s|m)$/.exec(text.trim());
  if (!match) throw new DeclarationError(`${file}: @timeout wants a duration such as 90s or 20m, got "${text.trim()}"`);
  return Number(match[1]) * (match[2] === 'm' ? 60_000 : 1000);
}

/** Reads the `// @…` directives of a test file's text. Pure: `file` only names the file in errors. */
export function parseDeclarations(file: string, text: string): Declarations {
  const result: Declarations = { exclusive: undefined, shared: [], timeoutMs: DEFAULT_TIMEOUT_MS };
  for (const line of text.split('\n')) {
    const match = /^\/\/ @(exclusive|shared|timeout|quiet)\b(.*)$/.exec(line.trim());
    if (!match) continue;
    const [, directive = '', rest = ''] = match;
    if (directive === 'exclusive') {
      if (result.exclusive) throw new DeclarationError(`${file}: more than one @exclusive line`);
      const names = lockNames(file, directive, rest);
      if (names.length === 0) throw new DeclarationError(`${file}: @exclusive names no lock (write "// @exclusive none" when the file needs nothing alone)`);
      result.exclusive = names.length === 1 && names[0] === 'none' ? [] : names;
    } else if (directive === 'shared') {
      result.shared.push(...lockNames(file, directive, rest));
    } else if (directive === 'timeout') {
      const [duration = '', ...why] = rest.split(':');
      if (why.join(':').trim() === '') throw new DeclarationError(`${file}: @timeout needs a reason ("// @timeout 20m: why")`);
      result.timeoutMs = parseDuration(file, duration);
      result.timeoutReason = why.join(':').trim();
    } else {
      const why = rest.replace(/^:/, '').trim();
      if (why === '') throw new DeclarationError(`${file}: @quiet needs a reason ("// @quiet: why")`);
      result.quietReason = why;
    }
  }
  const both = result.shared.filter((name) => result.exclusive?.includes(name));
  if (both.length > 0) throw new DeclarationError(`${file}: ${both.join(', ')} both @exclusive and @shared`);
  return result;
}

/** An integration file's declarations, which must say what it holds alone (`// @exclusive none` if nothing). */
export function requireDeclarations(file: string, text: string): Declarations & { exclusive: string[] } {
  const d = parseDeclarations(file, text);
  if (d.exclusive === undefined) throw new DeclarationError(`${file}: no "// @exclusive" line: say what the file needs alone, or "// @exclusive none" (docs/testing.md)`);
  return { ...d, exclusive: d.exclusive };
}

/** A file runs alone when it holds a fault lock or asks for quiet. */
export function runsAlone(d: Declarations): boolean {
  return d.quietReason !== undefined || (d.exclusive ?? []).some((name) => (FAULT_LOCKS as readonly string[]).includes(name));
}
