import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXIT_DONE, EXIT_FAILED, EXIT_USAGE, printAndLoadImages, runCommand, UsageError, type CommandFrame, type CommandIO } from '../../src/index.ts';

function capture(): { io: CommandIO; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return { io: { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) } }, out: () => out, err: () => err };
}

const USAGE = 'usage: quorum widget [--size N]';

function frame(argv: readonly string[], acted: string[]): CommandFrame<{ help: boolean; size: string }> {
  return {
    program: 'quorum widget',
    usage: USAGE,
    parse: () => {
      if (argv.includes('--bogus')) throw new UsageError("Unknown option '--bogus'");
      return { help: argv.includes('--help'), size: argv[1] ?? '1' };
    },
    act: (args) => {
      acted.push(args.size);
      return args.size === 'huge' ? Promise.reject(new Error('no room for a huge widget')) : Promise.resolve();
    },
  };
}

test('runCommand: a usage error prints the message and the usage (2), --help the usage (0), neither acts', async () => {
  const acted: string[] = [];
  let c = capture();
  assert.equal(await runCommand(frame(['--bogus'], acted), c.io), EXIT_USAGE);
  assert.deepEqual([c.out(), c.err()], ['', `quorum widget: Unknown option '--bogus'\n${USAGE}\n`]);
  c = capture();
  assert.equal(await runCommand(frame(['--help'], acted), c.io), EXIT_DONE);
  assert.deepEqual([c.out(), c.err()], [`${USAGE}\n`, '']);
  assert.deepEqual(acted, []);
});

test('runCommand: acts on the parsed arguments (0); a failure is printed in its own words (1); a bug in parse throws', async () => {
  const acted: string[] = [];
  let c = capture();
  assert.equal(await runCommand(frame(['--size', '3'], acted), c.io), EXIT_DONE);
  c = capture();
  assert.equal(await runCommand(frame(['--size', 'huge'], acted), c.io), EXIT_FAILED);
  assert.equal(c.err(), 'quorum widget: no room for a huge widget\n');
  assert.deepEqual(acted, ['3', 'huge']);
  const broken = { ...frame([], acted), parse: (): never => { throw new TypeError('a bug'); } };
  await assert.rejects(runCommand(broken, capture().io), TypeError);
});

test('runCommand: an act that has told its outcome itself resolves with its exit code, printed nothing more', async () => {
  const c = capture();
  const followed: CommandFrame<{ help: boolean }> = {
    program: 'kubectl quorum',
    usage: USAGE,
    parse: () => ({ help: false }),
    act: (_args, io) => {
      io.stdout.write('EtcdBackup team-a/nightly Failed: AccessDenied\n');
      return Promise.resolve(EXIT_FAILED);
    },
  };
  assert.equal(await runCommand(followed, c.io), EXIT_FAILED);
  assert.deepEqual([c.out(), c.err()], ['EtcdBackup team-a/nightly Failed: AccessDenied\n', '']);
});

test('printAndLoadImages: "NAME ARCHIVE" lines on stdout, then COMMAND ARCHIVE through sh for each, its output on stderr', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kit-cli-'));
  try {
    // A path a naive splice into the command text would break: spaces, a quote, a $.
    const archives = [join(dir, "widget 1 it's $HOME.tar"), join(dir, 'widget-2.tar')];
    await writeFile(archives[0]!, 'first archive\n');
    await writeFile(archives[1]!, 'second archive\n');
    const images = [{ name: 'example.com/widget:1', archive: archives[0]! }, { name: 'example.com/widget:2', archive: archives[1]! }];
    let c = capture();
    await printAndLoadImages(images, undefined, c.io);
    assert.deepEqual([c.out(), c.err()], [`example.com/widget:1 ${archives[0]}\nexample.com/widget:2 ${archives[1]}\n`, '']);
    c = capture();
    await printAndLoadImages(images, 'cat', c.io);
    assert.equal(c.out(), `example.com/widget:1 ${archives[0]}\nexample.com/widget:2 ${archives[1]}\n`);
    assert.equal(c.err(), 'first archive\nsecond archive\n');
    await assert.rejects(printAndLoadImages(images, 'false', capture().io), new Error(`--load-with: \`false ${archives[0]}\` exited with 1`));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
