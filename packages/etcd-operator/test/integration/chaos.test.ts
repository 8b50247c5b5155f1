// The chaos suite's short seed (issue 10): `npm run chaos -- --faults 14 --seed 1`, the command itself, on
// the suite's localkube. Faults are dealt from shuffled decks of all 14 kinds (chaos/sequence.ts), so one
// deck of 14 hits every kind exactly once, whatever the seed (the suite's time is a budget: issue 19; the
// long runs of docs/reliability.md deal many decks). It must end with every fault converged, no acknowledged
// write lost or corrupted, and no step stalled.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive nodes control-plane operator
// @timeout 75m: the chaos run itself is bounded at 60 minutes
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { drawFaults, FAULT_KINDS } from '../../chaos/sequence.ts';

const root = join(import.meta.dirname, '..', '..', '..', '..');
/** One whole deck: every fault kind once. */
const FAULTS = FAULT_KINDS.length;

test(`npm run chaos -- --faults ${FAULTS} --seed 1: every fault converges, no acknowledged write lost or corrupted, no step stalled`, { timeout: 60 * 60_000 }, async (t) => {
  const figures = new Map<string, number>();
  const code = await new Promise<number>((resolve) => {
    // What `npm run chaos` runs (package.json), with the suite's localkube from LOCALKUBE_STATE_DIR.
    const child = spawn('bash', ['scripts/node24', 'packages/etcd-operator/chaos/main.ts', '--faults', String(FAULTS), '--seed', '1'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        const figure = JSON.parse(line) as { bench: string; value: number; unit: string };
        figures.set(figure.bench, figure.value);
        t.diagnostic(line);
      }
    });
    child.on('exit', (c) => resolve(c ?? 1));
  });
  assert.deepEqual(new Set(drawFaults({ seed: 1, faults: FAULTS, clusters: 3 }).map((f) => f.kind)), new Set(FAULT_KINDS), 'the deck holds every kind');
  assert.equal(figures.get('chaos.faults'), FAULTS, 'every figure printed');
  assert.equal(figures.get('chaos.converged'), FAULTS, 'every fault converged within its bound');
  assert.equal(figures.get('chaos.lost'), 0, 'no acknowledged write lost');
  assert.equal(figures.get('chaos.corrupted'), 0, 'no write corrupted');
  assert.equal(figures.get('chaos.stalls'), 0, 'no step stalled');
  assert.ok((figures.get('chaos.acked_writes') ?? 0) > 1000, `the data checkers wrote throughout (${figures.get('chaos.acked_writes')} acknowledged)`);
  assert.ok(Number.isFinite(figures.get('chaos.converge_p50_s')) && Number.isFinite(figures.get('chaos.converge_p99_s')));
  assert.equal(code, 0, 'npm run chaos exits 0');
});
