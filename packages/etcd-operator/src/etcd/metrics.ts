// A member's own Prometheus metrics (its --listen-metrics-urls port), for what the gateway does not say:
// which peers rafthttp currently counts as active. A member can keep a peer "inactive" while the streams
// to it are up (etcd-io/etcd#14523), and then refuses membership changes; this is how we see it.
import { memberIdFromHex } from './ids.ts';

/**
 * The member IDs (decimal, as the gateway reports them) that `metricsURL`'s member reports active in
 * `etcd_network_active_peers{Local,Remote}` (1 = active). Throws when the metrics cannot be read.
 */
export async function activePeers(metricsURL: string, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<string[]> {
  const signals = [AbortSignal.timeout(options.timeoutMs ?? 3000), ...(options.signal ? [options.signal] : [])];
  const res = await fetch(`${metricsURL.replace(/\/$/, '')}/metrics`, { signal: AbortSignal.any(signals) });
  if (!res.ok) throw new Error(`${metricsURL}/metrics: HTTP ${res.status}`);
  return parseActivePeers(await res.text());
}

/** The Remote IDs of `etcd_network_active_peers` samples whose value is 1, as decimal member IDs. */
export function parseActivePeers(exposition: string): string[] {
  const ids: string[] = [];
  for (const line of exposition.split('\n')) {
    if (!line.startsWith('etcd_network_active_peers{')) continue;
    const remote = /Remote="([0-9a-fA-F]+)"/.exec(line)?.[1];
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (remote && value === 1) ids.push(memberIdFromHex(remote));
  }
  return ids;
}
