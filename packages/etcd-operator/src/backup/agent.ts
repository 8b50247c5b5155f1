// The backup agent: the one program that reads storage credentials. The operator runs it in a Job per
// backup (`backup`), in a restored member's init container (`fetch`), and for retention (`delete`), from its
// own image. Each command writes ONE JSON line to its result file (the container's termination message,
// which the operator reads from the pod's status) and exits non-zero on failure.
//
//   node agent.ts backup --endpoint URL --cluster NAME --member NAME --destination-json JSON [--tls-dir DIR]
//                        [--credentials-dir DIR] [--pvc-root DIR] [--result-file PATH]
//   node agent.ts fetch  --destination-json JSON --key KEY --out FILE [--sha256 HEX] [--skip-if-exists PATH]
//                        [--credentials-dir DIR] [--pvc-root DIR] [--result-file PATH]
//   node agent.ts delete --destination-json JSON --key KEY [--credentials-dir DIR] [--pvc-root DIR] [--result-file PATH]
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { compactTimestamp, resultLine, retryWhileUnreachable, type Reached } from '@quorum/kit';
import { parseDestinationArgument } from '@quorum/kit/schema';
import { locationPrefix, locationURI, openStore, StorageError, type ObjectStore, type StoreOptions } from '@quorum/storage';
import type { Destination } from '../api/destination.ts';
import { DestinationSchema } from '../api/destination-schema.ts';
import { EtcdClient, type EtcdStatus, type EtcdTls } from '../etcd/client.ts';
import { EtcdUnavailableError, QuorumUnavailableError } from '../etcd/errors.ts';
import { isMemberId, memberIdToHex } from '../etcd/ids.ts';
import { AgentFailure, describeFailure, type AgentFailureReason, type Failure } from './failure.ts';
import { exposeGarbageCollector, garbagePacer, type Collection } from './memory.ts';
import { openSnapshot } from './snapshot.ts';
import { SnapshotFileCheck } from './snapshot-file.ts';

export { compactTimestamp, MAX_RESULT_BYTES, resultLine, retryWhileUnreachable, type Reached } from '@quorum/kit';

export const DEFAULT_RESULT_FILE = '/dev/termination-log';
const MiB = 1024 * 1024;

export interface Timing {
  /** The bound of any backup, however small. Default 60 s. */
  baseMs: number;
  /** The slowest transfer rate to allow for: the bound grows by the size at this rate. Default 4 MiB/s. */
  bytesPerSecond: number;
}

export const DEFAULT_TIMING: Timing = { baseMs: 60_000, bytesPerSecond: 4 * MiB };

/** How long a backup of `bytes` may take: never a fixed bound, which a large database would always miss. */
export function backupDeadlineMs(bytes: number, timing: Timing = DEFAULT_TIMING): number {
  return timing.baseMs + Math.ceil((bytes / timing.bytesPerSecond) * 1000);
}

/**
 * The bound of the linearizable read that confirms a quorum before the snapshot. A leader and a quorum answer
 * one in a round trip or two; etcd's own timeout (5 s plus two election timeouts) would be reported as a
 * timeout, and later.
 */
export const DEFAULT_QUORUM_CHECK_MS = 5000;
/**
 * How long the agent keeps trying to reach its member before it fails the backup as EtcdUnreachable. A name
 * that does not resolve for a moment (CoreDNS restarting, the API server it watches restarting: EAI_AGAIN) or
 * a member restarting is over in seconds; a Job that fails on the first try turns it into a failed backup.
 */
export const DEFAULT_REACH_BOUND_MS = 20_000;
/**
 * How long a restore's fetch keeps trying to reach its store. Longer than the backup's bound: a backup that
 * fails is taken again at the next schedule, while a restore whose fetch fails is refused for good.
 */
export const DEFAULT_FETCH_REACH_BOUND_MS = 60_000;
/** The key that read asks for. No one writes it: the read needs the quorum's read index, not data. */
export const QUORUM_CHECK_KEY = 'quorum.dev/backup-quorum-check';

export type Failed = { ok: false } & Failure;

export interface BackupSucceeded {
  ok: true;
  /** Object key in the destination. */
  key: string;
  /** s3://bucket/key, gs://…, azure://container/key or pvc://claim/key. */
  location: string;
  sizeBytes: number;
  /** Hex SHA-256 of the stored object (database and etcd's trailer). */
  sha256: string;
  /** The member's store revision read just before the snapshot began: every write up to it is in the snapshot. */
  revision: string;
  etcdVersion: string;
  member: string;
  startedAt: string;
  completedAt: string;
  /**
   * The agent's resident memory when streaming began (the store's SDK loaded, the snapshot opened), and its
   * peak over the process's life, in bytes: how much streaming the snapshot grew it (the design bound is
   * 64 MiB for a 1 GiB database).
   */
  rssStartBytes?: number;
  rssPeakBytes?: number;
}

export type BackupResult = BackupSucceeded | Failed;

export interface StoreArgs {
  destination: Destination;
  /** Where the credentials Secret is mounted (one file per key). */
  credentialsDir?: string;
  /** Where a pvc destination's claim is mounted. */
  pvcRoot?: string;
  storeOptions?: StoreOptions;
  /** Runs a garbage collection; given, it is run every 8 MiB streamed (see memory.ts). */
  collectGarbage?: (kind: Collection) => void;
}

export interface BackupArgs extends StoreArgs {
  /** The member's client URL. */
  endpoint: string;
  /** For an https endpoint: the CA bundle to trust and the client certificate to present. */
  tls?: EtcdTls;
  cluster: string;
  member: string;
  timing?: Timing;
  /** Stops the backup (e.g. SIGTERM); the upload is abandoned cleanly. */
  signal?: AbortSignal;
  /** The HTTP/2 receive window for the snapshot stream (see DEFAULT_WINDOW_BYTES). */
  windowBytes?: number;
  /** The bound of the linearizable read that confirms a quorum; default DEFAULT_QUORUM_CHECK_MS. */
  quorumCheckMs?: number;
  /** How long the first status read is retried while the member cannot be reached; default DEFAULT_REACH_BOUND_MS. */
  reachBoundMs?: number;
  now?: () => Date;
}

export function backupKey(destination: Destination, cluster: string, startedAt: Date, revision: string): string {
  return `${locationPrefix(destination)}${cluster}-${compactTimestamp(startedAt)}-rev${revision}.db`;
}

/**
 * Streams a snapshot of `args.member` into the destination: status first (version, size, and whether the
 * member has a leader), a linearizable read (a quorum serves; the revision), then the snapshot, hashed as
 * it passes, under a deadline that grows with the database's size.
 */
export async function runBackup(args: BackupArgs): Promise<BackupResult> {
  const now = args.now ?? ((): Date => new Date());
  const started = now();
  let rssStartBytes = process.memoryUsage.rss();
  const timing = args.timing ?? DEFAULT_TIMING;
  const deadline = new AbortController();
  const signal = args.signal ? AbortSignal.any([args.signal, deadline.signal]) : deadline.signal;
  let timer: NodeJS.Timeout | undefined;
  const armDeadline = (bytes: number): void => {
    clearTimeout(timer);
    const ms = backupDeadlineMs(bytes, timing);
    const elapsed = Date.now() - started.getTime();
    timer = setTimeout(() => {
      deadline.abort(new AgentFailure('Timeout', `the backup did not finish within ${Math.round(ms / 1000)} s (${Math.round(timing.baseMs / 1000)} s plus ${(bytes / MiB).toFixed(1)} MiB at ${(timing.bytesPerSecond / MiB).toFixed(1)} MiB/s)`));
    }, Math.max(0, ms - elapsed));
  };
  const client = new EtcdClient({ endpoint: args.endpoint, timeoutMs: 10_000, ...(args.tls ? { tls: args.tls } : {}) });
  let store: ObjectStore | undefined;
  let snapshotBody: Readable | undefined;
  let step = `reading the status of member ${args.member} at ${args.endpoint}`;
  try {
    armDeadline(0);
    const reached = await reachMember(client, args.reachBoundMs ?? DEFAULT_REACH_BOUND_MS, signal);
    if (!reached.ok) {
      step = `${step} (${reached.attempts} attempts over ${Math.round(reached.ms / 1000)} s)`;
      throw reached.error;
    }
    const status = reached.value;
    // A member without a leader may hold a stale copy, and cannot tell; refuse at once rather than time out.
    if (status.leaderId === '0') {
      throw new AgentFailure('NoQuorum', `no quorum: member ${args.member} (${args.endpoint}) knows no leader, so the cluster has lost quorum or is electing one; a snapshot now could miss committed writes`);
    }
    // The status is the member's own view, and it names its leader until an election timeout after it
    // last heard from it: a member cut off a moment ago still names one. Only a quorum can answer a
    // linearizable read, so one read through this member closes that window.
    step = `confirming through member ${args.member} at ${args.endpoint} that a quorum serves (a linearizable read)`;
    // The read's revision, not the status's: etcd serves a linearizable read only once it applied all that
    // was committed before it, so every write acknowledged before the backup began is at or below this
    // revision, and in the snapshot (a few later ones may be too: bbolt's read transaction opens a moment after).
    const revision = await confirmQuorum(client, args, status.leaderId, args.quorumCheckMs ?? DEFAULT_QUORUM_CHECK_MS, signal);
    armDeadline(status.dbSize);

    step = `opening ${destinationDescription(args.destination)}`;
    store = await openStore(args.destination, args.credentialsDir, args.pvcRoot, args.storeOptions);
    step = `streaming a snapshot from member ${args.member} to ${store.description}`;
    const snapshot = await openSnapshot({ endpoint: args.endpoint, signal, ...(args.tls ? { tls: args.tls } : {}), ...(args.windowBytes ? { windowBytes: args.windowBytes } : {}) });
    snapshotBody = snapshot.body;
    armDeadline(snapshot.sizeBytes);
    const key = backupKey(args.destination, args.cluster, started, revision);
    // The baseline is taken with the store's SDK loaded and the snapshot opened: what follows is what
    // streaming the database costs, which is what must stay flat whatever its size.
    rssStartBytes = process.memoryUsage.rss();
    const stored = await store.upload(key, snapshot.body, {
      signal,
      sizeHint: snapshot.sizeBytes,
      onBytes: garbagePacer(args.collectGarbage, store.chunksDieYoung ? 'minor' : 'full'),
      // The decoder hashed every byte it passed on (it needs the database's hash for etcd's check anyway).
      sha256: () => snapshot.sha256(),
    });
    if (stored.sizeBytes !== snapshot.sizeBytes) {
      throw new AgentFailure('SnapshotTruncated', `stored ${stored.sizeBytes} bytes, but etcd announced ${snapshot.sizeBytes}`);
    }
    return {
      ok: true,
      key,
      location: locationURI(args.destination, key),
      sizeBytes: stored.sizeBytes,
      sha256: stored.sha256,
      revision,
      etcdVersion: status.version,
      member: args.member,
      startedAt: started.toISOString(),
      completedAt: now().toISOString(),
      rssStartBytes,
      // maxRSS is in KiB (getrusage), and covers the whole process: a peak before the backup began counts too.
      rssPeakBytes: process.resourceUsage().maxRSS * 1024,
    };
  } catch (err) {
    // An abort surfaces as whatever the aborted call made of it; the abort's reason says why.
    const cause: unknown = signal.aborted ? signal.reason : err;
    return { ok: false, ...describeFailure(cause, step) };
  } finally {
    clearTimeout(timer);
    // Releases the etcd stream if the upload never took it (a no-op once it ended).
    snapshotBody?.destroy();
    client.close();
    store?.close();
  }
}

/**
 * The member's status, retried while it cannot be reached (see retryWhileUnreachable). Only unreachability is
 * retried: an answer that refuses (no leader, say) is the member's own word, and TLS failures do not heal.
 */
export async function reachMember(client: EtcdClient, boundMs: number, signal: AbortSignal): Promise<Reached<EtcdStatus>> {
  return retryWhileUnreachable('the member', () => client.status({ signal }), (err) => err instanceof EtcdUnavailableError && err.reason !== 'tls', boundMs, signal);
}

/**
 * A linearizable read through the member: it answers only when the leader it names still leads a quorum.
 * Refused as etcd refuses for want of a quorum (no leader, leader changed, request timed out), or not
 * answered within the bound by a member that just answered its status, it fails the backup with NoQuorum:
 * the cluster cannot serve a consistent snapshot now, and waiting out the backup's deadline would only
 * report it later, as a Timeout. Other failures (the member gone, a refusal of another kind) keep their own
 * reasons. Returns the revision the read was served at.
 */
async function confirmQuorum(client: EtcdClient, args: BackupArgs, leaderId: string, boundMs: number, signal: AbortSignal): Promise<string> {
  try {
    return (await client.range(QUORUM_CHECK_KEY, { signal, timeoutMs: boundMs })).revision;
  } catch (err) {
    // The backup's own deadline or a SIGTERM: the caller reports the abort's reason.
    if (signal.aborted) throw err;
    // In hex, as etcdctl and etcd's logs print member IDs.
    const member = `member ${args.member} (${args.endpoint}) names leader ${isMemberId(leaderId) ? memberIdToHex(leaderId) : leaderId}, but`;
    const consequence = 'the cluster has lost quorum or is electing a leader, and a snapshot now could miss committed writes';
    if (err instanceof QuorumUnavailableError) {
      throw new AgentFailure('NoQuorum', `no quorum: ${member} etcd refused a linearizable read through it: ${err.etcdMessage}; ${consequence}`, err);
    }
    if (err instanceof EtcdUnavailableError && err.reason === 'timeout') {
      throw new AgentFailure('NoQuorum', `no quorum: ${member} a linearizable read through it got no answer within ${boundMs / 1000} s, which only a quorum can give; ${consequence}`, err);
    }
    throw err;
  }
}

export interface FetchArgs extends StoreArgs {
  key: string;
  /** Where the snapshot goes; written as FILE.partial and renamed once checked. */
  out: string;
  /** Hex SHA-256 the stored object must have. */
  sha256?: string;
  /** Nothing to do when this exists (the member's data is already restored). */
  skipIfExists?: string;
  signal?: AbortSignal;
  /** Fail when no byte arrived for this long. Default 120 s. */
  stallMs?: number;
  /** How long the download is retried while the store cannot be reached; default DEFAULT_FETCH_REACH_BOUND_MS. */
  reachBoundMs?: number;
}

export type FetchResult = { ok: true; skipped: true } | { ok: true; skipped: false; key: string; sizeBytes: number; sha256: string } | Failed;

/**
 * Downloads a backup for a restore, checked against the recorded SHA-256 and etcd's own trailer. While no
 * server answers (StorageUnreachable: a name not resolving for a moment, the store restarting), the whole
 * download is tried again, for `reachBoundMs`: a restored member's init container that fails is a refused
 * snapshot, and the restore ends there.
 */
export async function runFetch(args: FetchArgs): Promise<FetchResult> {
  if (args.skipIfExists !== undefined && (await exists(args.skipIfExists))) return { ok: true, skipped: true };
  const signal = args.signal ?? new AbortController().signal;
  const boundMs = args.reachBoundMs ?? DEFAULT_FETCH_REACH_BOUND_MS;
  const reached = await retryWhileUnreachable(destinationDescription(args.destination), () => fetchOnce(args, signal), (err) => err instanceof StorageError && err.reason === 'StorageUnreachable', boundMs, signal);
  if (reached.ok) return reached.value;
  const failure = describeFailure(reached.error, 'fetching the snapshot');
  return { ok: false, ...failure, ...(reached.attempts > 1 ? { message: `${failure.message} (${reached.attempts} attempts over ${Math.round(reached.ms / 1000)} s)` } : {}) };
}

/** One download; a failure is thrown as it came (the abort's reason when aborted), with the step it was at. */
async function fetchOnce(args: FetchArgs, outer: AbortSignal): Promise<FetchResult> {
  const partial = `${args.out}.partial`;
  const stall = new AbortController();
  const signal = AbortSignal.any([outer, stall.signal]);
  let store: ObjectStore | undefined;
  let step = `opening ${destinationDescription(args.destination)}`;
  let timer: NodeJS.Timeout | undefined;
  try {
    store = await openStore(args.destination, args.credentialsDir, args.pvcRoot, args.storeOptions);
    step = `downloading ${args.key} from ${store.description}`;
    await mkdir(dirname(args.out), { recursive: true });
    const source = await store.download(args.key, { signal });
    const check = new SnapshotFileCheck({ source: locationURI(args.destination, args.key), onBytes: garbagePacer(args.collectGarbage, 'full'), ...(args.sha256 ? { sha256: args.sha256 } : {}) });
    const stallMs = args.stallMs ?? 120_000;
    let seen = -1;
    // A transfer that stops without failing (a server that keeps the connection but sends nothing) must still end.
    timer = setInterval(() => {
      if (check.bytes === seen) stall.abort(new AgentFailure('Timeout', `no data from ${store?.description ?? 'the store'} for ${Math.round(stallMs / 1000)} s after ${check.bytes} bytes`));
      seen = check.bytes;
    }, stallMs);
    try {
      await pipeline(source, check, createWriteStream(partial, { flush: true }), { signal });
      await rename(partial, args.out);
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
    return { ok: true, skipped: false, key: args.key, sizeBytes: check.bytes, sha256: check.sha256 };
  } catch (err) {
    const cause: unknown = signal.aborted ? signal.reason : err;
    // A StorageError keeps its class (the caller retries an unreachable store); others get the step.
    if (cause instanceof StorageError || cause instanceof AgentFailure) throw cause;
    const failure = describeFailure(cause, step);
    throw new AgentFailure(failure.reason, failure.message, cause);
  } finally {
    clearInterval(timer);
    store?.close();
  }
}

export interface DeleteArgs extends StoreArgs {
  key: string;
  signal?: AbortSignal;
}

export type DeleteResult = { ok: true; key: string } | Failed;

/** Deletes one stored backup (retention); one that is already gone is a success. */
export async function runDelete(args: DeleteArgs): Promise<DeleteResult> {
  let store: ObjectStore | undefined;
  try {
    store = await openStore(args.destination, args.credentialsDir, args.pvcRoot, args.storeOptions);
    await store.delete(args.key, args.signal ? { signal: args.signal } : {});
    return { ok: true, key: args.key };
  } catch (err) {
    return { ok: false, ...describeFailure(err, `deleting ${args.key} from ${destinationDescription(args.destination)}`) };
  } finally {
    store?.close();
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if (typeof err === 'object' && err !== null && 'code' in err && err.code === 'ENOENT') return false;
    throw err;
  }
}

function destinationDescription(d: Destination): string {
  return locationURI(d, '').replace(/\/$/, '');
}

/** Parses and validates --destination-json (the operator wrote it, but a hand-run agent may not have). */
export function parseDestination(json: string): Destination {
  const parsed = parseDestinationArgument(json, DestinationSchema);
  if ('problem' in parsed) throw new AgentFailure('InvalidArguments', parsed.problem);
  return parsed.destination;
}

const USAGE = `usage: agent.ts backup --endpoint URL --cluster NAME --member NAME --destination-json JSON [--tls-dir DIR] [--credentials-dir DIR] [--pvc-root DIR] [--result-file PATH]
       agent.ts fetch --destination-json JSON --key KEY --out FILE [--sha256 HEX] [--skip-if-exists PATH] [--credentials-dir DIR] [--pvc-root DIR] [--result-file PATH]
       agent.ts delete --destination-json JSON --key KEY [--credentials-dir DIR] [--pvc-root DIR] [--result-file PATH]`;

const FLAGS = {
  endpoint: { type: 'string' },
  'tls-dir': { type: 'string' },
  cluster: { type: 'string' },
  member: { type: 'string' },
  'destination-json': { type: 'string' },
  'credentials-dir': { type: 'string' },
  'pvc-root': { type: 'string' },
  'result-file': { type: 'string' },
  key: { type: 'string' },
  sha256: { type: 'string' },
  out: { type: 'string' },
  'skip-if-exists': { type: 'string' },
} as const;

/** A mounted kubernetes.io/tls Secret: ca.crt to trust the member by, tls.crt and tls.key to present. */
async function readTLSDir(dir: string): Promise<EtcdTls> {
  const read = async (file: string): Promise<string> => {
    try {
      return await readFile(join(dir, file), 'utf8');
    } catch (err) {
      throw new AgentFailure('InvalidArguments', `--tls-dir ${dir}: cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  return { ca: await read('ca.crt'), cert: await read('tls.crt'), key: await read('tls.key') };
}

function required(values: Record<string, string | undefined>, name: string): string {
  const value = values[name];
  if (value === undefined || value === '') throw new AgentFailure('InvalidArguments', `--${name} is required\n${USAGE}`);
  return value;
}

/** Runs one command from `argv` (without node and the script); returns the exit code. */
export async function main(argv: string[], signal?: AbortSignal, collectGarbage?: (kind: Collection) => void): Promise<number> {
  let resultFile = DEFAULT_RESULT_FILE;
  let result: BackupResult | FetchResult | DeleteResult;
  try {
    let parsed;
    try {
      parsed = parseArgs({ args: argv, options: FLAGS, allowPositionals: true, strict: true });
    } catch (err) {
      throw new AgentFailure('InvalidArguments', `${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    }
    const values: Record<string, string | undefined> = parsed.values;
    resultFile = values['result-file'] ?? DEFAULT_RESULT_FILE;
    const [command, ...extra] = parsed.positionals;
    if (extra.length > 0) throw new AgentFailure('InvalidArguments', `unexpected arguments: ${extra.join(' ')}\n${USAGE}`);
    const store: StoreArgs = {
      destination: parseDestination(required(values, 'destination-json')),
      ...(values['credentials-dir'] ? { credentialsDir: values['credentials-dir'] } : {}),
      ...(values['pvc-root'] ? { pvcRoot: values['pvc-root'] } : {}),
      ...(collectGarbage ? { collectGarbage } : {}),
    };
    const withSignal = signal ? { signal } : {};
    if (command === 'backup') {
      const tlsDir = values['tls-dir'];
      const tls = tlsDir ? await readTLSDir(tlsDir) : undefined;
      result = await runBackup({ ...store, ...withSignal, ...(tls ? { tls } : {}), endpoint: required(values, 'endpoint'), cluster: required(values, 'cluster'), member: required(values, 'member') });
    } else if (command === 'fetch') {
      const sha256 = values['sha256'];
      if (sha256 !== undefined && !/^[0-9a-fA-F]{64}$/.test(sha256)) throw new AgentFailure('InvalidArguments', `--sha256 must be 64 hex digits: ${sha256}`);
      result = await runFetch({
        ...store,
        ...withSignal,
        key: required(values, 'key'),
        out: required(values, 'out'),
        ...(sha256 ? { sha256 } : {}),
        ...(values['skip-if-exists'] ? { skipIfExists: values['skip-if-exists'] } : {}),
      });
    } else if (command === 'delete') {
      result = await runDelete({ ...store, ...withSignal, key: required(values, 'key') });
    } else {
      throw new AgentFailure('InvalidArguments', `${command === undefined ? 'no command' : `unknown command ${command}`}\n${USAGE}`);
    }
  } catch (err) {
    result = { ok: false, ...describeFailure(err, 'the agent') };
  }
  return report(result, resultFile);
}

async function report(result: BackupResult | FetchResult | DeleteResult, resultFile: string): Promise<number> {
  const line = resultLine(result);
  process.stdout.write(line);
  if (!result.ok) process.stderr.write(`${result.reason}: ${result.message}\n`);
  // A skipped fetch has nothing to report: the member's data was already there.
  if (!(result.ok && 'skipped' in result && result.skipped)) {
    try {
      await writeFile(resultFile, line);
    } catch (err) {
      process.stderr.write(`cannot write the result to ${resultFile}: ${err instanceof Error ? err.message : String(err)}\n`);
    }
  }
  return result.ok ? 0 : 1;
}

export type { AgentFailureReason };

if (import.meta.main) {
  const stop = new AbortController();
  // The Job's deadline or a deleted pod: abandon the upload cleanly (abort the multipart upload, remove the partial file).
  const onSignal = (name: string) => (): void => stop.abort(new AgentFailure('Interrupted', `the agent was stopped (${name}) before it finished`));
  process.once('SIGTERM', onSignal('SIGTERM'));
  process.once('SIGINT', onSignal('SIGINT'));
  process.exitCode = await main(process.argv.slice(2), stop.signal, exposeGarbageCollector());
  // An SDK's keep-alive socket must not keep a finished Job running.
  setTimeout(() => process.exit(), 2000).unref();
}
