// The ChangeRecorder reconciler: observe (the spec, other recorders' storage paths, discovery, the namespaces
// a selector picks), plan (the scopes to watch, plan.ts), act (open the store, start and stop watches, apply
// retention), report (status). Events from the watched kinds never reach it: they go to the recorder's
// session, which writes records; the reconcile only decides what is watched and reports how it goes.
import { writeStatus } from '@quorum/kit';
import type { Client, EventRecorder, Informer, Logger, Reconciler, Result } from '@quorum/runtime';
import type { ChangeRecorder, GroupKind } from '../api/changerecorder.ts';
import { applyDefaults, maxAgeMs, selectorString, validateSpec, type DefaultedSpec } from '../api/defaults.ts';
import { ChangeRecorders } from '../resources.ts';
import type { StoreLocation } from '../store/open-store.ts';
import { describeTarget, storageTarget, storeLocationOf } from '../store/target.ts';
import { groupKindName, resolveKinds, type Resolution } from './discovery.ts';
import {
  allKinds,
  kindVerdict,
  planTargets,
  requestedKinds,
  resolutionDue,
  resolutionLifetimeMs,
  storageRival,
  verdictKey,
  type CachedResolution,
  type KindVerdict,
} from './plan.ts';
import type { RecorderSession, SessionSettings } from './session.ts';
import { buildStatus, type StatusInput } from './status.ts';

export const FIELD_MANAGER = 'quorum-recorder';

/** The running sessions, one per ChangeRecorder. */
export interface Sessions {
  /** The recorder's session on `location`, opening it (and closing one on another location) as needed. */
  open(name: string, location: StoreLocation): Promise<RecorderSession>;
  close(name: string): Promise<void>;
}

export interface ReconcilerDeps {
  client: Pick<Client, 'mergePatch' | 'request'>;
  recorders: Pick<Informer<ChangeRecorder>, 'store'>;
  sessions: Sessions;
  /** The directory every recorder's storage path is relative to (the recorder's volume). */
  storageRoot: string;
  /** The directory the credentials Secrets of object stores are mounted below, one folder per Secret. */
  credentialsRoot: string;
  resolve?: (kinds: readonly GroupKind[], signal: AbortSignal) => Promise<Resolution>;
  /**
   * Why the admission webhook that tells users is not serving now, undefined while it serves; unset when the
   * recorder runs without it. Asked only for ChangeRecorders with spec.attribution.users.
   */
  usersWebhookProblem?: () => string | undefined;
  /** Where Warning events about the ChangeRecorder go (unknown kinds); none in tests that do not look. */
  events?: Pick<EventRecorder, 'record'>;
  now?: () => Date;
}

export { MISSING_KINDS_RETRY_MS, ABSENT_DEFAULTS_RETRY_MS } from './plan.ts';
/** While watches start or fail, status is refreshed this often. */
export const UNSETTLED_REFRESH_MS = 5_000;
/** The longest a retention sweep waits (timers cannot wait for weeks). */
const MAX_SWEEP_WAIT_MS = 3_600_000;

export function settingsOf(spec: DefaultedSpec): SessionSettings {
  return {
    cleaning: { status: !spec.ignoreStatusOnly, secrets: spec.secrets },
    retention: { maxVersionsPerObject: spec.retention.maxVersionsPerObject, maxAgeMs: maxAgeMs(spec.retention.maxAge) },
    exclude: spec.exclude ?? [],
    users: spec.attribution.users,
  };
}

export function changeRecorderReconciler(deps: ReconcilerDeps): Reconciler {
  const resolve = deps.resolve ?? ((kinds, signal) => resolveKinds(deps.client, kinds, signal));
  // Discovery is asked again only when the spec changed, or after a while when kinds were missing: status
  // refreshes under load must not cost discovery requests.
  const resolutions = new Map<string, CachedResolution>();

  return async ({ name }, { signal, log }): Promise<Result> => {
    const recorder = deps.recorders.store.get(name);
    if (!recorder || recorder.metadata.deletionTimestamp) {
      resolutions.delete(name);
      await deps.sessions.close(name);
      return {};
    }
    const now = deps.now?.() ?? new Date();
    const generation = recorder.metadata.generation ?? 0;
    const previous = recorder.status;
    const spec = applyDefaults(recorder.spec);
    const users = spec.attribution.users ? { webhookProblem: usersWebhookProblem(deps) } : undefined;
    const report = async (input: Omit<StatusInput, 'generation' | 'previous' | 'now' | 'users'>): Promise<void> => {
      const status = buildStatus({ ...input, generation, previous, now, ...(users ? { users } : {}) });
      await writeStatus(deps.client, ChangeRecorders, { namespace: '', name }, previous, status, { fieldManager: FIELD_MANAGER, signal });
    };
    const stop = async (blocked: NonNullable<StatusInput['blocked']>): Promise<Result> => {
      resolutions.delete(name);
      await deps.sessions.close(name);
      await report({ blocked });
      return {};
    };

    // ---- observe ----
    const invalid = validateSpec(spec);
    if (invalid.length > 0) return stop({ reason: 'InvalidSpec', message: invalid.join('; ') });
    const target = storageTarget(name, spec);
    const where = describeTarget(target, deps.storageRoot);
    const others = deps.recorders.store.list().map((r) => ({ recorder: r, target: storageTarget(r.metadata.name ?? '', applyDefaults(r.spec)) }));
    const rival = storageRival(recorder, target, others);
    if (rival) return stop({ reason: 'StoragePathInUse', message: `ChangeRecorder ${rival.recorder.metadata.name} (older) records into ${describeTarget(rival.target, deps.storageRoot)}, which overlaps ${where}` });
    let session: RecorderSession;
    try {
      session = await deps.sessions.open(name, storeLocationOf(target, deps));
    } catch (err) {
      await report({ blocked: { reason: 'StorageUnavailable', message: `${where}: ${(err as Error).message}` } });
      return { requeueAfter: UNSETTLED_REFRESH_MS };
    }
    let cached = resolutions.get(name);
    if (!cached || resolutionDue(cached, generation, now.getTime())) {
      const request = requestedKinds(spec);
      const resolution = await resolve(allKinds(request), signal);
      const previousVerdict = cached?.verdict;
      cached = { generation, atMs: now.getTime(), resolution, verdict: kindVerdict(request, resolution) };
      resolutions.set(name, cached);
      announce(deps, recorder, cached.verdict, previousVerdict, log);
    }
    const { verdict } = cached;
    const selector = spec.namespaces.selector ? selectorString(spec.namespaces.selector) : undefined;
    const selected = await session.selectNamespaces(selector);

    // ---- plan ----
    const targets = planTargets(verdict.watch, spec.namespaces, selected);

    // ---- act ----
    await session.configure(settingsOf(spec));
    await session.watch(targets);
    const expiry = session.nextExpiry();
    if (expiry !== undefined && expiry <= now.getTime()) session.sweep();

    // ---- report ----
    const state = session.report();
    if (state.queueFull) deps.events?.record(recorder, { type: 'Warning', reason: 'QueueFull', action: 'RecordChanges', note: `write queue full (${state.queueFull.bound} changes): ${state.queueFull.dropped} changes not queued; they will be found by comparison once it drains` });
    const namespaceFailure = session.namespaceFailure()?.message;
    const namespacesPending = selector !== undefined && selected === undefined;
    await report({ verdict, report: state, watchingSince: session.startedAt, ...(namespaceFailure ? { namespaceFailure } : {}), namespacesPending });

    const waits: number[] = [];
    // A webhook still setting up its certificate reports nothing itself: look again until it serves.
    const webhookPending = users?.webhookProblem !== undefined && deps.usersWebhookProblem !== undefined;
    if (state.storageFailure || state.queueFull || namespaceFailure || namespacesPending || webhookPending || state.watches.some((w) => !w.ready || w.failure)) waits.push(UNSETTLED_REFRESH_MS);
    const lifetime = resolutionLifetimeMs(verdict);
    if (lifetime !== undefined) waits.push(Math.max(1000, cached.atMs + lifetime - now.getTime()));
    const next = session.nextExpiry();
    if (next !== undefined) waits.push(Math.min(MAX_SWEEP_WAIT_MS, Math.max(1000, next - now.getTime())));
    return waits.length > 0 ? { requeueAfter: Math.min(...waits) } : {};
  };
}

function usersWebhookProblem(deps: ReconcilerDeps): string | undefined {
  if (!deps.usersWebhookProblem) return 'the recorder runs without its admission webhook (installed without it): install again with quorum history install, which installs it for ChangeRecorders that ask for users';
  return deps.usersWebhookProblem();
}

/**
 * Tells of kinds that are asked for and not served, or that cannot be looked up: a Warning event on the
 * ChangeRecorder at every lookup that finds them (the event recorder counts repeats in one Event's series),
 * and a warn log line when the set changes (debug while it stays). Kinds found again are an info line.
 */
function announce(deps: ReconcilerDeps, recorder: ChangeRecorder, verdict: KindVerdict, previous: KindVerdict | undefined, log: Logger): void {
  const changed = !previous || verdictKey(previous) !== verdictKey(verdict);
  const names = (kinds: readonly { group: string; kind: string }[]): string[] => kinds.map(groupKindName);
  if (verdict.unknown.length > 0) {
    const note = `spec.resources names kinds the API server does not serve: ${verdict.unknown.map((k) => `${groupKindName(k)} (${k.why})`).join('; ')}`;
    deps.events?.record(recorder, { type: 'Warning', reason: 'UnknownKind', action: 'ResolveKinds', note });
    log[changed ? 'warn' : 'debug']({ unknownKinds: names(verdict.unknown), watching: names(verdict.watch) }, `${note}; recording the kinds it serves, looking the others up again every minute`);
  }
  if (verdict.unavailable.length > 0) {
    const note = `cannot look up ${verdict.unavailable.map((k) => `${groupKindName(k)} (${k.errors.join('; ')})`).join('; ')}`;
    deps.events?.record(recorder, { type: 'Warning', reason: 'DiscoveryFailing', action: 'ResolveKinds', note });
    log[changed ? 'warn' : 'debug']({ unavailableKinds: names(verdict.unavailable) }, `${note}; trying again every minute`);
  }
  if (previous && changed) {
    const watched = new Set(names(verdict.watch));
    const found = names([...previous.unknown, ...previous.unavailable]).filter((k) => watched.has(k));
    if (found.length > 0) log.info({ kinds: found }, `discovery finds ${found.join(', ')} now`);
  }
}
