// The fault sequence of a chaos run: a pure function of (seed, faults, clusters), so that a seed replays the
// same faults in the same order on the same targets. What a fault hits inside a cluster (which member, which
// node) is a number in [0, 1) drawn here and turned into a target at run time from the sorted candidates:
// the same seed against the same state picks the same target, and the run's log records what it picked.

/** Every fault the suite injects (issue 10): each is drawn at random from this set. */
export const FAULT_KINDS = [
  'kill-member-container',
  'delete-member-pod',
  'delete-leader-pod',
  'stop-node',
  'cut-node-network',
  'kill-operator-pod',
  'restart-apiserver',
  'dns-outage',
  'wipe-member-volume',
  'fill-to-nospace',
  'scale',
  'change-version',
  'take-backup',
  'rotate-certificates',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Faults that hit the whole localkube (every cluster at once) rather than one EtcdCluster. */
export const CLUSTER_WIDE: ReadonlySet<FaultKind> = new Set(['stop-node', 'cut-node-network', 'kill-operator-pod', 'restart-apiserver', 'dns-outage']);

export interface FaultDraw {
  /** 1-based position in the run. */
  index: number;
  kind: FaultKind;
  /** The EtcdCluster it hits (0-based), for a per-cluster fault; cluster-wide faults hit them all. */
  cluster: number;
  /** In [0, 1): picks the target (member, node, operator pod) among the sorted candidates at run time. */
  pick: number;
  /** For outages (node stopped, network cut, DNS down): how long, 10 to 30 s. */
  outageSeconds: number;
}

/** mulberry32: a small, fast PRNG whose whole state is one 32-bit word, so a seed is all a replay needs. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Draws `faults` faults. Kinds come from shuffled decks of the whole set (each deck a random permutation,
 * drawn without replacement), so that every kind is hit once per deck however short the run: a 20-fault
 * run covers all 14 kinds, and a long run hits each kind equally often, in a random order.
 */
export function drawFaults(options: { seed: number; faults: number; clusters: number }): FaultDraw[] {
  if (!Number.isInteger(options.faults) || options.faults < 1) throw new Error(`--faults must be a positive integer (got ${options.faults})`);
  if (!Number.isInteger(options.clusters) || options.clusters < 1) throw new Error(`--clusters must be a positive integer (got ${options.clusters})`);
  if (!Number.isInteger(options.seed)) throw new Error(`--seed must be an integer (got ${options.seed})`);
  const random = rng(options.seed);
  const draws: FaultDraw[] = [];
  let deck: FaultKind[] = [];
  for (let index = 1; index <= options.faults; index++) {
    if (deck.length === 0) deck = shuffle([...FAULT_KINDS], random);
    const kind = deck.pop()!;
    const cluster = Math.floor(random() * options.clusters);
    const pick = random();
    const outageSeconds = 10 + Math.floor(random() * 21);
    draws.push({ index, kind, cluster: CLUSTER_WIDE.has(kind) ? 0 : cluster, pick, outageSeconds });
  }
  return draws;
}

/** Fisher–Yates with the run's generator. */
function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** The candidate `pick` selects: candidates are sorted first, so the choice does not depend on list order. */
export function choose<T extends string>(candidates: readonly T[], pick: number): T {
  if (candidates.length === 0) throw new Error('chaos: no candidate to pick a target from');
  const sorted = [...candidates].sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(pick * sorted.length))]!;
}
