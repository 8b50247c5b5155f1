// The peers benchmark's figures from its runs (pure, for the unit tests). For each peer and scenario:
//   peers.<peer>.<scenario>_s          median seconds over the runs that succeeded, with .min and .max;
//   peers.<peer>.<scenario>_failures   runs that failed or timed out (or were skipped after an earlier
//                                      scenario of the same run failed), always reported, 0 included;
//   peers.<peer>.<scenario>_ratio      Quorum's median over the peer's (below 1: Quorum is faster), with
//                                      .min and .max over the rounds where both succeeded (the same round's
//                                      runs are neighbours in time, so their ratio shares the machine's load).
import { median } from '../figures.ts';

export const PEERS = ['quorum', 'coreos', 'statefulset'] as const;
export type Peer = (typeof PEERS)[number];
export const SCENARIOS = ['create', 'pod_deleted', 'scale_3_5'] as const;
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

export function peerFigures(results: readonly RunResult[], peers: readonly Peer[] = PEERS): Figure[] {
  const figures: Figure[] = [];
  const ok = (peer: Peer, scenario: Scenario): RunResult[] => results.filter((r) => r.peer === peer && r.scenario === scenario && r.seconds !== undefined);
  for (const peer of peers) {
    for (const scenario of SCENARIOS) {
      const name = `peers.${peer}.${scenario}`;
      const mine = ok(peer, scenario);
      const secs = mine.map((r) => r.seconds!);
      if (secs.length > 0) {
        figures.push({ bench: `${name}_s`, value: median(secs), unit: 's' });
        figures.push({ bench: `${name}_s.min`, value: Math.min(...secs), unit: 's' });
        figures.push({ bench: `${name}_s.max`, value: Math.max(...secs), unit: 's' });
      }
      figures.push({ bench: `${name}_failures`, value: results.filter((r) => r.peer === peer && r.scenario === scenario && r.seconds === undefined).length, unit: 'runs' });
      if (peer === 'quorum') continue;
      const quorum = ok('quorum', scenario);
      if (quorum.length === 0 || secs.length === 0) continue;
      figures.push({ bench: `${name}_ratio`, value: median(quorum.map((r) => r.seconds!)) / median(secs), unit: 'ratio' });
      const perRound = mine.flatMap((r) => {
        const q = quorum.find((x) => x.round === r.round);
        return q ? [q.seconds! / r.seconds!] : [];
      });
      if (perRound.length > 0) {
        figures.push({ bench: `${name}_ratio.min`, value: Math.min(...perRound), unit: 'ratio' });
        figures.push({ bench: `${name}_ratio.max`, value: Math.max(...perRound), unit: 'ratio' });
      }
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
