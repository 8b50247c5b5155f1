// The webhook server's bounds (issue 23): 64 concurrent AdmissionReviews of 8 MiB from anything that can reach the
// port must not grow the server until its pod is killed. The server runs in a child process whose peak RSS is read
// from /proc; the reviews it lets in are answered, the others get 429 at once, and it still answers afterwards.
import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { request as httpsRequest } from 'node:https';
import { after, before, test } from 'node:test';

const CHILD = new URL('./fixtures/webhook-bounds/server-child.ts', import.meta.url);
const CONCURRENT = 64;
const BODY_BYTES = 8 * 1024 * 1024 - 64 * 1024;
/** Node alone is about 50 MiB; two 8 MiB reviews held and parsed at once stay far below this. Unbounded: > 1 GiB. */
const PEAK_RSS_BOUND_MIB = 320;

interface Started { port: number; ca: string; startRssKiB: number }
interface Report { peakRssKiB: number; rssKiB: number; refused: Record<string, number> }

function reviewOf(dataBytes: number): Buffer {
  const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big', namespace: 'ns' }, data: { big: 'x'.repeat(dataBytes) } };
  const request = { uid: 'u', kind: { group: '', version: 'v1', kind: 'ConfigMap' }, resource: { group: '', version: 'v1', resource: 'configmaps' }, namespace: 'ns', name: 'big', operation: 'CREATE', userInfo: { username: 'flood' }, object, oldObject: null, dryRun: false };
  return Buffer.from(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request }));
}

function post(started: Started, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port: started.port, path: '/validate', method: 'POST', ca: started.ca, agent: false, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    // A refused review's connection is closed while its body is still being sent: the status already arrived.
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' || err.code === 'EPIPE' ? resolve(-1) : reject(err)));
    req.end(body);
  });
}

function ask<T>(child: ChildProcess, msg: string): Promise<T> {
  const reply = once(child, 'message') as Promise<[T]>;
  child.send(msg);
  return reply.then(([value]) => value);
}

let child: ChildProcess;
let started: Started;

before(async () => {
  child = fork(CHILD, { execArgv: ['--conditions=@quorum/source'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  [started] = (await once(child, 'message')) as [Started];
});

after(async () => {
  if (child.exitCode === null) await ask(child, 'stop').catch(() => undefined);
  child.kill();
});

test(`${CONCURRENT} concurrent 8 MiB reviews: some answered, the rest refused with 429, the server's peak RSS bounded, and it still answers`, async () => {
  const body = reviewOf(BODY_BYTES);
  const statuses = await Promise.all(Array.from({ length: CONCURRENT }, () => post(started, body)));
  const report = await ask<Report>(child, 'report');
  const answered = statuses.filter((s) => s === 200).length;
  const refused = (report.refused['too_many_in_flight'] ?? 0) + (report.refused['too_many_bytes_in_flight'] ?? 0);
  const peakMiB = Math.round(report.peakRssKiB / 1024);
  console.log(`answered ${answered}, refused ${refused} (429), peak RSS ${peakMiB} MiB (${Math.round(started.startRssKiB / 1024)} MiB at start)`);
  assert.ok(answered >= 1, `no review was answered: ${statuses.join(',')}`);
  assert.ok(refused >= 1, 'no review was refused: the bound did not act');
  assert.equal(answered + refused, CONCURRENT, `every review is either answered or refused: ${statuses.join(',')}`);
  assert.ok(statuses.every((s) => s === 200 || s === 429 || s === -1), `unexpected statuses: ${statuses.join(',')}`);
  assert.ok(peakMiB < PEAK_RSS_BOUND_MIB, `peak RSS ${peakMiB} MiB ≥ ${PEAK_RSS_BOUND_MIB} MiB`);
  assert.equal(child.exitCode, null, 'the server process died');
  assert.equal(await post(started, reviewOf(1024)), 200, 'a small review after the flood is answered');
});

test('a body declared larger than the limit gets 413 without being read', async () => {
  const status = await post(started, reviewOf(8 * 1024 * 1024 + 1024));
  assert.ok(status === 413 || status === -1, `status ${status}`);
  const report = await ask<Report>(child, 'report');
  assert.equal(report.refused['body_too_large'], 1);
});
