// `npm test`: the whole suite, in lanes (docs/testing.md). From t = 0, side by side: the static checks; the
// etcd builds the unit tests need, then the unit files, several at a time; the builds ahead of what later
// tests need; localkube's lifecycle files (they start their own clusters and assert that nothing of localkube
// is left), then the suite's localkube with what the integration files share (the etcd operator, the storage
// addons). Then the integration files, as many at a time as slots and their declared locks allow, and the
// files that run alone (node and control-plane faults, quiet timing tests), one by one at the end.
// Every file has a timeout; the run always ends with its 15 slowest files and one "N passed, N failed" line,
// and writes every file's duration to .localkube-test/reports/durations.json.
//
//   npm test                                   everything
//   npm test -- --lane integration tls         one lane, only files whose path contains "tls"
//   npm test -- --attach .localkube --lane integration   on a running localkube (left running)
//   npm test -- --slots 2                      fewer files at a time (default: from cores and memory)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cacheRoot } from '@quorum/images';
import { etcdBinaryDir, LocalKube, prepare, versions } from '@quorum/localkube';
import { progress } from '../packages/localkube/src/progress.ts';
import { DeclarationError, parseDeclarations, requireDeclarations, runsAlone } from './test/declarations.ts';
import { describeRun, runPool, type PoolJob, type PoolResult } from './test/pool.ts';
import { stopAllFiles, type FileRun } from './test/run-file.ts';
import { suiteFixtures, type SuiteFixture } from './test/suite-fixtures.ts';

const root = join(import.meta.dirname, '..');
const durationsCache = join(cacheRoot, 'test-durations.json');
const LANES = ['checks', 'unit', 'integration', 'lifecycle'] as const;
type Lane = (typeof LANES)[number];

const { values: args, positionals: filters } = parseArgs({
  allowPositionals: true,
  options: { lane: { type: 'string', multiple: true }, slots: { type: 'string' }, attach: { type: 'string' }, file: { type: 'string', multiple: true }, reports: { type: 'string' } },
});
/** `--file F` runs exactly these files in the one lane named (the harness's own tests run fixtures so). */
const explicitFiles = (args.file ?? []).map((f) => resolve(f));
if (explicitFiles.length > 0 && args.lane?.length !== 1) throw new Error('npm test: --file runs its files in one lane: name it with --lane');
const reports = resolve(args.reports ?? join(root, '.localkube-test', 'reports'));
// On a cluster of someone else's (--attach) the lifecycle files would stop it: they run only when named.
const lanes = new Set<Lane>((args.lane as Lane[] | undefined) ?? LANES.filter((l) => !(args.attach && l === 'lifecycle')));
for (const lane of lanes) if (!LANES.includes(lane)) throw new Error(`npm test: no lane "${lane}" (${LANES.join(', ')})`);

/** Files at a time: 2 per core, at most one per 3 GiB of memory, at least 2 (4 on the 2-core CI machine). */
function defaultSlots(): number {
  return Math.max(2, Math.min(cpus().length * 2, Math.floor(totalmem() / 3 / 2 ** 30)));
}
function slotsSetting(): number {
  const given = args.slots ?? (process.env['QUORUM_TEST_SLOTS'] || undefined);
  if (given === undefined) return defaultSlots();
  if (!/^[1-9]\d*$/.test(given)) throw new Error(`npm test: --slots (or QUORUM_TEST_SLOTS) must be a whole number ≥ 1, got "${given}"`);
  return Number(given);
}
const slots = slotsSetting();
/** Unit files at a time: one more than the cores (many wait on the etcd, MinIO or Azurite they start). */
const unitSlots = Math.max(2, cpus().length + 1);

interface CheckResult {
  label: string;
  seconds: number;
  ok: boolean;
}
const started = performance.now();
const results: (PoolResult & { lane: Lane })[] = [];
const checks: CheckResult[] = [];
/** Failures outside any file (a build, the cluster, a declaration), by what failed. */
const harnessFailures: string[] = [];
const log = (text: string): void => void process.stdout.write(`${text}\n`);

function exec(command: string, argv: string[]): Promise<number> {
  return new Promise((done) => {
    const child = spawn(command, argv, { cwd: root, stdio: 'inherit' });
    child.on('exit', (code) => done(code ?? 1));
    child.on('error', () => done(1));
  });
}

/**
 * The builds ahead (scripts/test/prebuild.ts). At normal priority: unit files wait for helm and Prometheus
 * through the build lock, and a niced build under a busy lane would make them wait past their timeouts.
 */
function killGroup(child: ChildProcess | undefined): void {
  try {
    if (child?.pid && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
  } catch {
    // Already gone.
  }
}

function startPrebuild(): ChildProcess {
  // A group of its own, so that stopping it stops the go builds it started (killPrebuild).
  const child = spawn(process.execPath, [join(root, 'scripts', 'test', 'prebuild.ts')], { cwd: root, stdio: 'inherit', detached: true });
  child.on('exit', (code, signal) => {
    if (code !== 0 && !signal) log('prebuild: some builds failed (the tests that need them say so by name)');
  });
  child.on('error', (err) => log(`prebuild: ${err.message}`));
  return child;
}

async function testFiles(kind: Lane): Promise<string[]> {
  if (explicitFiles.length > 0) return explicitFiles;
  const dirs = (await readdir(join(root, 'packages'))).map((pkg) => join(root, 'packages', pkg, 'test', kind));
  dirs.push(join(root, 'scripts', 'test', kind));
  const files: string[] = [];
  for (const dir of dirs) {
    const names = await readdir(dir).catch(() => [] as string[]);
    files.push(...names.filter((n) => n.endsWith('.test.ts')).sort().map((n) => join(dir, n)));
  }
  return files.filter((f) => filters.length === 0 || filters.some((s) => relative(root, f).includes(s)));
}

/**
 * Each file's duration in the last run on this machine, over the committed baseline (a warm CI run's): a machine
 * with nothing cached still orders its files by how long they take, instead of by name.
 */
async function expectedDurations(): Promise<Record<string, number>> {
  const read = async (file: string): Promise<Record<string, number>> => JSON.parse(await readFile(file, 'utf8').catch(() => '{}')) as Record<string, number>;
  return { ...(await read(join(import.meta.dirname, 'test', 'durations-baseline.json'))), ...(await read(durationsCache)) };
}

async function jobsFor(files: string[], known: Record<string, number>, declared: boolean): Promise<PoolJob[]> {
  const jobs: PoolJob[] = [];
  for (const file of files) {
    const name = relative(root, file);
    try {
      const text = await readFile(file, 'utf8');
      const d = declared ? requireDeclarations(name, text) : parseDeclarations(name, text);
      jobs.push({ file, exclusive: d.exclusive ?? [], shared: d.shared, alone: runsAlone(d), timeoutMs: d.timeoutMs, expectedMs: (known[name] ?? 0) * 1000 });
    } catch (err) {
      if (!(err instanceof DeclarationError)) throw err;
      harnessFailures.push(`${err.message}: not run`);
      log(`✖ ${err.message}: not run`);
    }
  }
  return jobs;
}

async function check(label: string, command: string, argv: string[]): Promise<void> {
  progress(label);
  const t0 = performance.now();
  const ok = (await exec(command, argv)) === 0;
  checks.push({ label, seconds: (performance.now() - t0) / 1000, ok });
  progress(`${label}: ${ok ? 'passed' : 'FAILED'} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

async function staticChecks(): Promise<void> {
  await check('typecheck (tsc --noEmit)', process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', root]);
  await check('lint (eslint)', process.execPath, [join(root, 'node_modules/eslint/bin/eslint.js'), root]);
  await check('API reports (scripts/api-report.ts --check)', process.execPath, [join(root, 'scripts/api-report.ts'), '--check']);
  for (const tool of ['peer-wait', 'member-restore', 'nslookup']) await check(`go test (tools/${tool})`, 'go', ['-C', `tools/${tool}`, 'test', './...']);
}

/** The etcd binaries the unit tests run (test/support/local-etcd.ts), which they do not build themselves. */
async function etcdBinaries(): Promise<void> {
  for (const v of versions.ETCD_VERSIONS) await etcdBinaryDir(v);
}

interface SuiteCluster {
  kube: LocalKube;
  env: NodeJS.ProcessEnv;
  fixtures: SuiteFixture[];
  owned: boolean;
  close: () => Promise<void>;
}

async function suiteCluster(): Promise<SuiteCluster> {
  const stateDir = args.attach ? resolve(args.attach) : join(root, '.localkube-test', 'cluster');
  const kube = args.attach ? await LocalKube.attach(stateDir) : await LocalKube.start({ nodes: 3, stateDir });
  const { fixtures, close } = suiteFixtures(stateDir, kube, progress);
  const cluster: SuiteCluster = { kube, env: { ...baseEnv, LOCALKUBE_STATE_DIR: stateDir }, fixtures, owned: !args.attach, close };
  try {
    // Side by side: each is mostly waiting (images imported into the nodes, a rollout, a server starting).
    const t0 = performance.now();
    const envs = await Promise.all(
      fixtures.map(async (fixture) => {
        const added = await fixture.setUp();
        progress(`suite set-up: ${fixture.label} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
        return added;
      }),
    );
    for (const added of envs) Object.assign(cluster.env, added);
  } catch (err) {
    await stopCluster(cluster);
    throw err;
  }
  return cluster;
}

/** Closes the set-up's connections and stops a cluster the run started, within 3 minutes, whatever happens. */
async function stopCluster(cluster: SuiteCluster): Promise<void> {
  const bounded = async (what: string, work: () => Promise<void>): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('did not end within 3 minutes')), 180_000)));
    try {
      await Promise.race([work(), timeout]);
    } catch (err) {
      harnessFailures.push(`${what}: ${(err as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  };
  await bounded('closing the suite set-up', cluster.close);
  if (cluster.owned) await bounded("stopping the suite's cluster", () => cluster.kube.stop());
}

/** After a file that held a fixture's lock alone: the fixture as the suite set it up, before the lock is free. */
function restoreAfter(cluster: SuiteCluster): (job: PoolJob, run: FileRun) => Promise<void> {
  return async (job, run) => {
    for (const fixture of cluster.fixtures.filter((f) => job.exclusive.includes(f.lock))) {
      const t0 = performance.now();
      if (!(await fixture.restore(run.failed > 0))) continue;
      progress(`put back after ${relative(root, job.file)}: ${fixture.label} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    }
  };
}

async function lane(name: Lane, jobs: PoolJob[], poolSlots: number, env: NodeJS.ProcessEnv, afterFile?: (job: PoolJob, run: FileRun) => Promise<void>): Promise<void> {
  if (jobs.length === 0) return;
  progress(`${name}: ${jobs.length} file(s), ${poolSlots} at a time`);
  const t0 = performance.now();
  for (const r of await runPool(jobs, { root, reports, slots: poolSlots, env, log, ...(afterFile ? { afterFile } : {}) })) results.push({ ...r, lane: name });
  progress(`${name}: done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

// ---- the run ----
/** The environment the files get, as the harness was started (the suite's set-up adds to a copy for integration files). */
const baseEnv: NodeJS.ProcessEnv = { ...process.env };
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    // Each file runs in a process group of its own, which a signal to the harness does not reach.
    stopAllFiles('SIGTERM');
    killGroup(prebuild);
    setTimeout(() => {
      stopAllFiles('SIGKILL');
      process.exit(130);
    }, 5000).unref();
  });
}
await rm(reports, { recursive: true, force: true });
await mkdir(reports, { recursive: true });
const known = await expectedDurations();
const unitJobs = lanes.has('unit') ? await jobsFor(await testFiles('unit'), known, false) : [];
const integrationJobs = lanes.has('integration') ? await jobsFor(await testFiles('integration'), known, true) : [];
const lifecycleJobs = lanes.has('lifecycle') ? await jobsFor(await testFiles('lifecycle'), known, false) : [];

const focused = filters.length > 0 || explicitFiles.length > 0;
const checking = lanes.has('checks') && !focused ? staticChecks() : Promise.resolve();
const prebuild = !focused && (lanes.has('unit') || lanes.has('integration')) ? startPrebuild() : undefined;
// The lifecycle files start and stop clusters of their own and check that nothing of localkube is left on the
// machine, so they run before the suite's cluster starts, beside the unit files (which start no cluster).
// Both need localkube's binaries and images: built here first, in the harness, so that a cold machine's builds
// (Kubernetes alone takes minutes) do not count against a lifecycle file's timeout.
const clusterReady = (async (): Promise<SuiteCluster | undefined> => {
  if (lifecycleJobs.length > 0 || integrationJobs.length > 0) await prepare();
  await lane('lifecycle', lifecycleJobs, 1, baseEnv);
  return integrationJobs.length > 0 ? suiteCluster() : undefined;
})();
clusterReady.catch(() => undefined); // awaited below; its failure is reported there

if (unitJobs.length > 0) {
  if (explicitFiles.length === 0) await etcdBinaries().catch((err: Error) => harnessFailures.push(`the etcd builds the unit tests need: ${err.message}`));
  await lane('unit', unitJobs, unitSlots, baseEnv);
}
await checking;

if (integrationJobs.length > 0) {
  let cluster: SuiteCluster | undefined;
  try {
    cluster = await clusterReady;
    if (!cluster) throw new Error('not started');
    const after = restoreAfter(cluster);
    await lane('integration', integrationJobs.filter((j) => !j.alone), slots, cluster.env, after);
    await lane('integration', integrationJobs.filter((j) => j.alone), 1, cluster.env, after);
  } catch (err) {
    harnessFailures.push(`the suite's cluster: ${(err as Error).message}`);
    log(`✖ the suite's cluster: ${(err as Error).message}`);
  } finally {
    if (cluster) await stopCluster(cluster);
  }
}
await clusterReady.catch(() => undefined); // the lifecycle lane, when no integration file runs
// What is still building ahead is needed by no file any more.
killGroup(prebuild);

// ---- the report ----
const wallSeconds = (performance.now() - started) / 1000;
const byName = (r: { file: string }): string => relative(root, r.file);
const failedFiles = results.filter((r) => r.failed > 0 || r.problem);
const passed = results.reduce((n, r) => n + r.passed, 0) + checks.filter((c) => c.ok).length;
const failed = results.reduce((n, r) => n + r.failed + (r.problem ? 1 : 0), 0) + checks.filter((c) => !c.ok).length + harnessFailures.length;
const environmentSkips = results.flatMap((r) => r.environmentSkips.map((s) => `${byName(r)}: ${s}`));

await writeFile(
  join(reports, 'durations.json'),
  `${JSON.stringify({ wallSeconds: Math.round(wallSeconds), slots, checks, files: results.map((r) => ({ file: byName(r), lane: r.lane, seconds: Number(r.seconds.toFixed(1)), passed: r.passed, failed: r.failed, timedOut: r.timedOut })).sort((a, b) => b.seconds - a.seconds) }, null, 2)}\n`,
);
// Next run's order (longest first), kept outside the clone so a fresh clone on this machine has it too.
await mkdir(cacheRoot, { recursive: true });
if (explicitFiles.length === 0) await writeFile(durationsCache, `${JSON.stringify({ ...known, ...Object.fromEntries(results.map((r) => [byName(r), Math.round(r.seconds)])) }, null, 2)}\n`);

log('\n── the 15 slowest files ──');
for (const r of [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 15)) log(`${r.seconds.toFixed(1).padStart(8)} s  ${r.lane.padEnd(11)} ${byName(r)}`);
log(`── durations of all ${results.length} files: ${relative(root, join(reports, 'durations.json'))}; wall time ${wallSeconds.toFixed(0)} s ──`);
if (environmentSkips.length > 0) log(`\nskipped for the environment (not counted as failed):\n${environmentSkips.map((s) => `  - ${s}`).join('\n')}`);
const unexplained = results.flatMap((r) => r.unexplainedSkips.map((s) => `${byName(r)}: ${s}`));
if (unexplained.length > 0) log(`\nskipped without an "environment:" reason (counted as failed):\n${unexplained.map((s) => `  - ${s}`).join('\n')}`);
// Why each failed, repeated here at the end: CI may keep only the run's last lines.
for (const r of failedFiles.slice(0, 4)) {
  const why = await failureExcerpt(r.log);
  if (why) log(`\n── why ${byName(r)} failed (from its log) ──\n${why}`);
}
if (failedFiles.length > 0 || harnessFailures.length > 0 || checks.some((c) => !c.ok)) {
  log('\nfailed:');
  for (const c of checks.filter((x) => !x.ok)) log(`  - ${c.label}`);
  for (const r of failedFiles) log(`  - ${describeRun(root, r)}${r.problem ? `; ${r.problem}` : ''} (log: ${relative(root, r.log)})`);
  for (const h of harnessFailures) log(`  - ${h}`);
}
process.stdout.write(`\n${passed} passed, ${failed} failed, ${environmentSkips.length} skipped for the environment\n`);
process.exitCode = failed > 0 ? 1 : 0;

/** The node:test "failing tests" section of a file's log (the errors and where they were thrown), bounded. */
async function failureExcerpt(logFile: string): Promise<string> {
  const text = await readFile(logFile, 'utf8').catch(() => '');
  const at = text.lastIndexOf('failing tests:');
  if (at < 0) return '';
  const lines = text.slice(at).split('\n').filter((l) => !l.includes('(node:internal/'));
  return lines.slice(1, 31).join('\n').trimEnd();
}

