// A client for ONE etcd member, over the v3 JSON gateway every etcd 3.4+ serves on its client URL
// (POST JSON to /v3/...): the admin calls the operator makes, and the KV calls its data checker and tests
// make. No gRPC dependency; IDs stay decimal strings; keys and values are text, base64 on the wire.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import {
  EtcdProtocolError,
  EtcdUnavailableError,
  etcdError,
  type UnavailableReason,
} from './errors.ts';
import { isMemberId } from './ids.ts';
import {
  asObject,
  bool,
  count,
  fromBase64,
  int64,
  list,
  optInt64,
  optObject,
  str,
  strings,
  toBase64,
  WireError,
  type JsonObject,
} from './wire.ts';

export interface EtcdTls {
  /** PEM contents (not file paths). */
  ca?: string;
  cert?: string;
  key?: string;
  /**
   * The name the server's certificate is checked against (and sent as SNI), when the endpoint's host is not in
   * it: the operator dials a member's pod IP, which changes on every restart and so is in no certificate.
   */
  servername?: string;
}

export interface EtcdClientOptions {
  /** http(s)://host:port of one member's client URL. */
  endpoint: string;
  /** Per call, including the one retry of a read. Default 5000. */
  timeoutMs?: number;
  /** Only for https endpoints. */
  tls?: EtcdTls;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Overrides the client's timeout for this call. */
  timeoutMs?: number;
}

export interface Member {
  id: string;
  /** '' for a member that was added but has never started. */
  name: string;
  peerURLs: string[];
  /** Empty until the member has started and published itself. */
  clientURLs: string[];
  isLearner: boolean;
}

export interface EtcdStatus {
  /** The member that answered. */
  memberId: string;
  /** '0' when this member knows no leader. */
  leaderId: string;
  version: string;
  dbSize: number;
  dbSizeInUse?: number;
  /** 3.6+. */
  dbSizeQuota?: number;
  /** 3.6+. */
  storageVersion?: string;
  /** 3.6+: a downgrade in flight (enabled, with the cluster version it goes to, e.g. "3.5.0"). 3.5 does not say. */
  downgrade?: { enabled: boolean; targetVersion?: string };
  raftIndex: string;
  raftTerm: string;
  raftAppliedIndex?: string;
  /** header.revision: the member's current store revision. */
  revision: string;
  clusterId: string;
  isLearner: boolean;
  errors: string[];
}

/** Alarm names as etcd spells them; NONE is never listed. */
export type AlarmType = 'NOSPACE' | 'CORRUPT' | (string & {});

export interface Alarm {
  memberId: string;
  alarm: AlarmType;
}

export interface KeyValue {
  value: string;
  modRevision: string;
}

/** One key as a range lists it. */
export interface StoredKey extends KeyValue {
  key: string;
  createRevision: string;
  /** Puts to the key since it was (re)created: '1' after the first. */
  version: string;
}

export interface RangeOptions extends CallOptions {
  /**
   * Exclusive end of the range, as text or raw bytes (use prefixEnd(prefix) for every key under a
   * prefix). Without it the range is `key` alone.
   */
  end?: string | Uint8Array;
  /** At most this many keys, in key order; `more` tells whether the range held others. */
  limit?: number;
  /** Read the keyspace as it was at this store revision; etcd refuses one that is compacted or in the future. */
  revision?: string;
  /** Answered from the member's local store, without a quorum round: may be stale. */
  serializable?: boolean;
}

export interface RangeResult {
  kvs: StoredKey[];
  /** The range held more keys than `limit` let through. */
  more: boolean;
  /** Keys in the whole range, regardless of `limit`. */
  count: number;
  /**
   * header.revision: the store's revision when the read was served, also when an older `revision` was
   * asked for. Pass it as `revision` to read further pages of one consistent snapshot.
   */
  revision: string;
}

/** GET /version: the member's binary version and the cluster version etcd's leader decided. */
export interface Versions {
  /** This member's binary, e.g. "3.5.35". */
  server: string;
  /**
   * The cluster version, e.g. "3.5.0": the lowest minor every member runs, decided by the leader once it has
   * heard every member's version; undefined while etcd says "not_decided".
   */
  cluster?: string;
  /** 3.6+: the storage schema version of this member's backend, e.g. "3.6.0". */
  storage?: string;
}

export interface Health {
  healthy: boolean;
  /** etcd's reason when unhealthy, e.g. "RAFT NO LEADER"; '' when healthy or not given. */
  reason: string;
}

/**
 * The alarms a member's status names. etcd appends each active alarm to the status' `errors` as the alarm
 * member's text form (e.g. "memberID:10276657743932975437 alarm:NOSPACE "), beside "etcdserver: no leader":
 * the operator learns of NOSPACE from the status it reads anyway, with no further call.
 */
export function alarmsInStatus(errors: readonly string[]): Alarm[] {
  return errors.flatMap((e) => {
    const m = /memberID:\s*(\d+)\s+alarm:\s*([A-Z_]+)/.exec(e);
    return m ? [{ memberId: m[1]!, alarm: m[2]! }] : [];
  });
}

export const DEFAULT_TIMEOUT_MS = 5000;
// Admin answers are small and KV reads are paged by their callers; a large one means something other than
// etcd is answering.
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

interface Reply {
  status: number;
  text: string;
}

// Whether a call may be sent twice. Writes are never retried: a lost answer does not mean a lost write.
type Kind = 'read' | 'write';

export class EtcdClient {
  readonly endpoint: string;
  readonly timeoutMs: number;
  readonly #base: URL;
  readonly #secure: boolean;
  /** Keep-alive pool for reads. */
  readonly #pool: HttpAgent;
  /**
   * A fresh connection per write, so a pooled socket the server already closed cannot fail a write
   * with a reset that would leave its outcome in doubt.
   */
  readonly #fresh: HttpAgent;
  #inFlight = 0;

  constructor(options: EtcdClientOptions) {
    const base = new URL(options.endpoint);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new TypeError(`etcd endpoint must be http(s)://host:port: ${options.endpoint}`);
    if ((base.pathname !== '/' && base.pathname !== '') || base.search || base.hash) throw new TypeError(`etcd endpoint must have no path: ${options.endpoint}`);
    this.#secure = base.protocol === 'https:';
    if (options.tls && !this.#secure) throw new TypeError(`TLS options given for a plain http endpoint: ${options.endpoint}`);
    this.#base = base;
    this.endpoint = base.origin;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(this.timeoutMs > 0)) throw new RangeError(`timeoutMs must be positive: ${this.timeoutMs}`);
    const tls = options.tls ?? {};
    this.#pool = this.#secure
      ? new HttpsAgent({ ...tls, keepAlive: true, maxSockets: 8, maxFreeSockets: 2 })
      : new HttpAgent({ keepAlive: true, maxSockets: 8, maxFreeSockets: 2 });
    this.#fresh = this.#secure ? new HttpsAgent({ ...tls, keepAlive: false }) : new HttpAgent({ keepAlive: false });
  }

  /** POST /v3/maintenance/status: this member's view (answered locally, no quorum needed). */
  status(opts: CallOptions = {}): Promise<EtcdStatus> {
    return this.#post('/v3/maintenance/status', {}, 'read', opts, (o) => {
      const header = optObject(o, 'header');
      const dbSizeInUse = optInt64(o, 'dbSizeInUse');
      const dbSizeQuota = optInt64(o, 'dbSizeQuota');
      const status: EtcdStatus = {
        memberId: int64(header, 'member_id'),
        leaderId: int64(o, 'leader'),
        version: str(o, 'version'),
        dbSize: count(o, 'dbSize'),
        raftIndex: int64(o, 'raftIndex'),
        raftTerm: int64(o, 'raftTerm'),
        revision: int64(header, 'revision'),
        clusterId: int64(header, 'cluster_id'),
        isLearner: bool(o, 'isLearner'),
        errors: strings(o, 'errors'),
      };
      if (dbSizeInUse !== undefined) status.dbSizeInUse = Number(dbSizeInUse);
      if (dbSizeQuota !== undefined) status.dbSizeQuota = Number(dbSizeQuota);
      const applied = optInt64(o, 'raftAppliedIndex');
      if (applied !== undefined) status.raftAppliedIndex = applied;
      const storageVersion = str(o, 'storageVersion');
      if (storageVersion) status.storageVersion = storageVersion;
      // 3.5 has no such field; 3.6 sends {} when no downgrade is in flight.
      if (o.downgradeInfo !== undefined && o.downgradeInfo !== null) {
        const downgrade = optObject(o, 'downgradeInfo');
        const target = str(downgrade, 'targetVersion');
        status.downgrade = { enabled: bool(downgrade, 'enabled'), ...(target ? { targetVersion: target } : {}) };
      }
      return status;
    });
  }

  /**
   * POST /v3/cluster/member/list. By default this member's local view; `linearizable` makes it go
   * through the leader and a quorum, so it reflects every committed membership change.
   */
  memberList(opts: CallOptions & { linearizable?: boolean } = {}): Promise<Member[]> {
    const body = opts.linearizable ? { linearizable: true } : {};
    return this.#post('/v3/cluster/member/list', body, 'read', opts, (o) => list(o, 'members').map(decodeMember));
  }

  /** POST /v3/cluster/member/add. Not retried: after an unanswered add, look for the peer URL in memberList. */
  async memberAdd(peerURLs: string[], opts: CallOptions & { learner?: boolean } = {}): Promise<{ member: Member; members: Member[] }> {
    if (peerURLs.length === 0) throw new TypeError('memberAdd needs at least one peer URL');
    const body = opts.learner ? { peerURLs, isLearner: true } : { peerURLs };
    return this.#post('/v3/cluster/member/add', body, 'write', opts, (o) => ({
      member: decodeMember(asObject(o.member, 'member')),
      members: list(o, 'members').map(decodeMember),
    }));
  }

  /** POST /v3/cluster/member/remove; returns the remaining members. Not retried (MemberNotFoundError after a lost answer means it was applied). */
  memberRemove(id: string, opts: CallOptions = {}): Promise<Member[]> {
    return this.#memberCall('/v3/cluster/member/remove', id, opts);
  }

  /** POST /v3/cluster/member/promote; LearnerNotReadyError while the learner is still catching up. Not retried. */
  memberPromote(id: string, opts: CallOptions = {}): Promise<Member[]> {
    return this.#memberCall('/v3/cluster/member/promote', id, opts);
  }

  /**
   * POST /v3/cluster/member/update: the member's peer URLs (its client URLs are what it advertises itself). Not
   * retried: after an unanswered update, look for the URL in memberList.
   */
  async memberUpdate(id: string, peerURLs: string[], opts: CallOptions = {}): Promise<Member[]> {
    checkId(id);
    if (peerURLs.length === 0) throw new TypeError('memberUpdate needs at least one peer URL');
    return this.#post('/v3/cluster/member/update', { ID: id, peerURLs }, 'write', opts, (o) => list(o, 'members').map(decodeMember));
  }

  /** POST /v3/maintenance/transfer-leadership. Must reach the current leader (NotLeaderError otherwise). Not retried. */
  async moveLeader(targetId: string, opts: CallOptions = {}): Promise<void> {
    checkId(targetId);
    await this.#post('/v3/maintenance/transfer-leadership', { targetID: targetId }, 'write', opts, () => undefined);
  }

  /**
   * POST /v3/maintenance/downgrade (3.6+): VALIDATE checks that `version` (a minor, "3.5") is exactly one minor
   * below the cluster version with no downgrade in flight; ENABLE does that check again and proposes the
   * downgrade through raft (the cluster version moves to it at once, and every member migrates its storage
   * version); CANCEL ends one in flight. Answers with the cluster version. Not retried: after an unanswered
   * ENABLE, read status().downgrade (a second ENABLE is refused once the cluster version moved).
   */
  async downgrade(action: 'VALIDATE' | 'ENABLE' | 'CANCEL', version: string, opts: CallOptions = {}): Promise<string> {
    return this.#post('/v3/maintenance/downgrade', { action, version }, 'write', opts, (o) => str(o, 'version'));
  }

  /** POST /v3/maintenance/alarm (GET): the cluster's active alarms. */
  alarms(opts: CallOptions = {}): Promise<Alarm[]> {
    return this.#post('/v3/maintenance/alarm', { action: 'GET' }, 'read', opts, decodeAlarms);
  }

  /** POST /v3/maintenance/alarm (DEACTIVATE) for one alarm as alarms() listed it, like `etcdctl alarm disarm` does for each. */
  async disarm(alarm: Alarm, opts: CallOptions = {}): Promise<void> {
    checkId(alarm.memberId);
    await this.#post('/v3/maintenance/alarm', { action: 'DEACTIVATE', memberID: alarm.memberId, alarm: alarm.alarm }, 'write', opts, () => undefined);
  }

  /**
   * POST /v3/kv/compaction: drops every key revision older than `revision` (cluster-wide, through raft). With
   * `physical`, it answers only once every member has applied it to its backend, so the space it frees is
   * there for a defragmentation right after. A revision already compacted is refused with OutOfRange ("mvcc:
   * required revision has been compacted"): for an idempotent caller that is "done". Not retried.
   */
  async compact(revision: string, opts: CallOptions & { physical?: boolean } = {}): Promise<void> {
    if (!/^[1-9][0-9]*$/.test(revision)) throw new RangeError(`not a store revision: ${JSON.stringify(revision)}`);
    await this.#post('/v3/kv/compaction', { revision, ...(opts.physical ? { physical: true } : {}) }, 'write', opts, () => undefined);
  }

  /**
   * POST /v3/maintenance/defragment: rewrites THIS member's backend file without its free pages (etcd's
   * defragmentation is per member, never through raft). The member serves no reads or writes while it runs,
   * which takes time in proportion to its database: pass a `timeoutMs` sized to it. Not retried (a second
   * defragmentation is harmless, but a lost answer is no reason to block the member twice).
   */
  async defragment(opts: CallOptions = {}): Promise<void> {
    await this.#post('/v3/maintenance/defragment', {}, 'write', opts, () => undefined);
  }

  /**
   * GET /version (served by every member on its client URL, answered locally). The cluster version is what
   * decides whether members may still go back to an older minor binary: once it has moved up, an older etcd
   * refuses to start ("cluster cannot be downgraded").
   */
  async version(opts: CallOptions = {}): Promise<Versions> {
    const path = '/version';
    const reply = await this.#exchange('GET', path, undefined, 'read', opts);
    const body = this.#parse(path, reply);
    if (reply.status < 200 || reply.status >= 300) throw this.#failure(path, reply, body);
    try {
      const o = asObject(body, 'version');
      const server = str(o, 'etcdserver');
      if (!server) throw new WireError('etcdserver: missing');
      const cluster = str(o, 'etcdcluster');
      const storage = str(o, 'storage');
      return { server, ...(cluster && cluster !== 'not_decided' ? { cluster } : {}), ...(storage ? { storage } : {}) };
    } catch (err) {
      if (err instanceof WireError) throw new EtcdProtocolError(this.endpoint, path, reply.status, err.message);
      throw err;
    }
  }

  /**
   * GET /health. EtcdUnavailableError when there is no answer: silence is not "unhealthy". `exclude`: alarms
   * that do not count (`/health?exclude=NOSPACE`, etcd 3.4.23+, 3.5, 3.6), as a member's readiness probe asks.
   */
  async healthCheck(opts: CallOptions & { exclude?: AlarmType[] } = {}): Promise<Health> {
    const path = `/health${opts.exclude?.length ? `?${opts.exclude.map((a) => `exclude=${encodeURIComponent(a)}`).join('&')}` : ''}`;
    const reply = await this.#exchange('GET', path, undefined, 'read', opts);
    const body = this.#parse(path, reply);
    if (typeof body === 'object' && body !== null && 'health' in body) {
      const o = body as JsonObject;
      const health = typeof o.health === 'string' ? o.health : String(o.health);
      return { healthy: health === 'true', reason: typeof o.reason === 'string' ? o.reason : '' };
    }
    throw this.#failure(path, reply, body);
  }

  async health(opts: CallOptions = {}): Promise<boolean> {
    return (await this.healthCheck(opts)).healthy;
  }

  /**
   * POST /v3/kv/put; returns the revision of the write. Not retried. A revision is required in the
   * answer: only etcd's header proves the write was committed (a bare 200 from something else does not).
   */
  put(key: string, value: string, opts: CallOptions = {}): Promise<{ revision: string }> {
    return this.#post('/v3/kv/put', { key: toBase64(key), value: toBase64(value) }, 'write', opts, (o) => ({ revision: headerRevision(o) }));
  }

  /** POST /v3/kv/range for one key; linearizable unless `serializable`. */
  async get(key: string, opts: CallOptions & { serializable?: boolean; revision?: string } = {}): Promise<KeyValue | undefined> {
    const { kvs } = await this.range(key, opts);
    const first = kvs[0];
    return first === undefined ? undefined : { value: first.value, modRevision: first.modRevision };
  }

  /** POST /v3/kv/range: the keys from `key` up to `end`, in key order; linearizable unless `serializable`. */
  async range(key: string, opts: RangeOptions = {}): Promise<RangeResult> {
    const body: JsonObject = { key: toBase64(key) };
    if (opts.end !== undefined) body.range_end = toBase64(opts.end);
    if (opts.limit !== undefined) {
      if (!Number.isSafeInteger(opts.limit) || opts.limit < 1) throw new RangeError(`limit must be a positive integer: ${opts.limit}`);
      body.limit = opts.limit;
    }
    if (opts.revision !== undefined) {
      if (!/^[1-9][0-9]*$/.test(opts.revision)) throw new RangeError(`not a store revision: ${JSON.stringify(opts.revision)}`);
      body.revision = opts.revision;
    }
    if (opts.serializable) body.serializable = true;
    return this.#post('/v3/kv/range', body, 'read', opts, (o) => ({
      kvs: list(o, 'kvs').map(decodeKv),
      more: bool(o, 'more'),
      count: count(o, 'count'),
      revision: headerRevision(o),
    }));
  }

  /** POST /v3/kv/deleterange: `key`, or the keys from `key` up to `end`. Not retried. */
  delete(key: string, opts: CallOptions & { end?: string | Uint8Array } = {}): Promise<{ deleted: number; revision: string }> {
    const body: JsonObject = { key: toBase64(key) };
    if (opts.end !== undefined) body.range_end = toBase64(opts.end);
    return this.#post('/v3/kv/deleterange', body, 'write', opts, (o) => ({ deleted: count(o, 'deleted'), revision: headerRevision(o) }));
  }

  /** Closes pooled connections; in-flight calls still finish. */
  /** Calls sent and not yet answered, failed or timed out: a client with any must not be closed as unused. */
  get inFlight(): number {
    return this.#inFlight;
  }

  close(): void {
    this.#pool.destroy();
    this.#fresh.destroy();
  }

  async #memberCall(path: string, id: string, opts: CallOptions): Promise<Member[]> {
    checkId(id);
    return this.#post(path, { ID: id }, 'write', opts, (o) => list(o, 'members').map(decodeMember));
  }

  async #post<T>(path: string, body: JsonObject, kind: Kind, opts: CallOptions, decode: (o: JsonObject) => T): Promise<T> {
    const reply = await this.#exchange('POST', path, JSON.stringify(body), kind, opts);
    const parsed = this.#parse(path, reply);
    if (reply.status < 200 || reply.status >= 300) throw this.#failure(path, reply, parsed);
    try {
      return decode(asObject(parsed, 'response'));
    } catch (err) {
      if (err instanceof WireError) throw new EtcdProtocolError(this.endpoint, path, reply.status, err.message);
      throw err;
    }
  }

  #parse(path: string, reply: Reply): unknown {
    try {
      return JSON.parse(reply.text) as unknown;
    } catch {
      throw new EtcdProtocolError(this.endpoint, path, reply.status, `not JSON: ${reply.text.slice(0, 200)}`);
    }
  }

  /** The gateway's error body: {"code":5,"message":"..."} (3.5 also repeats the message as "error"). */
  #failure(path: string, reply: Reply, body: unknown): Error {
    if (typeof body === 'object' && body !== null && typeof (body as JsonObject).code === 'number') {
      const o = body as JsonObject;
      const message = typeof o.message === 'string' ? o.message : typeof o.error === 'string' ? o.error : '';
      return etcdError(this.endpoint, path, reply.status, o.code as number, message);
    }
    return new EtcdProtocolError(this.endpoint, path, reply.status, reply.text.slice(0, 200));
  }

  /** One call under one deadline; a read may be sent a second time after a connection error. */
  async #exchange(method: string, path: string, payload: string | undefined, kind: Kind, opts: CallOptions): Promise<Reply> {
    opts.signal?.throwIfAborted();
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, deadline.signal]) : deadline.signal;
    this.#inFlight++;
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.#send(method, path, payload, kind, signal);
        } catch (err) {
          if (opts.signal?.aborted) throw opts.signal.reason;
          if (deadline.signal.aborted) throw new EtcdUnavailableError(this.endpoint, path, 'timeout', `no answer within ${timeoutMs} ms`, err);
          if (err instanceof EtcdProtocolError) throw err;
          const reason = unavailableReason(err, this.#secure);
          if (kind === 'read' && attempt === 1 && (reason === 'reset' || reason === 'network')) continue;
          throw new EtcdUnavailableError(this.endpoint, path, reason, err instanceof Error ? err.message : String(err), err);
        }
      }
    } finally {
      this.#inFlight--;
      clearTimeout(timer);
    }
  }

  #send(method: string, path: string, payload: string | undefined, kind: Kind, signal: AbortSignal): Promise<Reply> {
    return new Promise<Reply>((resolve, reject) => {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (payload !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = String(Buffer.byteLength(payload));
      }
      const options: RequestOptions = { method, headers, signal, agent: kind === 'read' ? this.#pool : this.#fresh };
      const onResponse = (res: IncomingMessage): void => {
        const chunks: Buffer[] = [];
        let size = 0;
        let done = false;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) {
            reject(new EtcdProtocolError(this.endpoint, path, res.statusCode ?? 0, `response larger than ${MAX_RESPONSE_BYTES} bytes`));
            res.destroy();
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          done = true;
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', reject);
        // Closed before the body ended: the connection went away mid-answer.
        res.on('close', () => {
          if (!done) reject(Object.assign(new Error('connection closed before the response ended'), { code: 'ECONNRESET' }));
        });
      };
      const url = new URL(path, this.#base);
      const req = this.#secure ? httpsRequest(url, options, onResponse) : httpRequest(url, options, onResponse);
      req.on('error', reject);
      req.end(payload);
    });
  }
}

function checkId(id: string): void {
  if (!isMemberId(id)) throw new RangeError(`not a decimal uint64 member ID: ${JSON.stringify(id)}`);
}

function decodeMember(value: unknown): Member {
  const o = asObject(value, 'member');
  return {
    id: int64(o, 'ID'),
    name: str(o, 'name'),
    peerURLs: strings(o, 'peerURLs'),
    clientURLs: strings(o, 'clientURLs'),
    isLearner: bool(o, 'isLearner'),
  };
}

/**
 * The range end that covers every key starting with `prefix`: its bytes with the last one below 0xff
 * incremented (as clientv3.GetPrefixRangeEnd). Bytes, because the result need not be valid UTF-8.
 */
export function prefixEnd(prefix: string): Uint8Array {
  const end = Buffer.from(prefix, 'utf8');
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]! += 1;
      return new Uint8Array(end.subarray(0, i + 1));
    }
  }
  // Only for '' (UTF-8 never holds a 0xff byte): etcd reads "\0" as the end of the keyspace.
  return new Uint8Array([0]);
}

function decodeKv(value: unknown): StoredKey {
  const kv = asObject(value, 'kv');
  return {
    key: fromBase64(str(kv, 'key')),
    value: fromBase64(str(kv, 'value')),
    createRevision: int64(kv, 'create_revision'),
    modRevision: int64(kv, 'mod_revision'),
    version: int64(kv, 'version'),
  };
}

/** header.revision of a KV answer; a store revision is never 0, so a missing one means no etcd answered. */
function headerRevision(o: JsonObject): string {
  const revision = int64(optObject(o, 'header'), 'revision');
  if (revision === '0') throw new WireError('header.revision: missing');
  return revision;
}

function decodeAlarms(o: JsonObject): Alarm[] {
  return list(o, 'alarms').map((value) => {
    const a = asObject(value, 'alarm');
    return { memberId: int64(a, 'memberID'), alarm: str(a, 'alarm', 'NONE') };
  });
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|EPROTO$)|CERT|SELF_SIGNED|UNABLE_TO_/;

function unavailableReason(err: unknown, secure: boolean): UnavailableReason {
  const code = typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : '';
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ETIMEDOUT') return 'timeout';
  if (secure && TLS_CODE.test(code)) return 'tls';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED' || code === 'ERR_STREAM_PREMATURE_CLOSE') return 'reset';
  return 'network';
}
