// The connection flags kubectl-quorum and `quorum history` share: kubectl's spellings, and only the flags
// given in what connectionFlags returns, as each command built its parsed arguments before.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseArgs } from 'node:util';
import { CONNECTION_FLAGS, connectionFlags } from '../../src/client/config.ts';

const parse = (args: string[]): ReturnType<typeof connectionFlags> =>
  connectionFlags(parseArgs({ args, allowPositionals: true, strict: true, options: { ...CONNECTION_FLAGS, extra: { type: 'string' } } }).values);

test('kubectl spellings: -n/--namespace, -A/--all-namespaces, --kubeconfig, --context', () => {
  assert.deepEqual(parse(['-n', 'apps', '--kubeconfig', '/k', '--context', 'kind']), { namespace: 'apps', kubeconfig: '/k', context: 'kind', allNamespaces: false });
  assert.deepEqual(parse(['--namespace=apps']), { namespace: 'apps', allNamespaces: false });
  assert.deepEqual(parse(['-A']), { allNamespaces: true });
  assert.deepEqual(parse(['--all-namespaces', 'status']), { allNamespaces: true });
});

test('flags not given are left out, not set to undefined', () => {
  const flags = parse(['--extra', 'x']);
  assert.deepEqual(Object.keys(flags), ['allNamespaces']);
  assert.equal(flags.allNamespaces, false);
});

test('a command keeps its own options beside them, and an unknown flag is still refused', () => {
  const { values } = parseArgs({ args: ['--extra', 'x', '-n', 'a'], options: { ...CONNECTION_FLAGS, extra: { type: 'string' } } });
  assert.equal(values.extra, 'x');
  assert.equal(values.namespace, 'a');
  assert.throws(() => parse(['--token', 't']), /Unknown option '--token'/);
});
