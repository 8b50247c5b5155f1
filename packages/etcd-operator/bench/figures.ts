// What every benchmark here shares: one JSON line per figure on stdout, progress on stderr, medians, and
// runs interleaved with their floor.

export const report = (bench: string, value: number, unit: string): void => void process.stdout.write(JSON.stringify({ bench, value: Math.round(value * 1000) / 1000, unit }) + '\n');
export const progressTo = (tag: string) => (msg: string): void => void process.stderr.write(`[${tag}] ${msg}\n`);
export const seconds = (t0: number): number => (performance.now() - t0) / 1000;
export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/**
 * `runs` pairs of (ours, floor), the order alternating within each pair so that a drift in the machine's
 * load favours neither side. Returns each side's values and the per-pair ratios ours / floor.
 */
export async function interleavedPairs(runs: number, ours: (run: number) => Promise<number>, floor: (run: number) => Promise<number>): Promise<{ ours: number[]; floor: number[]; ratios: number[] }> {
  const out = { ours: [] as number[], floor: [] as number[], ratios: [] as number[] };
  for (let i = 0; i < runs; i++) {
    let o = 0;
    let f = 0;
    for (const side of i % 2 === 0 ? ['ours', 'floor'] : ['floor', 'ours']) {
      if (side === 'ours') o = await ours(i);
      else f = await floor(i);
    }
    out.ours.push(o);
    out.floor.push(f);
    out.ratios.push(o / f);
  }
  return out;
}

/** A ratio's median and spread: NAME, NAME.min, NAME.max. */
export function reportRatio(name: string, ratios: readonly number[]): void {
  report(name, median(ratios), 'ratio');
  report(`${name}.min`, Math.min(...ratios), 'ratio');
  report(`${name}.max`, Math.max(...ratios), 'ratio');
}

/** The phases QUORUM_BENCH_PHASES names (comma-separated; all of `known` when unset); an unknown name throws. */
export function selectedPhases<P extends string>(known: readonly P[]): Set<P> {
  const named = (process.env['QUORUM_BENCH_PHASES'] ?? known.join(',')).split(',').map((p) => p.trim()).filter(Boolean);
  for (const p of named) if (!(known as readonly string[]).includes(p)) throw new Error(`QUORUM_BENCH_PHASES: unknown phase ${p} (known: ${known.join(', ')})`);
  return new Set(named as P[]);
}

/** QUORUM_BENCH_RUNS: runs per measured pair (default 5, the least a median here is reported over). */
export const benchRuns = (): number => Number(process.env['QUORUM_BENCH_RUNS'] ?? 5);
