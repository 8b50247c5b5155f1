// Who may read /metrics, decided as controller-runtime's filters.WithAuthenticationAndAuthorization does: the
// caller's bearer token checked with a TokenReview, then a SubjectAccessReview for the non-resource URL (verb
// `get` on `/metrics`). Bind a ClusterRole with `nonResourceURLs: ["/metrics"], verbs: ["get"]` to the scraper.
//
// Answers are cached for a short while, so a Prometheus scraping every 15 s costs two API calls every few
// scrapes rather than every one; the cache is bounded in entries, so a flood of random tokens costs API calls
// (bounded by the server's in-flight limit) but never memory.
import { createHash } from 'node:crypto';
import type { Client } from '../client/client.ts';

/** `allowed`: serve; `unauthenticated`: 401 (no token, or the API server does not know it); `forbidden`: 403. */
export type MetricsDecision = 'allowed' | 'unauthenticated' | 'forbidden';

export interface MetricsAuthorizerOptions {
  /** How long a decision is reused. Default 10 s: a revoked binding stops working within it. */
  ttlMs?: number;
  /** Decisions kept at most (the oldest go first). Default 1,000. */
  maxEntries?: number;
  /** The non-resource path asked about. Default `/metrics`. */
  path?: string;
  now?: () => number;
}

interface TokenReviewReply {
  status?: { authenticated?: boolean; user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> }; error?: string };
}

interface SubjectAccessReviewReply {
  status?: { allowed?: boolean; reason?: string };
}

// The paths are template literals so that an operator's RBAC scan (etcd-operator test/unit/rbac.test.ts) reads them.
export class MetricsAuthorizer {
  readonly #client: Client;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #path: string;
  readonly #now: () => number;
  /** Insertion-ordered: the first entry is the oldest. Keys are token hashes, never tokens. */
  readonly #decisions = new Map<string, { decision: MetricsDecision; expiresMs: number }>();

  constructor(client: Client, options: MetricsAuthorizerOptions = {}) {
    this.#client = client;
    this.#ttlMs = options.ttlMs ?? 10_000;
    this.#maxEntries = options.maxEntries ?? 1_000;
    this.#path = options.path ?? '/metrics';
    this.#now = options.now ?? Date.now;
  }

  /** Decisions cached now (tests, and a bound worth seeing). */
  get size(): number {
    return this.#decisions.size;
  }

  /** The decision for an `Authorization` header's value (undefined: none sent). API errors reject: the caller answers 500. */
  async decide(authorization: string | undefined): Promise<MetricsDecision> {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    if (!token) return 'unauthenticated';
    const key = createHash('sha256').update(token).digest('hex');
    const cached = this.#decisions.get(key);
    if (cached && cached.expiresMs > this.#now()) return cached.decision;
    this.#decisions.delete(key);
    const decision = await this.#review(token);
    while (this.#decisions.size >= this.#maxEntries) this.#decisions.delete(this.#decisions.keys().next().value!);
    this.#decisions.set(key, { decision, expiresMs: this.#now() + this.#ttlMs });
    return decision;
  }

  async #review(token: string): Promise<MetricsDecision> {
    const review = await this.#client.request<TokenReviewReply>('POST', `/apis/authentication.k8s.io/v1/tokenreviews`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    });
    const user = review.status?.user;
    if (!review.status?.authenticated || !user) return 'unauthenticated';
    const access = await this.#client.request<SubjectAccessReviewReply>('POST', `/apis/authorization.k8s.io/v1/subjectaccessreviews`, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: user.username,
        ...(user.uid !== undefined ? { uid: user.uid } : {}),
        ...(user.groups ? { groups: user.groups } : {}),
        ...(user.extra ? { extra: user.extra } : {}),
        nonResourceAttributes: { path: this.#path, verb: 'get' },
      },
    });
    return access.status?.allowed ? 'allowed' : 'forbidden';
  }
}
