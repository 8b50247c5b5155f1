// The Redis peers benchmark's figures from its runs (pure, for the unit tests). For each peer and scenario:
//   peers.<peer>.redis_<scenario>_s          median seconds over the runs that succeeded, with .min and .max;
//   peers.<peer>.redis_<scenario>_failures   runs that failed or timed out (or were skipped after an earlier
//                                            scenario of the same run failed), always reported, 0 included;
//   peers.<peer>.redis_<scenario>_ratio      Quorum's median over the peer's (below 1: Quorum is faster), with
//                                            .min and .max over the rounds where both succeeded.
// The same shape as the etcd peers bench's figures (packages/etcd-operator/bench/peers/figures.ts), over other
// peers and scenarios and with the `redis_` prefix.
import { median } from '../../../etcd-operator/bench/figures.ts';

export const PEERS = ['quorum', 'ot', 'spotahome'] as const;
export type Peer = (typeof PEERS)[number];
export const SCENARIOS = ['create', 'primary_pod_deleted', 'all_pods_deleted'] as const;
export type Scenario = (typeof SCENARIOS)[number];

export interface RunResult {
  peer: Peer;
  round: number;
  scenario: Scenario;
  /** Set when the scenario reached Available within its bound. */
  seconds?: number;
  /** Why not, when it did not. */
  failure?: string;
}

export interface Figure {
  bench: string;
  value: number;
  unit: 's' | 'ratio' | 'runs';
}

const succeeded = (results: readonly RunResult[], peer: Peer, scenario: Scenario): RunResult[] =>
  results.filter((r) => r.peer === peer && r.scenario === scenario && r.seconds !== undefined);

/** Quorum's median over the peer's, and per round where both succeeded (neighbours in time share the load). */
function ratios(name: string, quorum: readonly RunResult[], peer: readonly RunResult[]): Figure[] {
  if (quorum.length === 0 || peer.length === 0) return [];
  const figures: Figure[] = [{ bench: `${name}_ratio`, value: median(quorum.map((r) => r.seconds!)) / median(peer.map((r) => r.seconds!)), unit: 'ratio' }];
  const perRound = peer.flatMap((r) => {
    const q = quorum.find((x) => x.round === r.round);
    return q ? [q.seconds! / r.seconds!] : [];
  });
  if (perRound.length > 0) {
    figures.push({ bench: `${name}_ratio.min`, value: Math.min(...perRound), unit: 'ratio' });
    figures.push({ bench: `${name}_ratio.max`, value: Math.max(...perRound), unit: 'ratio' });
  }
  return figures;
}

export function peerFigures(results: readonly RunResult[], peers: readonly Peer[] = PEERS): Figure[] {
  const figures: Figure[] = [];
  for (const peer of peers) {
    for (const scenario of SCENARIOS) {
      const name = `peers.${peer}.redis_${scenario}`;
      const mine = succeeded(results, peer, scenario);
      const secs = mine.map((r) => r.seconds!);
      if (secs.length > 0) {
        figures.push({ bench: `${name}_s`, value: median(secs), unit: 's' });
        figures.push({ bench: `${name}_s.min`, value: Math.min(...secs), unit: 's' });
        figures.push({ bench: `${name}_s.max`, value: Math.max(...secs), unit: 's' });
      }
      figures.push({ bench: `${name}_failures`, value: results.filter((r) => r.peer === peer && r.scenario === scenario && r.seconds === undefined).length, unit: 'runs' });
      if (peer !== 'quorum') figures.push(...ratios(name, succeeded(results, 'quorum', scenario), mine));
    }
  }
  return figures;
}

/** QUORUM_PEERS (comma-separated, default all): which peers run, always in PEERS order. Unknown names throw. */
export function selectedPeers(value: string | undefined): Peer[] {
  if (value === undefined || value.trim() === '') return [...PEERS];
  const named = value.split(',').map((p) => p.trim()).filter(Boolean);
  for (const p of named) if (!(PEERS as readonly string[]).includes(p)) throw new Error(`QUORUM_PEERS: unknown peer ${p} (known: ${PEERS.join(', ')})`);
  return PEERS.filter((p) => named.includes(p));
}
