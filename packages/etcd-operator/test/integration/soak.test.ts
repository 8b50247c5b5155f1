// The soak of issue 7: many clusters bootstrapped at once (the load under which every bootstrap logged
// `peer became inactive` and one in 17 scale-ups stalled), each scaled 3 → 5 → 3 twice. Every cluster must
// converge within its phase's bound, and no step may go 60 s without progress (the operator runs with
// STEP_DEADLINE_SECONDS=60, so such a step is a StepStalled event). QUORUM_SOAK_CLUSTERS sets the count:
// 6 in `npm test` (CI has two cores and 90 minutes for everything); `npm run bench -- etcd` soaks the 12
// clusters the issue asks for and reports the figures.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive operator
// @quiet: no step may stall for 60 s under load, and it is itself a heavy load
// @timeout 75m: the soak itself is bounded at 60 minutes
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestEnv } from '@quorum/localkube/testing';
import { percentile, runSoak } from '../support/soak.ts';
import { setUpOperator } from './support.ts';

const CLUSTERS = Number(process.env['QUORUM_SOAK_CLUSTERS'] ?? 6);
const ROUNDS = 2;
// Each phase (bootstrap, and each 3 → 5 and 5 → 3) is bounded by runSoak at 10 min; the test's own bound
// only backs those up (five phases, the log reads and the operator's install).
const TEST_TIMEOUT_MS = 60 * 60_000;

let env: TestEnv;

before(async () => {
  env = await setUpOperator({ stepDeadlineSeconds: 60 });
});
after(async () => {
  await env.stop();
});

test(`${CLUSTERS} clusters bootstrap at once and scale 3 → 5 → 3 ${ROUNDS} times: all converge, no step stalls`, { timeout: TEST_TIMEOUT_MS }, async (t) => {
  // Progress goes to stderr as it happens: diagnostics are printed only once the test ends.
  const r = await runSoak(env, { clusters: CLUSTERS, rounds: ROUNDS, log: (m) => void process.stderr.write(`[soak] ${m}\n`) });

  const s = (xs: number[], p: number): string => percentile(xs, p).toFixed(1);
  t.diagnostic(`clusters ${CLUSTERS}, rounds ${ROUNDS}, namespace ${r.namespace}`);
  t.diagnostic(`bootstrap → 3: p50 ${s(r.bootstrapSeconds, 0.5)} s, max ${s(r.bootstrapSeconds, 1)} s`);
  t.diagnostic(`3 → 5: p50 ${s(r.scale35Seconds, 0.5)} s, p99 ${s(r.scale35Seconds, 0.99)} s, max ${s(r.scale35Seconds, 1)} s (n=${r.scale35Seconds.length})`);
  t.diagnostic(`5 → 3: p50 ${s(r.scale53Seconds, 0.5)} s, p99 ${s(r.scale53Seconds, 0.99)} s`);
  t.diagnostic(`StepStalled ${r.stalledSteps}, StepRetrying ${r.retryingSteps}, events complete: ${r.eventsComplete}`);
  for (const w of r.warnings) t.diagnostic(`  ${w.cluster} ${w.reason} ×${w.count}: ${w.note}`);
  if (r.longestStep) t.diagnostic(`longest step seen: ${r.longestStep.cluster} ${r.longestStep.name} ${r.longestStep.seconds} s${r.longestStep.lastError ? ` (${r.longestStep.lastError})` : ''}`);
  t.diagnostic(`peer became inactive: ${r.peerInactiveEvents} lines in ${r.podsLogged} member pods; by cluster ${JSON.stringify(r.peerInactiveByCluster)}`);

  assert.equal(r.scale35Seconds.length, CLUSTERS * ROUNDS, 'a 3 → 5 time for every cluster and round');
  // Absence is only asserted once the event list is known to be complete (every scale-down's MemberRemoved is in it).
  assert.ok(r.eventsComplete, 'every MemberRemoved event of the scale-downs was recorded');
  const stalled = r.warnings.filter((w) => w.reason === 'StepStalled').map((w) => `${w.cluster}: ${w.note}`);
  assert.equal(r.stalledSteps, 0, `steps stalled for more than 60 s:\n${stalled.join('\n')}`);
  assert.deepEqual(r.stalledObserved, [], 'no status showed a stalled step');
});
