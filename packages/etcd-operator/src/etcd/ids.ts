// etcd member IDs are uint64: the gateway sends them as decimal strings (JSON numbers would lose
// precision), while etcdctl and etcd's logs print them in hex. IDs stay strings everywhere.

const UINT64_MAX = (1n << 64n) - 1n;

/** True for a canonical decimal uint64 ("0" or no leading zeros). */
export function isMemberId(id: string): boolean {
  return /^(0|[1-9][0-9]{0,19})$/.test(id) && BigInt(id) <= UINT64_MAX;
}

/**
 * Decimal uint64 → hex as etcdctl and etcd's logs print it (`%x`: lowercase, no padding, so an ID
 * below 2^60 has fewer than 16 digits).
 */
export function memberIdToHex(id: string): string {
  if (!isMemberId(id)) throw new RangeError(`not a uint64 member ID: ${JSON.stringify(id)}`);
  return BigInt(id).toString(16);
}

/** Hex (as etcdctl prints it, optionally 0x-prefixed) → the decimal string the gateway uses. */
export function memberIdFromHex(hex: string): string {
  const digits = hex.toLowerCase().replace(/^0x/, '');
  if (!/^[0-9a-f]{1,16}$/.test(digits)) throw new RangeError(`not a hex member ID: ${JSON.stringify(hex)}`);
  return BigInt(`0x${digits}`).toString(10);
}
