// Puts bulk data into a real etcd, so its database (and so its snapshot) has a chosen size.
import { randomBytes } from 'node:crypto';
import { EtcdClient } from '../../src/etcd/client.ts';

/**
 * Writes about `totalBytes` of values under `prefix`, `valueBytes` each (at most ~1 MiB: etcd refuses a
 * request over 1.5 MiB, and values travel base64-encoded). Values are random text, so pages do not repeat.
 */
export async function fillEtcd(endpoint: string, totalBytes: number, options: { valueBytes?: number; prefix?: string } = {}): Promise<number> {
  const valueBytes = options.valueBytes ?? 256 * 1024;
  const prefix = options.prefix ?? 'fill/';
  const client = new EtcdClient({ endpoint, timeoutMs: 30_000 });
  try {
    const count = Math.ceil(totalBytes / valueBytes);
    // One random block, shifted per key: random enough for bbolt, cheap to make.
    const block = randomBytes(Math.ceil((valueBytes * 3) / 4) + 64).toString('base64');
    for (let i = 0; i < count; i++) {
      const start = i % 64;
      await client.put(`${prefix}${String(i).padStart(6, '0')}`, `${i}:${block.slice(start, start + valueBytes - 8)}`);
    }
    return count;
  } finally {
    client.close();
  }
}
