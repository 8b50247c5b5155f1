// `npm run chaos -- --faults N --seed S [--clusters K]`: random faults, each reproducible from the seed,
// against K EtcdClusters under write load on localkube (the one LOCALKUBE_STATE_DIR names, or a 3-node one
// started for the run). Prints one JSON line per figure (chaos.*) on stdout, progress on stderr, and exits
// non-zero when any acknowledged write was lost or corrupted, a step stalled, or a fault did not converge.
// `--replay LOG` runs the faults a previous run's log recorded, in the same order.
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { LocalKube, versions } from '@quorum/localkube';
import { percentile } from '../test/support/soak.ts';
import { setUpOperator } from '../test/integration/support.ts';
import { report } from '../bench/figures.ts';
import { DEFAULT_CRASHLOOP_GRACE_SECONDS } from '../src/deploy/manifests.ts';
import { runChaos, type FaultRecord } from './run.ts';
import { drawFaults, type FaultDraw } from './sequence.ts';

const USAGE = 'usage: npm run chaos -- [--faults N] [--seed S] [--clusters K] [--converge-timeout SECONDS] [--log FILE] [--replay LOG]';
const root = join(import.meta.dirname, '..', '..', '..');

const { values } = parseArgs({
  options: {
    faults: { type: 'string', default: '20' },
    seed: { type: 'string' },
    clusters: { type: 'string', default: '3' },
    'converge-timeout': { type: 'string', default: '600' },
    log: { type: 'string' },
    replay: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const integer = (name: string, text: string): number => {
  const n = Number(text);
  if (!Number.isInteger(n)) throw new Error(`--${name} must be an integer (got ${JSON.stringify(text)})\n${USAGE}`);
  return n;
};

const log = (m: string): void => void process.stderr.write(`[chaos] ${m}\n`);
let seed: number;
let clusters = integer('clusters', values.clusters);
let draws: FaultDraw[];
if (values.replay) {
  // The log's first line names the run; each fault line holds its draw, exactly as it was injected.
  const lines = (await readFile(values.replay, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { run?: { seed: number; clusters: number }; fault?: FaultDraw });
  const run = lines.find((l) => l.run)?.run;
  if (!run) throw new Error(`${values.replay} is not a chaos log (no run line)`);
  seed = run.seed;
  clusters = run.clusters;
  draws = lines.flatMap((l) => (l.fault ? [l.fault] : []));
  log(`replaying ${draws.length} faults of seed ${seed} from ${values.replay}`);
} else {
  seed = values.seed !== undefined ? integer('seed', values.seed) : Math.floor(Math.random() * 2 ** 31);
  draws = drawFaults({ seed, faults: integer('faults', values.faults), clusters });
}
const logFile = resolve(values.log ?? join(root, '.chaos', `seed-${seed}-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`));
log(`seed ${seed}, ${draws.length} faults, ${clusters} clusters; replay log: ${logFile} (replay with: npm run chaos -- --replay ${logFile})`);

// Without a running localkube, one of 3 nodes (node faults need more than one) is started for the run.
let owned: LocalKube | undefined;
if (!process.env['LOCALKUBE_STATE_DIR']) {
  const stateDir = join(root, '.localkube-chaos');
  owned = await LocalKube.start({ nodes: 3, stateDir });
  process.env['LOCALKUBE_STATE_DIR'] = stateDir;
}
// The operator as shipped (the integration tests shorten its crash-loop grace to 15 s; this does not): a member
// whose data was wiped is replaced at once on etcd's own words, not after the grace.
const env = await setUpOperator({ crashLoopGraceSeconds: DEFAULT_CRASHLOOP_GRACE_SECONDS });
let failed = true;
try {
  const result = await runChaos(env, {
    seed, draws, clusters,
    // The newest (the clusters' default) first; a version change moves to the previous minor and back.
    versions: [versions.ETCD_VERSIONS.at(-1)!, versions.ETCD_VERSIONS.at(-2)!],
    convergeTimeoutMs: integer('converge-timeout', values['converge-timeout']) * 1000,
    logFile,
    log,
  });
  const times = result.records.flatMap((r: FaultRecord) => (r.convergeSeconds !== undefined ? [r.convergeSeconds] : []));
  const notConverged = result.records.filter((r) => !r.converged);
  report('chaos.faults', result.records.length, 'faults');
  report('chaos.converged', result.records.length - notConverged.length, 'faults');
  report('chaos.converge_p50_s', percentile(times, 0.5), 's');
  report('chaos.converge_p99_s', percentile(times, 0.99), 's');
  report('chaos.acked_writes', result.acknowledged, 'writes');
  report('chaos.lost', result.lost, 'writes');
  report('chaos.corrupted', result.corrupted, 'writes');
  report('chaos.stalls', result.stalls, 'steps');
  for (const r of notConverged) log(`did not converge: fault ${r.fault.index} ${r.fault.kind} ${r.target}: ${r.error}`);
  for (const s of result.stalledSeen) log(`stalled: ${s}`);
  failed = result.lost > 0 || result.corrupted > 0 || result.stalls > 0 || notConverged.length > 0;
  log(failed ? `FAILED: replay with npm run chaos -- --replay ${logFile}` : 'passed');
} finally {
  await env.stop();
  await owned?.stop();
}
process.exitCode = failed ? 1 : 0;
