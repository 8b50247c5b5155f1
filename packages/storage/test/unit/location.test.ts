// The key prefix pattern every API that exposes a location puts in its schema (the API server checks it with
// RE2, so it has no look-ahead): a prefix is object-key-safe segments, never `.` or `..` alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KEY_PREFIX_PATTERN } from '../../src/index.ts';

test('a key prefix refuses `.` and `..` segments, empty segments and a leading slash; dots inside a segment are fine', () => {
  const re = new RegExp(KEY_PREFIX_PATTERN);
  for (const ok of ['', 'a', 'a/', 'team/etcd/', '.hidden', 'a.b', 'v1.2/x', '..a', 'a..', '...']) assert.ok(re.test(ok), JSON.stringify(ok));
  for (const bad of ['.', '..', '../x', 'x/..', 'a/../b', 'a/./b', '/a', 'a//b', 'a b', 'ä']) assert.ok(!re.test(bad), JSON.stringify(bad));
});
