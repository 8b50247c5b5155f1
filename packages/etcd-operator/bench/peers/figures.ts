// The peers benchmarks' figures from their runs (pure, for the unit tests), for the etcd peers bench here and the
// Redis one (packages/redis-operator/bench/peers/figures.ts), each over its own peers and scenarios. For each
// peer and scenario:
//   peers.<peer>.<prefix><scenario>_s          median seconds over the runs that succeeded, with .min and .max;
//   peers.<peer>.<prefix><scenario>_failures   runs that failed or timed out (or were skipped after an earlier
//                                              scenario of the same run failed), always reported, 0 included;
//   peers.<peer>.<prefix><scenario>_ratio      Quorum's median over the peer's (below 1: Quorum is faster), with
//                                              .min and .max over the rounds where both succeeded (the same
//                                              round's runs are neighbours in time, so their ratio shares the load).
import { median } from '../figures.ts';

export const PEERS = ['quorum', 'coreos', 'statefulset'] as const;
export type Peer = (typeof PEERS)[number];
export const SCENARIOS = ['create', 'pod_deleted', 'scale_3_5'] as const;
export type Scenario = (typeof SCENARIOS)[number];

export interface PeerRun<P extends string, S extends string> {
  peer: P;
  round: number;
  scenario: S;
  /** Set when the scenario reached Available within its bound. */
  seconds?: number;
  /** Why not, when it did not. */
  failure?: string;
}
export type RunResult = PeerRun<Peer, Scenario>;

export interface Figure {
  bench: string;
  value: number;
  unit: 's' | 'ratio' | 'runs';
}

/** Which peers and scenarios a bench has; `quorum` is the peer the others are compared with. */
export interface PeerBench<P extends string, S extends string> {
  peers: readonly P[];
  scenarios: readonly S[];
  /** Put before each scenario's name in the figures (e.g. `redis_`). */
  prefix?: string;
}

const succeeded = <P extends string, S extends string>(results: readonly PeerRun<P, S>[], peer: P | 'quorum', scenario: S): PeerRun<P, S>[] =>
  results.filter((r) => r.peer === peer && r.scenario === scenario && r.seconds !== undefined);

/** Quorum's median over the peer's, and per round where both succeeded (neighbours in time share the load). */
function ratios(name: string, quorum: readonly PeerRun<string, string>[], peer: readonly PeerRun<string, string>[]): Figure[] {
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

/** The figures of a peers bench's runs, for `peers` (default: all of the bench's). */
export function benchFigures<P extends string, S extends string>(bench: PeerBench<P, S>, results: readonly PeerRun<P, S>[], peers: readonly P[] = bench.peers): Figure[] {
  const figures: Figure[] = [];
  for (const peer of peers) {
    for (const scenario of bench.scenarios) {
      const name = `peers.${peer}.${bench.prefix ?? ''}${scenario}`;
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

/** QUORUM_PEERS (comma-separated, default all): which of `known` run, always in their order. Unknown names throw. */
export function selectFrom<P extends string>(known: readonly P[], value: string | undefined): P[] {
  if (value === undefined || value.trim() === '') return [...known];
  const named = value.split(',').map((p) => p.trim()).filter(Boolean);
  for (const p of named) if (!(known as readonly string[]).includes(p)) throw new Error(`QUORUM_PEERS: unknown peer ${p} (known: ${known.join(', ')})`);
  return known.filter((p) => named.includes(p));
}

export const ETCD_BENCH: PeerBench<Peer, Scenario> = { peers: PEERS, scenarios: SCENARIOS };
export const peerFigures = (results: readonly RunResult[], peers: readonly Peer[] = PEERS): Figure[] => benchFigures(ETCD_BENCH, results, peers);
export const selectedPeers = (value: string | undefined): Peer[] => selectFrom(PEERS, value);

/**
 * Runs every peer once per round, the peers of a round one after another (so a ratio's two runs are neighbours in
 * time), then hands the bench's figures to `report` and lists the runs that failed through `progress`; any failure
 * sets the process's exit code to 1.
 */
export async function runRounds<P extends string, S extends string>(options: {
  bench: PeerBench<P, S>;
  peers: readonly P[];
  rounds: number;
  run: (peer: P, round: number) => Promise<PeerRun<P, S>[]>;
  report: (figure: Figure) => void;
  progress: (line: string) => void;
}): Promise<void> {
  const { peers, rounds, progress } = options;
  const results: PeerRun<P, S>[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const peer of peers) {
      progress(`round ${round + 1}/${rounds}: ${peer}`);
      results.push(...(await options.run(peer, round)));
    }
  }
  for (const f of benchFigures(options.bench, results, peers)) options.report(f);
  const failures = results.filter((r) => r.failure && !r.failure.startsWith('skipped'));
  for (const f of failures) progress(`failure: ${f.peer} ${f.scenario} round ${f.round + 1}: ${f.failure}`);
  if (failures.length > 0) process.exitCode = 1;
}
