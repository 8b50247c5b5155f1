// Discovery: which groups, versions and resources the API server serves, read from its discovery documents
// (`/api`, `/apis`, `/api/v1`, `/apis/<group>/<version>`), and a group/kind resolved to the resource that
// serves it (plural, scope, preferred version, verbs) as a ResourceType the client and informers take.
//
// Nothing is cached between calls: each `resolveKinds` reads the documents it needs once, and the caller
// decides how often to ask again (a CRD can be installed or removed at any time). The documents are
// checked as they are parsed, so a proxy's error page or a truncated body is an error naming the path,
// never a kind silently reported as missing. A version whose document cannot be read (an aggregated API
// whose backend is down answers 503) makes its kinds `unavailable`, not `missing`: a failed request is not
// evidence that a kind is gone.
import type { Client, RequestOptions } from '../client/client.ts';
import { NotFoundError } from '../client/errors.ts';
import { resource, type OpenObject, type ResourceType } from '../client/resources.ts';

/** One version of a group (metav1.GroupVersionForDiscovery). */
export interface GroupVersionForDiscovery {
  /** `apps/v1`; `v1` for the core group. */
  groupVersion: string;
  version: string;
}

/** A served API group (metav1.APIGroup); the core group has the name ''. */
export interface APIGroup {
  name: string;
  /** In the server's order of preference. */
  versions: GroupVersionForDiscovery[];
  preferredVersion?: GroupVersionForDiscovery;
}

/** A resource of one group version (metav1.APIResource). Subresources are named `<resource>/<sub>`. */
export interface APIResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  /** Set when the resource's kind lives in another group (a subresource such as `deployments/scale`). */
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
}

/** The resources of one group version (metav1.APIResourceList). */
export interface APIResourceList {
  groupVersion: string;
  resources: APIResource[];
}

/** A kind by group, without a version; `group` is '' for the core group. */
export interface GroupKind {
  group: string;
  kind: string;
}

/** What discovery found for a kind: where it is served, and how it can be used. */
export interface DiscoveredKind extends GroupKind {
  /** The version chosen: the group's preferred version when it serves the kind, else the first that does. */
  version: string;
  /** `apps/v1`, `v1`. */
  apiVersion: string;
  /** The resource (plural), e.g. `deployments`. */
  resource: string;
  singular: string;
  namespaced: boolean;
  verbs: readonly string[];
  shortNames: readonly string[];
  /** Whether `version` is the group's preferred version. */
  preferred: boolean;
  /** For the client and informers; objects are typed loosely. */
  type: ResourceType<OpenObject>;
}

/** A kind the API server does not serve (or not with the verbs asked for), and why, in words. */
export interface MissingKind extends GroupKind {
  why: string;
}

/** A kind whose fate is unknown: the documents that could have served it could not be read. */
export interface UnavailableKind extends GroupKind {
  /** The failures, one per group version (`GET /apis/metrics.k8s.io/v1beta1: 503 ServiceUnavailable: …`). */
  errors: string[];
}

export interface KindResolution {
  found: DiscoveredKind[];
  missing: MissingKind[];
  unavailable: UnavailableKind[];
}

export interface ResolveOptions {
  /** Verbs the resource must support (e.g. `['list', 'watch']` for an informer); a kind without them is missing. */
  verbs?: readonly string[];
  signal?: AbortSignal;
}

/** The client method discovery uses, so tests can pass recorded documents. */
export type DiscoveryTransport = Pick<Client, 'request'>;

/** A discovery document that is not what the API server sends (a proxy's page, a truncated body). */
export class DiscoveryDocumentError extends Error {
  readonly path: string;
  constructor(path: string, problem: string) {
    super(`discovery document ${path}: ${problem}`);
    this.name = 'DiscoveryDocumentError';
    this.path = path;
  }
}

/** A kind's discovery documents could not be read: whether it is served is not known. */
export class KindUnavailableError extends Error {
  readonly kind: GroupKind;
  readonly errors: readonly string[];
  constructor(unavailable: UnavailableKind) {
    super(`discovery of ${groupKindString(unavailable)} failed: ${unavailable.errors.join('; ')}`);
    this.name = 'KindUnavailableError';
    this.kind = { group: unavailable.group, kind: unavailable.kind };
    this.errors = unavailable.errors;
  }
}

/** `Deployment.apps`, `ConfigMap`: how kubectl names a kind with its group. */
export function groupKindString({ group, kind }: GroupKind): string {
  return group ? `${kind}.${group}` : kind;
}

/** The discovery document of a group version: `/api/v1` for the core group, `/apis/<group>/<version>` otherwise. */
export function groupVersionPath(groupVersion: string): string {
  return groupVersion.includes('/') ? `/apis/${groupVersion}` : `/api/${groupVersion}`;
}

/** A group's versions, the preferred one first, then the others in the server's order. */
export function versionsByPreference(group: APIGroup): GroupVersionForDiscovery[] {
  const preferred = group.preferredVersion;
  if (!preferred) return [...group.versions];
  return [preferred, ...group.versions.filter((v) => v.groupVersion !== preferred.groupVersion)];
}

/** The resource serving `kind` itself in a group version (not one of its subresources, which share its kind). */
export function findResource(list: APIResourceList, kind: string): APIResource | undefined {
  return list.resources.find((r) => r.kind === kind && !r.name.includes('/'));
}

// ---- parsing: unknown JSON in, typed documents out, or an error naming what is wrong ----

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function expectObject(value: unknown, path: string, where: string): JsonObject {
  if (!isObject(value)) throw new DiscoveryDocumentError(path, `${where} is not an object${typeof value === 'string' ? ` (the body was text: ${JSON.stringify(value.slice(0, 120))})` : ''}`);
  return value;
}

function expectString(obj: JsonObject, key: string, path: string, where: string): string {
  const value = obj[key];
  if (typeof value !== 'string') throw new DiscoveryDocumentError(path, `${where}.${key} is not a string`);
  return value;
}

function expectArray(obj: JsonObject, key: string, path: string, where: string, optional = false): unknown[] {
  const value = obj[key];
  if (value === undefined || value === null) {
    if (optional) return [];
    throw new DiscoveryDocumentError(path, `${where}.${key} is missing`);
  }
  if (!Array.isArray(value)) throw new DiscoveryDocumentError(path, `${where}.${key} is not a list`);
  return value;
}

function stringList(obj: JsonObject, key: string, path: string, where: string): string[] {
  return expectArray(obj, key, path, where, true).map((v, i) => {
    if (typeof v !== 'string') throw new DiscoveryDocumentError(path, `${where}.${key}[${i}] is not a string`);
    return v;
  });
}

function expectKind(obj: JsonObject, kind: string, path: string): void {
  // Older servers and some proxies leave `kind` out; a different kind is a different document.
  if (obj['kind'] !== undefined && obj['kind'] !== kind) throw new DiscoveryDocumentError(path, `expected kind ${kind}, got ${JSON.stringify(obj['kind'])}`);
}

function groupVersion(value: unknown, path: string, where: string): GroupVersionForDiscovery {
  const obj = expectObject(value, path, where);
  return { groupVersion: expectString(obj, 'groupVersion', path, where), version: expectString(obj, 'version', path, where) };
}

/** `/api` (metav1.APIVersions): the core group's versions. */
export function parseAPIVersions(document: unknown, path = '/api'): string[] {
  const obj = expectObject(document, path, 'the document');
  expectKind(obj, 'APIVersions', path);
  return stringList(obj, 'versions', path, 'the document');
}

/** `/apis` (metav1.APIGroupList): every group but the core one. */
export function parseAPIGroupList(document: unknown, path = '/apis'): APIGroup[] {
  const obj = expectObject(document, path, 'the document');
  expectKind(obj, 'APIGroupList', path);
  return expectArray(obj, 'groups', path, 'the document').map((value, i) => {
    const where = `groups[${i}]`;
    const g = expectObject(value, path, where);
    const group: APIGroup = {
      name: expectString(g, 'name', path, where),
      versions: expectArray(g, 'versions', path, where).map((v, j) => groupVersion(v, path, `${where}.versions[${j}]`)),
    };
    if (g['preferredVersion'] !== undefined) group.preferredVersion = groupVersion(g['preferredVersion'], path, `${where}.preferredVersion`);
    return group;
  });
}

/** `/api/v1`, `/apis/<group>/<version>` (metav1.APIResourceList). */
export function parseAPIResourceList(document: unknown, path: string): APIResourceList {
  const obj = expectObject(document, path, 'the document');
  expectKind(obj, 'APIResourceList', path);
  const resources = expectArray(obj, 'resources', path, 'the document', true).map((value, i): APIResource => {
    const where = `resources[${i}]`;
    const r = expectObject(value, path, where);
    const namespaced = r['namespaced'];
    if (typeof namespaced !== 'boolean') throw new DiscoveryDocumentError(path, `${where}.namespaced is not a boolean`);
    const parsed: APIResource = {
      name: expectString(r, 'name', path, where),
      singularName: typeof r['singularName'] === 'string' ? r['singularName'] : '',
      namespaced,
      kind: expectString(r, 'kind', path, where),
      verbs: stringList(r, 'verbs', path, where),
    };
    if (typeof r['group'] === 'string') parsed.group = r['group'];
    if (typeof r['version'] === 'string') parsed.version = r['version'];
    if (r['shortNames'] !== undefined) parsed.shortNames = stringList(r, 'shortNames', path, where);
    if (r['categories'] !== undefined) parsed.categories = stringList(r, 'categories', path, where);
    return parsed;
  });
  return { groupVersion: expectString(obj, 'groupVersion', path, 'the document'), resources };
}

/** The core group as an APIGroup: its versions from `/api`, the first one preferred. */
function coreGroup(versions: readonly string[]): APIGroup {
  const list = versions.map((v) => ({ groupVersion: v, version: v }));
  return { name: '', versions: list, ...(list[0] ? { preferredVersion: list[0] } : {}) };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The API server's discovery documents, read through the runtime's client. */
export class DiscoveryClient {
  readonly #client: DiscoveryTransport;

  constructor(client: DiscoveryTransport) {
    this.#client = client;
  }

  async #get(path: string, signal: AbortSignal | undefined): Promise<unknown> {
    const options: RequestOptions = signal ? { signal } : {};
    return this.#client.request<unknown>('GET', path, undefined, options);
  }

  /** The core group's versions (`/api`), e.g. `['v1']`. */
  async coreVersions(signal?: AbortSignal): Promise<string[]> {
    return parseAPIVersions(await this.#get('/api', signal));
  }

  /** Every served group, the core group first (name ''), then `/apis` in the server's order. */
  async groups(signal?: AbortSignal): Promise<APIGroup[]> {
    const [core, named] = await Promise.all([this.coreVersions(signal), this.#get('/apis', signal).then((d) => parseAPIGroupList(d))]);
    return [coreGroup(core), ...named];
  }

  /** The resources of one group version (`v1`, `apps/v1`). */
  async resources(groupVersion: string, signal?: AbortSignal): Promise<APIResourceList> {
    const path = groupVersionPath(groupVersion);
    return parseAPIResourceList(await this.#get(path, signal), path);
  }

  /**
   * Resolves each kind to the resource serving it: in its group's preferred version when that version has
   * it, else in the first other version that does (a kind may exist only in an older version). Reads `/api`
   * only for core kinds, `/apis` only for the others, and each group version's document at most once.
   * Rejects only when `/api` or `/apis` cannot be read; a group version that cannot be read makes its kinds
   * unavailable.
   */
  async resolveKinds(kinds: readonly GroupKind[], options: ResolveOptions = {}): Promise<KindResolution> {
    const { signal } = options;
    const verbs = options.verbs ?? [];
    const wanted = new Set(kinds.map((k) => k.group));
    const groups = new Map<string, APIGroup>();
    const [core, named] = await Promise.all([
      wanted.has('') ? this.coreVersions(signal) : undefined,
      [...wanted].some((g) => g !== '') ? this.#get('/apis', signal).then((d) => parseAPIGroupList(d)) : undefined,
    ]);
    if (core) groups.set('', coreGroup(core));
    for (const group of named ?? []) if (wanted.has(group.name)) groups.set(group.name, group);

    const documents = new Map<string, Promise<APIResourceList | undefined>>();
    // undefined: the version is gone since /apis listed it (404); a rejection: it could not be read.
    const document = (gv: string): Promise<APIResourceList | undefined> => {
      let got = documents.get(gv);
      if (!got) {
        got = this.resources(gv, signal).catch((err: unknown) => {
          if (err instanceof NotFoundError) return undefined;
          throw err;
        });
        documents.set(gv, got);
      }
      return got;
    };

    const resolution: KindResolution = { found: [], missing: [], unavailable: [] };
    for (const gk of kinds) {
      const group = groups.get(gk.group);
      if (!group) {
        resolution.missing.push({ ...gk, why: gk.group ? `the API server serves no group ${gk.group}` : 'the API server serves no core group' });
        continue;
      }
      const errors: string[] = [];
      let lacking: { version: string; resource: APIResource } | undefined;
      let found: DiscoveredKind | undefined;
      for (const v of versionsByPreference(group)) {
        let list: APIResourceList | undefined;
        try {
          list = await document(v.groupVersion);
        } catch (err) {
          if (signal?.aborted) throw err;
          errors.push(`GET ${groupVersionPath(v.groupVersion)}: ${errorText(err)}`);
          continue;
        }
        const match = list && findResource(list, gk.kind);
        if (!match) continue;
        if (!verbs.every((verb) => match.verbs.includes(verb))) {
          lacking ??= { version: v.groupVersion, resource: match };
          continue;
        }
        found = {
          group: gk.group,
          kind: gk.kind,
          version: v.version,
          apiVersion: v.groupVersion,
          resource: match.name,
          singular: match.singularName,
          namespaced: match.namespaced,
          verbs: match.verbs,
          shortNames: match.shortNames ?? [],
          preferred: v.groupVersion === group.preferredVersion?.groupVersion,
          type: resource<OpenObject>(v.groupVersion, gk.kind, match.name, match.namespaced),
        };
        break;
      }
      if (found) resolution.found.push(found);
      else if (errors.length > 0) resolution.unavailable.push({ ...gk, errors });
      else if (lacking) {
        const absent = verbs.filter((verb) => !lacking.resource.verbs.includes(verb));
        resolution.missing.push({ ...gk, why: `${lacking.resource.name} (${lacking.version}) does not support ${absent.join(', ')}${lacking.resource.verbs.length ? `, only ${lacking.resource.verbs.join(', ')}` : ''}` });
      } else {
        const served = group.versions.map((v) => v.groupVersion).join(', ');
        resolution.missing.push({ ...gk, why: `no served version of ${gk.group ? `group ${gk.group}` : 'the core group'} (${served || 'none'}) has kind ${gk.kind}` });
      }
    }
    return resolution;
  }

  /**
   * One kind: what `resolveKinds` found, undefined when it is missing; rejects with a KindUnavailableError
   * when its documents cannot be read.
   */
  async resolveKind(kind: GroupKind, options: ResolveOptions = {}): Promise<DiscoveredKind | undefined> {
    const { found, unavailable } = await this.resolveKinds([kind], options);
    if (unavailable[0]) throw new KindUnavailableError(unavailable[0]);
    return found[0];
  }
}
