// The test harness itself: declarations, the scheduler's choices, skips that count, and a hung file that
// fails by name at its timeout while the run still prints its summary line.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { DEFAULT_TIMEOUT_MS, DeclarationError, parseDeclarations, requireDeclarations, runsAlone } from '../declarations.ts';
import { runFile } from '../run-file.ts';
import { conflict, inPriorityOrder, nextJob, type Job } from '../schedule.ts';
import { countTap } from '../tap.ts';

const root = join(import.meta.dirname, '..', '..', '..');
const fixtures = join(import.meta.dirname, '..', 'fixtures');

test('declarations: locks held alone and shared, a timeout with its reason, quiet', () => {
  const d = parseDeclarations('a.test.ts', '// header\n// @exclusive operator addons/s3\n// @shared addons/gcs\n// @timeout 25m: five rollouts of 5 minutes\nimport x;\n');
  assert.deepEqual(d, { exclusive: ['operator', 'addons/s3'], shared: ['addons/gcs'], timeoutMs: 25 * 60_000, timeoutReason: 'five rollouts of 5 minutes' });
  assert.deepEqual(parseDeclarations('b', '// @exclusive none').exclusive, []);
  assert.equal(parseDeclarations('c', '').timeoutMs, DEFAULT_TIMEOUT_MS);
  assert.equal(runsAlone(parseDeclarations('d', '// @exclusive nodes')), true);
  assert.equal(runsAlone(parseDeclarations('e', '// @exclusive none\n// @quiet: measures a handover')), true);
  assert.equal(runsAlone(parseDeclarations('f', '// @exclusive operator')), false);
});

test('declarations: mistakes are refused with the file named', () => {
  const refused = (text: string, message: RegExp): void => assert.throws(() => parseDeclarations('x.test.ts', text), (err: Error) => err instanceof DeclarationError && message.test(err.message));
  refused('// @exclusive', /x\.test\.ts: @exclusive names no lock/);
  refused('// @timeout 20m', /@timeout needs a reason/);
  refused('// @timeout soon: why', /@timeout wants a duration/);
  refused('// @quiet', /@quiet needs a reason/);
  refused('// @exclusive Operator', /invalid lock "Operator"/);
  refused('// @exclusive operator\n// @shared operator', /operator both @exclusive and @shared/);
});

test('every integration file in the repository declares what it needs alone', async () => {
  const files: string[] = [];
  for (const pkg of await readdir(join(root, 'packages'))) {
    const dir = join(root, 'packages', pkg, 'test', 'integration');
    for (const name of await readdir(dir).catch(() => [] as string[])) if (name.endsWith('.test.ts')) files.push(join(dir, name));
  }
  assert.ok(files.length >= 30, `found ${files.length} integration files`);
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    const declared = requireDeclarations(relative(root, file), text);
    // The suite's etcd operator is one for every file: a file that uses it says so, or it may run while a
    // holder uninstalls or replaces it (validation.test.ts ran beside uninstall.test.ts before it did).
    if (/\bsetUpOperator\(/.test(text)) {
      assert.ok([...(declared.exclusive ?? []), ...declared.shared].includes('operator'), `${relative(root, file)} calls setUpOperator() but declares neither @exclusive nor @shared operator`);
    }
  }
});

test('a file without a declaration is refused by name', async () => {
  const file = join(fixtures, 'undeclared.fixture.ts');
  assert.throws(() => requireDeclarations('undeclared.fixture.ts', ''), /undeclared\.fixture\.ts: no "\/\/ @exclusive" line/);
  await assert.rejects(async () => requireDeclarations(relative(root, file), await readFile(file, 'utf8')), DeclarationError);
});

const job = (file: string, exclusive: string[] = [], shared: string[] = [], extra: Partial<Job> = {}): Job => ({ file, exclusive, shared, alone: false, expectedMs: 0, ...extra });

test('schedule: locks, slots, files that run alone, and no starvation of a file waiting to hold a lock alone', () => {
  assert.equal(conflict(job('a', ['operator']), job('b', [], ['operator'])), true);
  assert.equal(conflict(job('a', [], ['operator']), job('b', [], ['operator'])), false);
  assert.equal(conflict(job('a', ['recorder']), job('b', ['operator'])), false);

  const user1 = job('user1', [], ['operator']);
  const user2 = job('user2', [], ['operator']);
  const holder = job('holder', ['operator']);
  const free = job('free');
  // The holder conflicts with the most files: first in priority; users may not overtake it while it waits.
  const waiting = inPriorityOrder([user1, free, user2, holder]);
  assert.deepEqual(waiting, [holder, user1, user2, free]);
  assert.equal(nextJob(waiting, [], 4), holder);
  assert.equal(nextJob([user1, user2, free], [holder], 4), free, 'users of the lock wait while it is held');
  assert.equal(nextJob([holder, user2, free], [user1], 4), free, 'a waiting holder reserves its lock');
  assert.equal(nextJob([user1, user2], [], 4), user1);
  assert.equal(nextJob([user2], [user1], 2), user2);
  assert.equal(nextJob([user2], [user1, free], 2), undefined, 'no free slot');

  const fault = job('fault', ['nodes'], [], { alone: true });
  assert.equal(nextJob([fault, free], [], 4), free, 'files that run alone go after the others');
  assert.equal(nextJob([fault], [free], 4), undefined, 'and only with nothing else running');
  assert.equal(nextJob([fault, job('quiet', [], [], { alone: true })], [], 4), fault);
  assert.equal(nextJob([free], [fault], 4), undefined);

  const long = job('long', [], [], { expectedMs: 600_000 });
  assert.deepEqual(inPriorityOrder([free, long]), [long, free], 'longest first among equals');

  // With durations: a chain of three files holding one lock alone (3 × 100 s) outweighs a free file of 200 s,
  // so it starts first instead of running one after another at the end; a user of the operator weighs itself
  // and the holder it waits for.
  const chain = ['r1', 'r2', 'r3'].map((f) => job(f, ['redis-operator'], [], { expectedMs: 100_000 }));
  const free200 = job('free200', [], [], { expectedMs: 200_000 });
  const holder50 = job('holder50', ['operator'], [], { expectedMs: 50_000 });
  const user300 = job('user300', [], ['operator'], { expectedMs: 300_000 });
  const user10 = job('user10', [], ['operator'], { expectedMs: 10_000 });
  assert.deepEqual(inPriorityOrder([free200, ...chain, user10, user300, holder50]).map((j) => j.file), ['holder50', 'user300', 'r1', 'r2', 'r3', 'free200', 'user10']);
  const faultLong = job('fault-long', ['nodes', 'operator'], [], { alone: true, expectedMs: 900_000 });
  assert.equal(inPriorityOrder([user10, free200, faultLong]).filter((j) => !j.alone)[0], free200, 'files that run alone add no weight to those that run together');
});

test('schedule: a short file fills a slot ahead of a reservation only when it ends before the reserving file could start', () => {
  const holder = job('holder', ['operator'], [], { expectedMs: 100_000 });
  const outage = job('outage', ['addons/s3'], ['operator'], { expectedMs: 45_000 });
  const short = job('short', [], ['addons/s3'], { expectedMs: 40_000 });
  const long = job('long', [], ['addons/s3'], { expectedMs: 90_000 });
  const unknown = job('unknown', [], ['addons/s3']);
  // outage waits for the running holder (100 s left), so it reserves addons/s3 for at least 100 s.
  assert.equal(nextJob([outage, short], [{ ...holder, remainingMs: 100_000 }], 4), short, '40 s × 1.5 ends before the holder does');
  assert.equal(nextJob([outage, long], [{ ...holder, remainingMs: 100_000 }], 4), undefined, '90 s × 1.5 would delay the reserving file');
  assert.equal(nextJob([outage, short], [{ ...holder, remainingMs: 30_000 }], 4), undefined, 'the holder ends too soon');
  assert.equal(nextJob([outage, unknown], [{ ...holder, remainingMs: 100_000 }], 4), undefined, 'a file of unknown duration never backfills');
  assert.equal(nextJob([outage, short], [holder], 4), undefined, 'a running file of unknown duration leaves nothing to backfill');
});

test('TAP counts: a skip with an environment reason is reported; any other skip fails', () => {
  const report = ['ok 1 - a', 'ok 2 - b # SKIP environment: no openssl', 'ok 3 - c # SKIP flaky', '# pass 1', '# fail 0', '# cancelled 0', '# skipped 2'].join('\n');
  const counts = countTap(report);
  assert.equal(counts.passed, 1);
  assert.equal(counts.failed, 1);
  assert.deepEqual(counts.environmentSkips, ['b: environment: no openssl']);
  assert.deepEqual(counts.unexplainedSkips, ['c: flaky']);
  assert.deepEqual(countTap('ok 1 - a\nnot ok 2 - b\n'), { passed: 1, failed: 1, environmentSkips: [], unexplainedSkips: [], complete: false });
});

test('a real file with both kinds of skip', async () => {
  const reports = await mkdtemp(join(tmpdir(), 'harness-'));
  try {
    const run = await runFile(join(fixtures, 'skips.fixture.ts'), { root, reports, timeoutMs: 60_000 });
    assert.equal(run.passed, 1);
    assert.equal(run.failed, 1, 'the skip without an environment reason');
    assert.match(run.environmentSkips.join(), /the tool is not installed/);
  } finally {
    await rm(reports, { recursive: true, force: true });
  }
});

test('a hung file fails by name within its timeout, and the run still prints its summary line', async () => {
  const reports = await mkdtemp(join(tmpdir(), 'harness-'));
  try {
    const child = spawn(process.execPath, [join(root, 'scripts', 'test.ts'), '--lane', 'unit', '--file', join(fixtures, 'hung.fixture.ts'), '--reports', reports], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    // The summary is the last line of stdout; progress goes to stderr, and the order in which two pipes are read
    // is not the order they were written in: each is kept apart too.
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const t0 = performance.now();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const seconds = (performance.now() - t0) / 1000;
    assert.equal(code, 1, out);
    assert.match(out, /✖ scripts\/test\/fixtures\/hung\.fixture\.ts in [\d.]+ s \(\d+ passed, \d+ failed, TIMED OUT\)/, out);
    assert.match(out, /failed:\n {2}- ✖ scripts\/test\/fixtures\/hung\.fixture\.ts/, out);
    assert.match(stdout, /\n\d+ passed, [1-9]\d* failed, 0 skipped for the environment\n$/, out);
    // The 3 s timeout, SIGTERM's grace and start-up; far below the 10-minute default.
    assert.ok(seconds < 60, `took ${seconds.toFixed(1)} s`);
    const durations = JSON.parse(await readFile(join(reports, 'durations.json'), 'utf8')) as { files: { file: string; timedOut: boolean }[] };
    assert.deepEqual(durations.files.map((f) => [f.file, f.timedOut]), [['scripts/test/fixtures/hung.fixture.ts', true]]);
  } finally {
    await rm(reports, { recursive: true, force: true });
  }
});
