// `quorum` and `kubectl quorum` as composed from this repository's operators: the help lists every command
// each operator exports, under its operator; a command line reaches the operator's own command (its usage
// errors and help, not the CLI's); nothing here needs a cluster. The launchers in bin/ run the same.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { commands as etcdCommands, kubectlCommands } from '@quorum/etcd-operator';
import { commands as recorderCommands, HISTORY_USAGE } from '@quorum/recorder';
import type { CommandIO } from '../../src/command.ts';
import { kubectlQuorumCli } from '../../src/kubectl-quorum.ts';
import { quorumCli } from '../../src/quorum.ts';

async function run(cli: { run(argv: readonly string[], io: CommandIO): Promise<number> }, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await cli.run(argv, { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) }, env: {} });
  return { code, out, err };
}

/** The names listed under a group's title in the help, up to the next blank line. */
function listedUnder(help: string, title: string): string[] {
  const start = help.indexOf(`\n${title}:\n`);
  assert.ok(start >= 0, `the help has a group "${title}":\n${help}`);
  const block = help.slice(start + title.length + 3).split('\n\n')[0]!;
  return block.split('\n').filter((l) => /^ {2}\S/.test(l)).map((l) => l.trim().split(' ')[0]!);
}

test("quorum --help lists every operator's commands under its operator", async () => {
  const r = await run(quorumCli, ['--help']);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(listedUnder(r.out, 'etcd operator (docs/operations.md)'), etcdCommands.map((c) => c.name));
  assert.deepEqual(listedUnder(r.out, 'change recorder (docs/recorder.md)'), recorderCommands.map((c) => c.name));
  assert.deepEqual(etcdCommands.map((c) => c.name), ['manifests', 'install', 'uninstall', 'image']);
  assert.deepEqual(recorderCommands.map((c) => c.name), ['history']);
});

test("kubectl quorum --help lists the operators' plugin commands", async () => {
  const r = await run(kubectlQuorumCli, ['--help']);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(listedUnder(r.out, 'etcd operator (docs/kubectl-plugin.md)'), kubectlCommands.map((c) => c.name));
  assert.deepEqual(kubectlCommands.map((c) => c.name), ['status', 'members', 'backup', 'restore']);
});

test("quorum history --help is the recorder's own help", async () => {
  for (const argv of [['history', '--help'], ['history', '-h'], ['help', 'history'], ['history']]) {
    const r = await run(quorumCli, argv);
    assert.deepEqual(r, { code: 0, out: `${HISTORY_USAGE}\n`, err: '' }, argv.join(' '));
  }
});

test('an unknown command exits 2 and names the commands there are', async () => {
  const r = await run(quorumCli, ['histroy', 'list']);
  assert.equal(r.code, 2);
  assert.equal(r.out, '');
  assert.match(r.err, /^quorum: unknown command "histroy": one of manifests, install, uninstall, image, history, rbac, redis\nusage: quorum <command>/);
  const k = await run(kubectlQuorumCli, ['-n', 'prod', 'describe', 'db']);
  assert.equal(k.code, 2);
  assert.match(k.err, /^kubectl quorum: unknown command "describe": one of status, members, backup, restore, access\n/);
});

test("a command's own mistakes are its own: usage and exit 2 from the operator's command", async () => {
  let r = await run(quorumCli, ['install', '--replicas', 'three']);
  assert.equal(r.code, 2);
  assert.match(r.err, /^quorum install: --replicas three: not a whole number\nusage: quorum manifests\|install\|uninstall/);
  r = await run(quorumCli, ['image', '--load', '.localkube']);
  assert.equal(r.code, 2);
  assert.match(r.err, /^quorum image: Unknown option '--load'.*\nusage: quorum image .*--load-with COMMAND/s);
  r = await run(quorumCli, ['history', 'show']);
  assert.equal(r.code, 2);
  assert.match(r.err, /^quorum history: show needs KIND\/NAME/);
  // kubectl's -n before the command goes to the plugin with the rest, which parses the whole line.
  const k = await run(kubectlQuorumCli, ['-n', 'prod', 'members']);
  assert.equal(k.code, 2);
  assert.match(k.err, /^kubectl quorum: members needs the cluster/);
});

test('quorum manifests renders the operator without a cluster, with the options given', async () => {
  const r = await run(quorumCli, ['manifests', '--namespace', 'ops', '--replicas', '1', '--no-webhooks']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^kind: Deployment$/m);
  assert.match(r.out, /^ {2}namespace: ops$/m);
  assert.doesNotMatch(r.out, /ValidatingWebhookConfiguration/);
});

test('the launchers in bin/ run the composed CLIs', async () => {
  const bin = join(import.meta.dirname, '..', '..', 'bin');
  const quorum = await promisify(execFile)(join(bin, 'quorum'), ['--help']);
  assert.match(quorum.stdout, /^usage: quorum <command>[\s\S]*\n {2}history /);
  const plugin = await promisify(execFile)(join(bin, 'kubectl-quorum'), ['help']);
  assert.match(plugin.stdout, /^usage: kubectl quorum <command>[\s\S]*\n {2}backup CLUSTER/);
});
