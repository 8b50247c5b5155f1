// `npm test`: static checks, unit tests, localkube's lifecycle tests (each starts its own cluster), then
// every integration test against one shared localkube cluster. Ends with one "N passed, N failed" line.
import { spawn } from 'node:child_process';
import { mkdir, readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { LocalKube } from '../packages/localkube/src/index.ts';
import { progress } from '../packages/localkube/src/progress.ts';

const root = join(import.meta.dirname, '..');
const reports = join(root, '.localkube-test', 'reports');
const totals = { passed: 0, failed: 0, skipped: 0 };

function exec(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env, stdio: 'inherit' });
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

async function testFiles(kind: string): Promise<string[]> {
  const files: string[] = [];
  for (const pkg of await readdir(join(root, 'packages'))) {
    const dir = join(root, 'packages', pkg, 'test', kind);
    const names = await readdir(dir).catch(() => [] as string[]);
    files.push(...names.filter((n) => n.endsWith('.test.ts')).sort().map((n) => join(dir, n)));
  }
  return files;
}

/** Runs node:test over `files` one file at a time; counts come from a TAP copy of the report. */
async function nodeTest(label: string, files: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (files.length === 0) return;
  progress(`${label}: ${files.length} file(s)`);
  const tap = join(reports, `${label.replace(/\W+/g, '-')}.tap`);
  await exec(process.execPath, ['--test', '--test-concurrency=1', '--test-reporter=spec', '--test-reporter-destination=stdout', '--test-reporter=tap', `--test-reporter-destination=${tap}`, ...files], env);
  const report = await readFile(tap, 'utf8').catch(() => '');
  const count = (name: string): number => Number([...report.matchAll(new RegExp(`^# ${name} (\\d+)$`, 'gm'))].at(-1)?.[1] ?? 0);
  totals.passed += count('pass');
  totals.failed += count('fail') + count('cancelled');
  totals.skipped += count('skipped');
  if (!report) totals.failed += 1;
}

async function check(label: string, command: string, args: string[]): Promise<void> {
  progress(label);
  const code = await exec(command, args);
  if (code === 0) totals.passed++;
  else totals.failed++;
}

await rm(reports, { recursive: true, force: true });
await mkdir(reports, { recursive: true });
await check('typecheck (tsc --noEmit)', process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', root]);
await check('lint (eslint)', process.execPath, [join(root, 'node_modules/eslint/bin/eslint.js'), root]);
await check('go test (tools/peer-wait)', 'go', ['-C', 'tools/peer-wait', 'test', './...']);
await check('go test (tools/member-restore)', 'go', ['-C', 'tools/member-restore', 'test', './...']);
await check('go test (tools/nslookup)', 'go', ['-C', 'tools/nslookup', 'test', './...']);
await nodeTest('unit', await testFiles('unit'));
await nodeTest('lifecycle', await testFiles('lifecycle'));

const integration = await testFiles('integration');
if (integration.length > 0) {
  const stateDir = join(root, '.localkube-test', 'cluster');
  let kube: LocalKube | undefined;
  try {
    kube = await LocalKube.start({ nodes: 3, stateDir });
    // Fault-injecting files go last: they disturb nodes the others rely on.
    const faulty = (f: string): boolean => /node-failure|fault|chaos|cluster-lifecycle|operator-crash/.test(f);
    const env = { ...process.env, LOCALKUBE_STATE_DIR: stateDir };
    await nodeTest('integration', integration.filter((f) => !faulty(f)), env);
    await nodeTest('integration (faults)', integration.filter(faulty), env);
  } catch (err) {
    process.stderr.write(`integration cluster: ${(err as Error).message}\n`);
    totals.failed++;
  } finally {
    await kube?.stop();
  }
}

process.stdout.write(`\n${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`);
process.exitCode = totals.failed > 0 ? 1 : 0;
