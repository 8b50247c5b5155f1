// The Redis peers benchmark's figures from its runs (pure, for the unit tests): the etcd peers bench's figures
// (packages/etcd-operator/bench/peers/figures.ts, which says what each means) over the Redis operators and
// scenarios, named peers.<peer>.redis_<scenario>_{s,failures,ratio}.
export { runRounds } from '../../../etcd-operator/bench/peers/figures.ts';
import { benchFigures, selectFrom, type Figure, type PeerBench, type PeerRun } from '../../../etcd-operator/bench/peers/figures.ts';

export const PEERS = ['quorum', 'ot', 'spotahome'] as const;
export type Peer = (typeof PEERS)[number];
export const SCENARIOS = ['create', 'primary_pod_deleted', 'all_pods_deleted'] as const;
export type Scenario = (typeof SCENARIOS)[number];
export type RunResult = PeerRun<Peer, Scenario>;
export type { Figure };

export const REDIS_BENCH: PeerBench<Peer, Scenario> = { peers: PEERS, scenarios: SCENARIOS, prefix: 'redis_' };
export const peerFigures = (results: readonly RunResult[], peers: readonly Peer[] = PEERS): Figure[] => benchFigures(REDIS_BENCH, results, peers);
export const selectedPeers = (value: string | undefined): Peer[] => selectFrom(PEERS, value);
