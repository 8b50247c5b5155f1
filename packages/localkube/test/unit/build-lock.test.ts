// The build lock that lets the test harness build ahead while tests build the same project: one holder at a
// time, and a lock left by a process that is gone (or whose PID is someone else's now) is taken over.
import assert from 'node:assert/strict';
import { utimes, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { projectDir, withBuildLock, type GoProject } from '../../src/build/go-binaries.ts';

const project = (key: string): GoProject => ({ key: `build-lock-test-${key}-${process.pid}`, module: 'none', packages: [], binaries: [] });

test('two builds of one project run one after the other', async () => {
  const p = project('serial');
  const order: string[] = [];
  const build = (name: string) => withBuildLock(p, async () => {
    order.push(`${name} start`);
    await new Promise((r) => setTimeout(r, 300));
    order.push(`${name} end`);
  });
  await Promise.all([build('a'), build('b')]);
  // Which of the two takes the lock first is a race (each reads its own identity first); that they never overlap is not.
  const first = order[0]?.split(' ')[0] === 'b' ? 'b' : 'a';
  const second = first === 'a' ? 'b' : 'a';
  assert.deepEqual(order, [`${first} start`, `${first} end`, `${second} start`, `${second} end`]);
});

test('a lock whose holder is gone, or whose PID now belongs to another process, is taken over', async () => {
  for (const holder of ['999999999:1', `${process.pid}:0`]) {
    const p = project('stale');
    await writeFile(`${projectDir(p)}.lock`, holder);
    let ran = false;
    await withBuildLock(p, () => {
      ran = true;
      return Promise.resolve();
    });
    assert.ok(ran, holder);
  }
});

test('an empty lock is taken over once it is older than a creator could take to write its PID', async () => {
  const p = project('empty');
  const lock = `${projectDir(p)}.lock`;
  await writeFile(lock, '');
  const old = new Date(Date.now() - 60_000);
  await utimes(lock, old, old);
  await withBuildLock(p, () => Promise.resolve());
});
