// docs/redis.md's table of the operator's environment names every variable the operator process reads: the
// sources it loads from main.ts are scanned for `env['X']`, `process.env['X']` and `port(env, 'X', …)`.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { DEFAULT_CA_ROTATION_OVERLAP_SECONDS, DEFAULT_REDIS_REPOSITORY, METRICS_PORT, OPERATOR_IMAGE, WEBHOOK_PORT, WEBHOOK_SERVICE } from '../../src/operator/config.ts';

const root = resolve(import.meta.dirname, '../../../..');
const sources = ['src/operator/config.ts', 'src/operator/operator.ts', 'src/operator/main.ts'].map((f) => resolve(root, 'packages/redis-operator', f));

test('every variable the operator reads is in docs/redis.md\'s environment table, with the defaults the code has', async () => {
  const code = (await Promise.all(sources.map((f) => readFile(f, 'utf8')))).join('\n');
  const read = new Set([...code.matchAll(/env\['([A-Z_]+)'\]|port\(env, '([A-Z_]+)'/g)].map((m) => m[1] ?? m[2]!));
  const docs = await readFile(resolve(root, 'docs/redis.md'), 'utf8');
  const section = docs.slice(docs.indexOf("### The operator's environment"), docs.indexOf('### Installing with Helm'));
  const rows = new Map([...section.matchAll(/^\| `([A-Z_]+)` \| ([^|]+) \|/gm)].map((m) => [m[1]!, m[2]!.trim()]));
  assert.deepEqual([...read].filter((v) => !rows.has(v)).sort(), [], 'read by the code, missing from the table');
  assert.deepEqual([...rows.keys()].filter((v) => !read.has(v)).sort(), [], 'in the table, never read');
  assert.equal(rows.get('METRICS_PORT'), String(METRICS_PORT));
  assert.equal(rows.get('WEBHOOK_PORT'), String(WEBHOOK_PORT));
  assert.equal(rows.get('WEBHOOK_SERVICE'), `\`${WEBHOOK_SERVICE}\``);
  assert.equal(rows.get('REDIS_REPOSITORY'), `\`${DEFAULT_REDIS_REPOSITORY}\``);
  assert.equal(rows.get('OPERATOR_IMAGE'), `\`${OPERATOR_IMAGE}\``);
  assert.match(rows.get('CA_ROTATION_OVERLAP_SECONDS') ?? '', new RegExp(`^${DEFAULT_CA_ROTATION_OVERLAP_SECONDS} `));
});
