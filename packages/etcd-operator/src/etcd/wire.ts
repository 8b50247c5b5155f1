// Decoding the gateway's JSON. Protobuf JSON omits default values (false, 0, "", empty lists), so every
// field is optional on the wire; 64-bit integers arrive as decimal strings.

export type JsonObject = Record<string, unknown>;

/** Thrown on a body that is not shaped like the gateway's; the client rewraps it with the endpoint. */
export class WireError extends Error {}

export function asObject(value: unknown, what: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new WireError(`${what}: expected an object`);
  return value as JsonObject;
}

export function optObject(o: JsonObject, key: string): JsonObject {
  const v = o[key];
  return v === undefined || v === null ? {} : asObject(v, key);
}

export function str(o: JsonObject, key: string, fallback = ''): string {
  const v = o[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'string') throw new WireError(`${key}: expected a string`);
  return v;
}

/** A (u)int64 field kept as its decimal string. */
export function int64(o: JsonObject, key: string): string {
  const v = o[key];
  if (v === undefined || v === null) return '0';
  if (typeof v === 'string' && /^-?[0-9]+$/.test(v)) return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  throw new WireError(`${key}: expected an integer`);
}

export function optInt64(o: JsonObject, key: string): string | undefined {
  return o[key] === undefined || o[key] === null ? undefined : int64(o, key);
}

/** A byte count: int64 on the wire, but far below 2^53 in practice. */
export function count(o: JsonObject, key: string): number {
  return Number(int64(o, key));
}

export function bool(o: JsonObject, key: string): boolean {
  const v = o[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new WireError(`${key}: expected a boolean`);
  return v;
}

export function list(o: JsonObject, key: string): unknown[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new WireError(`${key}: expected a list`);
  return v as unknown[];
}

export function strings(o: JsonObject, key: string): string[] {
  return list(o, key).map((v) => {
    if (typeof v !== 'string') throw new WireError(`${key}: expected a list of strings`);
    return v;
  });
}

/** Text is sent as its UTF-8 bytes; raw bytes (e.g. a range end that is not valid UTF-8) as they are. */
export function toBase64(data: string | Uint8Array): string {
  return (typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data)).toString('base64');
}

export function fromBase64(b64: string): string {
  return Buffer.from(b64, 'base64').toString('utf8');
}
