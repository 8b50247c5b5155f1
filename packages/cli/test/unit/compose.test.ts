// The composition of operators' commands into one CLI, with commands of its own making: which command a
// command line reaches and with what arguments, the help that lists every command by operator, and the
// exit code 2 with a message that names the mistake when no command matches.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EXIT_USAGE } from '@quorum/kit';
import { Cli, commandWordIndex } from '../../src/compose.ts';
import type { Command, CommandIO } from '../../src/command.ts';

/** A command that records the arguments it was run with and exits with `code`. */
function recording(name: string, calls: string[][], code = 0, extra: Partial<Command> = {}): Command {
  return {
    name,
    summary: `the ${name} command`,
    ...extra,
    run: (argv) => {
      calls.push([name, ...argv]);
      return Promise.resolve(code);
    },
  };
}

function capture(): { io: CommandIO; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return { io: { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) } }, out: () => out, err: () => err };
}

function twoOperators(calls: string[][]): Cli {
  return new Cli({
    program: 'demo',
    groups: [
      { title: 'alpha operator', commands: [recording('install', calls), recording('image', calls, 0, { synopsis: '[--load-with A-VERY-LONG-COMMAND]', summary: 'builds\nand loads' })] },
      { title: 'beta operator', commands: [recording('history', calls, 1)] },
    ],
    leadingValueFlags: ['-n', '--namespace', '--kubeconfig'],
    footer: 'demo <command> --help: its options',
  });
}

test('the help lists every command under its operator, summaries beside short names and below long ones', () => {
  const help = twoOperators([]).help();
  assert.equal(
    help,
    [
      'usage: demo <command> [options]',
      '',
      'alpha operator:',
      '  install                   the install command',
      '  image [--load-with A-VERY-LONG-COMMAND]',
      '                            builds',
      '                            and loads',
      '',
      'beta operator:',
      '  history                   the history command',
      '',
      'demo <command> --help: its options',
      '',
    ].join('\n'),
  );
});

test('the command word picks the command, which gets every other argument and gives its exit code', async () => {
  const calls: string[][] = [];
  const cli = twoOperators(calls);
  const c = capture();
  assert.equal(await cli.run(['history', 'list', '-A'], c.io), 1);
  assert.equal(await cli.run(['-n', 'prod', 'install', '--wait'], c.io), 0);
  assert.equal(await cli.run(['--kubeconfig=/k', 'image'], c.io), 0);
  assert.equal(await cli.run(['image', '--help'], c.io), 0);
  assert.deepEqual(calls, [
    ['history', 'list', '-A'],
    ['install', '-n', 'prod', '--wait'],
    ['image', '--kubeconfig=/k'],
    ['image', '--help'],
  ]);
  assert.equal(c.out() + c.err(), '', 'the CLI itself prints nothing when a command runs');
});

test('help, --help, -h and no arguments print the help; help COMMAND is COMMAND --help', async () => {
  for (const argv of [[], ['help'], ['--help'], ['-h'], ['-n', 'prod', '--help']]) {
    const calls: string[][] = [];
    const c = capture();
    assert.equal(await twoOperators(calls).run(argv, c.io), 0, argv.join(' '));
    assert.match(c.out(), /^usage: demo <command>/, argv.join(' '));
    assert.deepEqual(calls, [], argv.join(' '));
  }
  const calls: string[][] = [];
  assert.equal(await twoOperators(calls).run(['help', 'history'], capture().io), 1);
  assert.deepEqual(calls, [['history', '--help']]);
});

test('an unknown command, or none among flags, exits 2 naming the mistake and every known command', async () => {
  assert.equal(EXIT_USAGE, 2, 'as the commands exit on a wrong command line of their own');
  const refused: [string[], RegExp][] = [
    [['frobnicate'], /^demo: unknown command "frobnicate": one of install, image, history\nusage: demo/],
    [['-n', 'prod', 'frobnicate', 'x'], /^demo: unknown command "frobnicate"/],
    [['help', 'frobnicate'], /^demo: help: unknown command "frobnicate": one of install, image, history\n/],
    [['--wait'], /^demo: no command in "--wait"\nusage: demo/],
    [['-n', 'history'], /^demo: no command in "-n history"/],
  ];
  for (const [argv, message] of refused) {
    const calls: string[][] = [];
    const c = capture();
    assert.equal(await twoOperators(calls).run(argv, c.io), EXIT_USAGE, argv.join(' '));
    assert.match(c.err(), message, argv.join(' '));
    assert.equal(c.out(), '', 'a refusal goes to stderr');
    assert.deepEqual(calls, [], argv.join(' '));
  }
});

test('two operators may not name the same command, nor one "help"', () => {
  const calls: string[][] = [];
  assert.throws(() => new Cli({ program: 'demo', groups: [{ title: 'a', commands: [recording('install', calls)] }, { title: 'b', commands: [recording('install', calls)] }] }), /two operators name a command "install"/);
  assert.throws(() => new Cli({ program: 'demo', groups: [{ title: 'a', commands: [recording('help', calls)] }] }), /may not name a command "help"/);
});

test('the command word: the first argument that is neither a flag nor the value of a leading value flag', () => {
  const flags = ['-n', '--namespace'];
  assert.equal(commandWordIndex(['status'], flags), 0);
  assert.equal(commandWordIndex(['-n', 'prod', 'status'], flags), 2);
  assert.equal(commandWordIndex(['--namespace=prod', 'status'], flags), 1);
  assert.equal(commandWordIndex(['-A', 'status'], flags), 1, 'a flag without a value');
  assert.equal(commandWordIndex(['--', 'status'], flags), undefined, 'nothing after -- is a command');
  assert.equal(commandWordIndex(['-n'], flags), undefined);
});
