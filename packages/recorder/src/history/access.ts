// Who may read which records: the API server decides. A caller's bearer token is checked with a TokenReview,
// and each read with a SubjectAccessReview for that user: reading an object's records needs `get` on the
// object itself (so resourceNames rules work), listing records of a kind in a namespace needs `list` on that
// kind there, exactly as reading the live objects would. The records of Secrets are as private as Secrets.
//
// Decisions are cached briefly (10 s, as the API server's own delegated authentication and authorization
// do), so a listing over many namespaces does not cost a review per object and per request.
import { createHash } from 'node:crypto';
import { DiscoveryClient, resource, subjectAccessReview, SubjectAccessReviews, type Client, type KubeObject } from '@quorum/runtime';
import type { GroupKind } from '../api/changerecorder.ts';
import { groupKindName } from '../recorder/discovery.ts';

export type Verb = 'get' | 'list';

export interface AccessCheck {
  verb: Verb;
  group: string;
  kind: string;
  /** The namespace; '' for a cluster-scoped kind, or for every namespace at once. */
  namespace: string;
  name?: string;
}

export interface Decision {
  allowed: boolean;
  /** Why not, in the API server's words when it gave some. */
  reason: string;
}

/** What one caller may read. */
export interface Access {
  /** Who the caller is, for logs and messages. */
  readonly user: string;
  check(request: AccessCheck): Promise<Decision>;
}

/** Reading records from a local path: the file system's permissions already decided. */
export function allowAll(user = 'local files'): Access {
  return { user, check: () => Promise.resolve({ allowed: true, reason: '' }) };
}

export interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

interface TokenReview extends KubeObject {
  spec: { token: string; audiences?: string[] };
  status?: { authenticated?: boolean; user?: UserInfo; error?: string };
}

export const TokenReviews = resource<TokenReview>('authentication.k8s.io/v1', 'TokenReview', 'tokenreviews', false);

export type ReviewClient = Pick<Client, 'create' | 'request'>;

/** How long a decision (an authentication, an authorization, a kind's resource) is reused. */
export const DECISION_TTL_MS = 10_000;
/** How long a kind's resource name, once found, is reused. */
export const KIND_TTL_MS = 60_000;
const MAX_CACHED = 4096;

/** A map whose entries expire, bounded: past `max` entries the oldest go. */
class TtlCache<V> {
  readonly #entries = new Map<string, { value: V; until: number }>();
  readonly #max: number;
  readonly #now: () => number;

  constructor(max: number, now: () => number) {
    this.#max = max;
    this.#now = now;
  }

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.until <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, until: this.#now() + ttlMs });
    while (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!);
  }
}

interface KindResource {
  resource: string;
}

export interface KubeAuthorizerOptions {
  now?: () => number;
}

/** TokenReview and SubjectAccessReview against the API server, as the recorder's own ServiceAccount. */
export class KubeAuthorizer {
  readonly #client: ReviewClient;
  readonly #users: TtlCache<UserInfo | null>;
  readonly #decisions: TtlCache<Decision>;
  readonly #kinds: TtlCache<KindResource | null>;

  constructor(client: ReviewClient, options: KubeAuthorizerOptions = {}) {
    const now = options.now ?? Date.now;
    this.#client = client;
    this.#users = new TtlCache(MAX_CACHED, now);
    this.#decisions = new TtlCache(MAX_CACHED, now);
    this.#kinds = new TtlCache(256, now);
  }

  /** The user a bearer token stands for; undefined when the API server does not accept it. */
  async authenticate(token: string): Promise<UserInfo | undefined> {
    // Only a hash of the token is kept, never the token.
    const key = createHash('sha256').update(token).digest('hex');
    const cached = this.#users.get(key);
    if (cached !== undefined) return cached ?? undefined;
    const review = await this.#client.create(TokenReviews, { apiVersion: TokenReviews.apiVersion, kind: TokenReviews.kind, metadata: {}, spec: { token } });
    const user = review.status?.authenticated && review.status.user?.username ? review.status.user : undefined;
    this.#users.set(key, user ?? null, DECISION_TTL_MS);
    return user;
  }

  access(user: UserInfo): Access {
    return { user: user.username, check: (request) => this.#check(user, request) };
  }

  async #check(user: UserInfo, request: AccessCheck): Promise<Decision> {
    const kind = await this.#resource(request);
    if (!kind) {
      return { allowed: false, reason: `the API server does not serve ${groupKindName(request)}, so who may read its records cannot be checked` };
    }
    const attributes = { verb: request.verb, group: request.group, resource: kind.resource, ...(request.namespace ? { namespace: request.namespace } : {}), ...(request.name ? { name: request.name } : {}) };
    const key = JSON.stringify([user.username, user.uid ?? '', [...(user.groups ?? [])].sort(), user.extra ?? {}, attributes]);
    const cached = this.#decisions.get(key);
    if (cached) return cached;
    const review = await this.#client.create(SubjectAccessReviews, subjectAccessReview(user, attributes));
    const allowed = review.status?.allowed === true && review.status.denied !== true;
    const where = request.namespace ? `in namespace ${request.namespace}` : 'at the cluster scope';
    const what = `${request.verb} ${kind.resource}${request.group ? `.${request.group}` : ''}${request.name ? ` ${JSON.stringify(request.name)}` : ''}`;
    const said = review.status?.reason || review.status?.evaluationError;
    const decision: Decision = { allowed, reason: allowed ? '' : `user ${JSON.stringify(user.username)} cannot ${what} ${where}${said ? ` (${said})` : ''}` };
    this.#decisions.set(key, decision, DECISION_TTL_MS);
    return decision;
  }

  async #resource(gk: GroupKind): Promise<KindResource | null> {
    const key = `${gk.group}/${gk.kind}`;
    const cached = this.#kinds.get(key);
    if (cached !== undefined) return cached;
    // A kind whose discovery fails rejects (KindUnavailableError): the endpoint answers 503, and nothing is cached.
    const found = await new DiscoveryClient(this.#client).resolveKind({ group: gk.group, kind: gk.kind });
    const kind = found ? { resource: found.resource } : null;
    this.#kinds.set(key, kind, kind ? KIND_TTL_MS : DECISION_TTL_MS);
    return kind;
  }
}
