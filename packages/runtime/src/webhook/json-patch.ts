// The RFC 6902 patch a mutating webhook answers with: the difference between the object it was sent and
// the object its handler returned. Objects are compared key by key; arrays are replaced whole, since
// index-wise ops on lists the API server may have reordered or defaulted are easy to get wrong.
import type { JsonPatchOp } from '../client/client.ts';
import { deepEqual, isPlainObject } from '../crd/schema.ts';

/** Escapes one reference token (RFC 6901): `~` first, so the `~` of an escaped `/` is not escaped again. */
export function escapePointerToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** Ops that turn `from` into `to`; both must be JSON values (no undefined, functions, Dates). */
export function jsonPatchDiff(from: unknown, to: unknown): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  diffInto(ops, '', from, to);
  return ops;
}

function diffInto(ops: JsonPatchOp[], path: string, from: unknown, to: unknown): void {
  if (isPlainObject(from) && isPlainObject(to)) {
    for (const key of Object.keys(from)) if (!Object.hasOwn(to, key)) ops.push({ op: 'remove', path: `${path}/${escapePointerToken(key)}` });
    for (const [key, value] of Object.entries(to)) {
      const child = `${path}/${escapePointerToken(key)}`;
      if (!Object.hasOwn(from, key)) ops.push({ op: 'add', path: child, value });
      else diffInto(ops, child, from[key], value);
    }
    return;
  }
  if (!deepEqual(from, to)) ops.push({ op: 'replace', path, value: to });
}

