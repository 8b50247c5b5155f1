// Schema nodes TypeBox does not express in the structural form a CRD needs, for every operator's API modules.
import { Type, type TUnsafe } from '@sinclair/typebox';

/** A string enum: an `enum` rather than TypeBox's anyOf-of-consts, since a structural schema cannot type a node inside anyOf. */
export function stringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown>): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}

/**
 * A map of strings (labels, annotations, selectors): `additionalProperties` rather than TypeBox's
 * patternProperties, which Kubernetes does not accept; `value` constrains each value (e.g. a maximum length).
 */
export function stringMap(options: Record<string, unknown>, value: Record<string, unknown> = {}): TUnsafe<Record<string, string>> {
  return Type.Unsafe<Record<string, string>>({ ...options, type: 'object', additionalProperties: { type: 'string', ...value } });
}

/** Label values, as in a label selector's `matchLabels`: strings of at most 63 characters. */
export function labelMap(options: Record<string, unknown>): TUnsafe<Record<string, string>> {
  return stringMap(options, { maxLength: 63 });
}
