// The Redis backup agent: the one program that reads storage credentials. The operator runs it from its own
// image in a Job per backup attempt (`backup`) and, for spec.bootstrap.fromBackup, in an init container of every
// instance pod (`fetch`, which only the bootstrap primary acts on), and in a schedule's prune Job (`delete`,
// retention). Each command writes ONE JSON line to its result file (the container's termination message, read by
// the operator from the pod's status) and exits non-zero on failure.
//
//   node agent.ts backup --host H --port P --redis NAME --instance NAME --destination-json JSON --password-file F
//                        [--credentials-dir DIR] [--pvc-root DIR] [--result-file PATH]
//   node agent.ts fetch  --destination-json JSON --key KEY --sha256 HEX --out FILE --data-dir DIR
//                        [--primary-file F --pod-name NAME] [--credentials-dir DIR] [--pvc-root DIR] [--result-file PATH]
//   node agent.ts delete --destination-json JSON --key KEY [--credentials-dir DIR] [--pvc-root DIR] [--result-file PATH]
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { compactTimestamp, resultLine, retryWhileUnreachable } from '@quorum/kit';
import { parseDestinationArgument } from '@quorum/kit/schema';
import { locationPrefix, locationURI, openStore, StorageError, type ObjectStore } from '@quorum/storage';
import type { BackupDestination } from '../api/destination.ts';
import { DestinationSchema } from '../api/destination-schema.ts';
import { openRdbStream, RdbShapeCheck, RdbStreamError } from './rdb.ts';

export const DEFAULT_RESULT_FILE = '/dev/termination-log';
/** How long the agent keeps trying to reach its source instance (a replica restarting, a name resolving late). */
export const SOURCE_REACH_BOUND_MS = 20_000;
/** How long a restore's fetch keeps trying to reach its store. */
export const FETCH_REACH_BOUND_MS = 60_000;

/** Why an attempt failed: the RedisBackup's status.lastFailure.reason and the condition's. */
export type AgentFailureReason = 'SourceUnreachable' | 'SourceRefused' | 'NotAnRdb' | 'ChecksumMismatch' | 'InvalidArguments' | 'Interrupted' | 'BackupFailed' | StorageError['reason'];

export class AgentFailure extends Error {
  readonly reason: AgentFailureReason;
  constructor(reason: AgentFailureReason, message: string) {
    super(message);
    this.name = 'AgentFailure';
    this.reason = reason;
  }
}

export type Failed = { ok: false; reason: AgentFailureReason; message: string };
export type BackupResult = { ok: true; key: string; location: string; sizeBytes: number; sha256: string; serverVersion: string; instance: string } | Failed;
export type FetchResult = { ok: true; skipped: string } | { ok: true; key: string; sizeBytes: number; sha256: string } | Failed;
export type DeleteResult = { ok: true; key: string } | Failed;

/**
 * Deletes one stored backup for a schedule's retention: the RDB's `<key>.sha256` first, then the RDB, so a
 * half-done delete never leaves an RDB without its hash. Idempotent: what is already gone is a success.
 */
export async function runDelete(args: { destination: BackupDestination; key: string; credentialsDir?: string; pvcRoot?: string; signal?: AbortSignal }): Promise<DeleteResult> {
  let store: ObjectStore | undefined;
  try {
    store = await openStore(args.destination, args.credentialsDir, args.pvcRoot);
    const options = args.signal ? { signal: args.signal } : {};
    await store.delete(`${args.key}.sha256`, options);
    await store.delete(args.key, options);
    return { ok: true, key: args.key };
  } catch (err) {
    return failed(err, `deleting ${args.key} from ${locationURI(args.destination, '')}`);
  } finally {
    store?.close();
  }
}

function failed(err: unknown, step: string): Failed {
  if (err instanceof AgentFailure || err instanceof StorageError) return { ok: false, reason: err.reason, message: err.message };
  if (err instanceof RdbStreamError) return { ok: false, reason: /refused/.test(err.message) ? 'SourceRefused' : 'SourceUnreachable', message: `${step}: ${err.message}` };
  return { ok: false, reason: 'BackupFailed', message: `${step}: ${err instanceof Error ? err.message : String(err)}` };
}

export function backupKey(destination: BackupDestination, redis: string, startedAt: Date): string {
  return `${locationPrefix(destination)}${redis}-${compactTimestamp(startedAt)}.rdb`;
}

export interface BackupArgs {
  host: string;
  port: number;
  password?: string;
  /** The CA bundle of a Redis with TLS (the agent dials `host` over TLS and verifies it). */
  tlsCA?: string;
  redis: string;
  instance: string;
  destination: BackupDestination;
  credentialsDir?: string;
  pvcRoot?: string;
  signal?: AbortSignal;
  now?: () => Date;
}

/** A pass-through that checks the RDB's shape and hashes it as it streams to the store. */
function checked(shape: RdbShapeCheck, hash: ReturnType<typeof createHash>): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      shape.update(chunk);
      hash.update(chunk);
      callback(null, chunk);
    },
    flush(callback) {
      const problem = shape.problem();
      callback(problem ? new AgentFailure('NotAnRdb', problem) : null);
    },
  });
}

/**
 * Streams an RDB from the instance into the destination, hashed and shape-checked as it passes: the object
 * appears only once every byte arrived (the store's guarantee), then `<key>.sha256` beside it with the hash.
 */
export async function runBackup(args: BackupArgs): Promise<BackupResult> {
  const started = (args.now ?? ((): Date => new Date()))();
  const signal = args.signal ?? new AbortController().signal;
  let store: ObjectStore | undefined;
  let step = `connecting to ${args.instance} (${args.host}:${args.port})`;
  try {
    const source = { host: args.host, port: args.port, signal, ...(args.password !== undefined ? { password: args.password } : {}), ...(args.tlsCA !== undefined ? { tlsCA: args.tlsCA } : {}) };
    const reached = await retryWhileUnreachable(args.instance, () => openRdbStream(source), (err) => err instanceof RdbStreamError && !/refused/.test(err.message), SOURCE_REACH_BOUND_MS, signal);
    if (!reached.ok) throw reached.error;
    const rdb = reached.value;
    step = `opening ${locationURI(args.destination, '')}`;
    store = await openStore(args.destination, args.credentialsDir, args.pvcRoot);
    step = `streaming an RDB from ${args.instance} to ${store.description}`;
    const key = backupKey(args.destination, args.redis, started);
    const shape = new RdbShapeCheck();
    const hash = createHash('sha256');
    const body = rdb.body.pipe(checked(shape, hash));
    rdb.body.once('error', (err) => body.destroy(err));
    const stored = await store.upload(key, body, { signal, ...(rdb.sizeBytes !== undefined ? { sizeHint: rdb.sizeBytes } : {}), sha256: () => hash.digest('hex') });
    if (rdb.sizeBytes !== undefined && stored.sizeBytes !== rdb.sizeBytes) throw new AgentFailure('NotAnRdb', `stored ${stored.sizeBytes} bytes, but the server announced ${rdb.sizeBytes}`);
    step = `storing ${key}.sha256`;
    const name = key.split('/').at(-1) ?? key;
    await store.upload(`${key}.sha256`, Readable.from([Buffer.from(`${stored.sha256}  ${name}\n`)]), { signal });
    return { ok: true, key, location: locationURI(args.destination, key), sizeBytes: stored.sizeBytes, sha256: stored.sha256, serverVersion: rdb.version, instance: args.instance };
  } catch (err) {
    return failed(signal.aborted ? signal.reason : err, step);
  } finally {
    store?.close();
  }
}

export interface FetchArgs {
  destination: BackupDestination;
  key: string;
  sha256: string;
  /** Where the RDB goes (`<data dir>/dump.rdb`); written as FILE.partial and renamed once checked. */
  out: string;
  /** The instance's data directory: anything in it (an RDB, an appendonlydir) means the instance has data, and nothing is fetched. */
  dataDir: string;
  /** The ConfigMap's `primary` file and this pod's name: only the pod it names fetches (the replicas sync from it). */
  primaryFile?: string;
  podName?: string;
  credentialsDir?: string;
  pvcRoot?: string;
  signal?: AbortSignal;
  reachBoundMs?: number;
}

/** Why nothing is fetched (the instance has data, or it is not the bootstrap primary), or undefined to fetch. */
async function skipReason(args: FetchArgs): Promise<string | undefined> {
  if (args.primaryFile !== undefined) {
    const primary = (await readFile(args.primaryFile, 'utf8')).trim();
    if (primary !== args.podName) return `${args.podName ?? 'this pod'} is not the primary (${primary}): it syncs from it`;
  }
  const present = (await readdir(args.dataDir).catch(() => [] as string[])).filter((f) => !f.endsWith('.partial') && f !== 'lost+found');
  return present.length > 0 ? `the data directory already holds ${present.join(', ')}` : undefined;
}

async function fetchOnce(args: FetchArgs, signal: AbortSignal): Promise<FetchResult> {
  const partial = `${args.out}.partial`;
  const store = await openStore(args.destination, args.credentialsDir, args.pvcRoot);
  try {
    await mkdir(dirname(args.out), { recursive: true });
    const shape = new RdbShapeCheck();
    const hash = createHash('sha256');
    try {
      await pipeline(await store.download(args.key, { signal }), checked(shape, hash), createWriteStream(partial, { flush: true }), { signal });
      const sha256 = hash.digest('hex');
      if (sha256 !== args.sha256.toLowerCase()) throw new AgentFailure('ChecksumMismatch', `${locationURI(args.destination, args.key)} has SHA-256 ${sha256}, but the backup recorded ${args.sha256}: it was changed or corrupted since`);
      await rename(partial, args.out);
      return { ok: true, key: args.key, sizeBytes: shape.bytes, sha256 };
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
  } finally {
    store.close();
  }
}

/** Downloads the backup's RDB, checked against its recorded SHA-256 and its shape, before redis-server starts. */
export async function runFetch(args: FetchArgs): Promise<FetchResult> {
  const signal = args.signal ?? new AbortController().signal;
  try {
    const skipped = await skipReason(args);
    if (skipped !== undefined) return { ok: true, skipped };
    const reached = await retryWhileUnreachable(locationURI(args.destination, ''), () => fetchOnce(args, signal), (err) => err instanceof StorageError && err.reason === 'StorageUnreachable', args.reachBoundMs ?? FETCH_REACH_BOUND_MS, signal);
    if (!reached.ok) throw reached.error;
    return reached.value;
  } catch (err) {
    return failed(signal.aborted ? signal.reason : err, `fetching ${args.key}`);
  }
}

/** Parses and validates --destination-json (the operator wrote it, but a hand-run agent may not have). */
export function parseDestination(json: string): BackupDestination {
  const parsed = parseDestinationArgument(json, DestinationSchema);
  if ('problem' in parsed) throw new AgentFailure('InvalidArguments', parsed.problem);
  return parsed.destination;
}

const USAGE = `usage: agent.ts backup --host H --port P --redis NAME --instance NAME --destination-json JSON --password-file F [--tls-ca-file F] [--credentials-dir DIR] [--pvc-root DIR] [--result-file PATH]
       agent.ts fetch --destination-json JSON --key KEY --sha256 HEX --out FILE --data-dir DIR [--primary-file F --pod-name NAME] [--credentials-dir DIR] [--pvc-root DIR] [--result-file PATH]
       agent.ts delete --destination-json JSON --key KEY [--credentials-dir DIR] [--pvc-root DIR] [--result-file PATH]`;

const FLAGS = {
  host: { type: 'string' },
  port: { type: 'string' },
  redis: { type: 'string' },
  instance: { type: 'string' },
  'password-file': { type: 'string' },
  'destination-json': { type: 'string' },
  'credentials-dir': { type: 'string' },
  'pvc-root': { type: 'string' },
  'result-file': { type: 'string' },
  key: { type: 'string' },
  sha256: { type: 'string' },
  out: { type: 'string' },
  'data-dir': { type: 'string' },
  'primary-file': { type: 'string' },
  'pod-name': { type: 'string' },
  'tls-ca-file': { type: 'string' },
} as const;

function required(values: Record<string, string | undefined>, name: string): string {
  const value = values[name];
  if (value === undefined || value === '') throw new AgentFailure('InvalidArguments', `--${name} is required\n${USAGE}`);
  return value;
}

async function runCommand(argv: string[], signal: AbortSignal | undefined): Promise<{ result: BackupResult | FetchResult | DeleteResult; resultFile: string }> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: FLAGS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new AgentFailure('InvalidArguments', `${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
  }
  const values: Record<string, string | undefined> = parsed.values;
  const resultFile = values['result-file'] ?? DEFAULT_RESULT_FILE;
  const [command] = parsed.positionals;
  const common = {
    destination: parseDestination(required(values, 'destination-json')),
    ...(values['credentials-dir'] ? { credentialsDir: values['credentials-dir'] } : {}),
    ...(values['pvc-root'] ? { pvcRoot: values['pvc-root'] } : {}),
    ...(signal ? { signal } : {}),
  };
  if (command === 'backup') {
    const port = Number(required(values, 'port'));
    const passwordFile = values['password-file'];
    const password = passwordFile ? (await readFile(passwordFile, 'utf8')).replace(/\r?\n$/, '') : undefined;
    const caFile = values['tls-ca-file'];
    const tlsCA = caFile ? await readFile(caFile, 'utf8') : undefined;
    const args = { ...common, host: required(values, 'host'), port, redis: required(values, 'redis'), instance: required(values, 'instance'), ...(password !== undefined ? { password } : {}), ...(tlsCA !== undefined ? { tlsCA } : {}) };
    return { result: await runBackup(args), resultFile };
  }
  if (command === 'fetch') {
    const sha256 = required(values, 'sha256');
    if (!/^[0-9a-fA-F]{64}$/.test(sha256)) throw new AgentFailure('InvalidArguments', `--sha256 must be 64 hex digits: ${sha256}`);
    const primary = values['primary-file'] ? { primaryFile: values['primary-file'], podName: required(values, 'pod-name') } : {};
    return { result: await runFetch({ ...common, ...primary, key: required(values, 'key'), sha256, out: required(values, 'out'), dataDir: required(values, 'data-dir') }), resultFile };
  }
  if (command === 'delete') return { result: await runDelete({ ...common, key: required(values, 'key') }), resultFile };
  throw new AgentFailure('InvalidArguments', `${command === undefined ? 'no command' : `unknown command ${command}`}\n${USAGE}`);
}

/** Runs one command from `argv` (without node and the script); returns the exit code. */
export async function main(argv: string[], signal?: AbortSignal): Promise<number> {
  let outcome: { result: BackupResult | FetchResult | DeleteResult; resultFile: string };
  try {
    outcome = await runCommand(argv, signal);
  } catch (err) {
    outcome = { result: failed(err, 'the agent'), resultFile: DEFAULT_RESULT_FILE };
  }
  const line = resultLine(outcome.result);
  process.stdout.write(line);
  if (!outcome.result.ok) process.stderr.write(`${outcome.result.reason}: ${outcome.result.message}\n`);
  await writeFile(outcome.resultFile, line).catch((err: unknown) => process.stderr.write(`cannot write the result to ${outcome.resultFile}: ${err instanceof Error ? err.message : String(err)}\n`));
  return outcome.result.ok ? 0 : 1;
}

if (import.meta.main) {
  const stop = new AbortController();
  // The Job's deadline or a deleted pod: abandon the upload cleanly (the store leaves no object).
  const onSignal = (name: string) => (): void => stop.abort(new AgentFailure('Interrupted', `the agent was stopped (${name}) before it finished`));
  process.once('SIGTERM', onSignal('SIGTERM'));
  process.once('SIGINT', onSignal('SIGINT'));
  process.exitCode = await main(process.argv.slice(2), stop.signal);
  // An SDK's keep-alive socket must not keep a finished Job running.
  setTimeout(() => process.exit(), 2000).unref();
}
