// What the tests that act as a user outside the repository share (packed-package.test.ts, the tutorial's
// integration test): `npm pack` of a workspace package, and commands run with a user's environment.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
export const repoRoot = resolve(import.meta.dirname, '..', '..', '..');

/** npm's JSON report of one packed tarball. */
export interface Packed {
  name: string;
  filename: string;
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: { path: string }[];
}

/**
 * A user's shell: none of `npm test`'s own npm_* variables (they would steer the inner npm), no
 * NODE_OPTIONS (it carries the repository's --conditions=@quorum/source) and no test-runner context.
 */
export function userEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) || key === 'NODE_OPTIONS' || key === 'NODE_TEST_CONTEXT' || key === 'INIT_CWD') continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/** Runs a command in a user's environment (plus `extra`); its stdout, or an error with both outputs. */
export async function run(command: string, args: string[], cwd: string, extra: NodeJS.ProcessEnv = {}): Promise<string> {
  try {
    const { stdout } = await execFileAsync(command, args, { cwd, env: userEnv(extra), maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) failed:\n${stdout ?? ''}\n${stderr ?? ''}`, { cause: err });
  }
}

/** `npm pack` of one workspace package (`runtime`, `storage`) into `dest`; npm's JSON report of it. */
export async function pack(pkg: string, dest: string): Promise<Packed> {
  const out = await run('npm', ['pack', '--json', '--pack-destination', dest], join(repoRoot, 'packages', pkg));
  // The prepack build's own lines may precede the JSON.
  const [report] = JSON.parse(out.slice(out.indexOf('['))) as Packed[];
  assert.ok(report, `npm pack of ${pkg} reported nothing`);
  return report;
}

/** Removes the dist/ that `npm pack` built: the repository runs on src/. */
export async function removeBuild(pkg: string): Promise<void> {
  await rm(join(repoRoot, 'packages', pkg, 'dist'), { recursive: true, force: true });
}
