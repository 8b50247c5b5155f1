// Work queue throughput on its own: distinct keys per second through add → get → done with 4 async workers,
// in process, no cluster. Prints the median of several runs after a warm-up, as one JSON line on stdout.
import { WorkQueue } from '../src/queue/index.ts';

const KEYS = 200_000;
const WORKERS = 4;
const RUNS = 5;
// The producer yields this often, so workers interleave with it as they would with a watch stream.
const ADDS_PER_TURN = 1000;

const keys = Array.from({ length: KEYS }, (_, i) => `namespace-${i % 100}/object-${i}`);
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function keysPerSecond(): Promise<number> {
  const queue = new WorkQueue<string>({ name: 'bench' });
  let processed = 0;
  const { promise: allProcessed, resolve: finish } = Promise.withResolvers<void>();
  const worker = async (): Promise<void> => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      queue.done(key);
      if (++processed === KEYS) finish();
    }
  };

  const startMs = performance.now();
  const workers = Array.from({ length: WORKERS }, worker);
  for (let i = 0; i < KEYS; i++) {
    queue.add(keys[i]!);
    if (i % ADDS_PER_TURN === ADDS_PER_TURN - 1) await nextTurn();
  }
  await allProcessed;
  const elapsedMs = performance.now() - startMs;

  queue.shutDown();
  await Promise.all(workers);
  return KEYS / (elapsedMs / 1000);
}

await keysPerSecond(); // warm-up: lets the JIT settle before measuring
const results: number[] = [];
for (let run = 1; run <= RUNS; run++) {
  results.push(await keysPerSecond());
  process.stderr.write(`queue bench run ${run}/${RUNS}: ${Math.round(results.at(-1)!)} keys/s\n`);
}
const median = results.sort((a, b) => a - b)[Math.floor(RUNS / 2)]!;
process.stdout.write(JSON.stringify({ bench: 'runtime.queue.keys_per_s', value: Math.round(median), unit: 'keys/s' }) + '\n');
