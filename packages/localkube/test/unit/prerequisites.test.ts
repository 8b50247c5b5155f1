// A missing build prerequisite stops `up` with a message naming it (here: Go, taken off PATH).
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { run } from '../../src/exec.ts';

test('localkube up without Go names Go as the missing prerequisite', async () => {
  const stateDir = await mkdtemp(join(tmpdir(), 'localkube-nogo-'));
  const cli = new URL('../../src/cli.ts', import.meta.url).pathname;
  const result = await run(process.execPath, [cli, 'up', '--state-dir', stateDir], {
    env: { ...process.env, PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
    allowFailure: true,
  });
  assert.equal(result.exitCode, 1);
  assert.match(result.stderr, /missing build prerequisites:\n\s+- go: building Kubernetes, etcd and CoreDNS/);
});
