// Status: what `kubectl get changerecorders` and the conditions say, built from what the reconcile observed.
// Every reason it can set is in REASONS, which docs/recorder.md's table is generated from.
import { removeCondition, setCondition, type Condition } from '@quorum/runtime';
import type { ChangeRecorderStatus, WatchedKind } from '../api/changerecorder.ts';
import { groupKindName } from './discovery.ts';
import type { KindVerdict } from './plan.ts';
import type { SessionReport, WatchReport } from './session.ts';

export const REASONS = {
  Ready: {
    Recording: 'every kind asked for is watched, its first list compared with the records, and changes are being recorded',
    Starting: 'some watches are still listing, or comparing the list with the records; the message names them',
    WatchFailing: "a list or watch fails (the message has the API server's words, e.g. Forbidden when RBAC does not allow the kind)",
    StorageFailing: 'writing records fails (each store call is bounded by a timeout); they are retried in order, and nothing later of the same object is written before them',
    QueueFull:
      'the write queue reached its bound (a store slower than the changes, or not answering): changes are no longer queued one by one; once it has drained to half, every watch starts again and compares the live objects with the records, recording what changed meanwhile as seen late (a Warning event, a metric and a warn log say so too)',
    StorageUnavailable: "the store cannot be opened: its directory, or its object store (the message has the store's words: access denied, bucket not found, unreachable, or a credentials Secret that is not mounted into the recorder's pod); tried again every 5 seconds",
    StoragePathInUse: 'an older ChangeRecorder uses this storage path, or this folder of the same bucket (or one inside or around it); this one records nothing',
    InvalidSpec: 'the spec breaks a validation rule (possible when the CRD is older than the recorder); nothing is recorded',
    UnknownKind:
      'spec.resources names kinds the API server does not serve, or cannot list and watch; the message names each one and why. The kinds it serves are recorded meanwhile, and the unknown ones are looked up again every minute (a Warning event and a warn log say so too)',
    DiscoveryFailing: "the discovery documents of some kinds cannot be read (the message has the API server's words, e.g. an aggregated API whose backend is down); those kinds are not recorded until they can be, and are looked up again every minute",
    NoKindsFound: 'discovery found none of the kinds asked for',
  },
  KindsResolved: {
    AllKindsFound: 'discovery found every kind asked for (default kinds of Quorum that the API server does not serve are named in the message, and are not recorded)',
    KindsNotFound: 'the API server does not serve the kinds the message names, or cannot list and watch them; they are looked up again every minute',
    DiscoveryFailed: 'status Unknown: the discovery documents of the kinds the message names cannot be read, so whether they are served is not known; looked up again every minute',
  },
  UsersAttributed: {
    AdmissionWebhook: "only with spec.attribution.users: the recorder's admission webhook is serving, so records of the changes it is called for name the user",
    WebhookNotServing:
      'status False: spec.attribution.users is true, but the recorder runs without its admission webhook, or cannot serve it yet (the message says which and why); records say the user is unknown (NoWebhook, or NotSeen). quorum history install installs the webhook for such ChangeRecorders',
  },
} as const;

type ReadyReason = keyof typeof REASONS.Ready;

export interface StatusInput {
  generation: number;
  previous: ChangeRecorderStatus | undefined;
  now: Date;
  /** Why nothing is being recorded, when that is the case. */
  blocked?: { reason: 'InvalidSpec' | 'StoragePathInUse' | 'StorageUnavailable'; message: string };
  /** What discovery's answer means: the kinds watched, rejected, absent or not looked up. */
  verdict?: KindVerdict;
  report?: SessionReport;
  watchingSince?: Date;
  /** The namespace selector's watch failure, if any. */
  namespaceFailure?: string;
  /** Whether the selector's namespaces are still being listed. */
  namespacesPending?: boolean;
  /** Set when the spec asks for users: why the admission webhook that tells them is not serving, if it is not. */
  users?: { webhookProblem?: string };
}

/** `Deploymnet.apps (no served version of group apps (apps/v1) has kind Deploymnet)` */
function described(k: { group: string; kind: string; why: string }): string {
  return `${groupKindName(k)} (${k.why})`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function kindsResolved(verdict: KindVerdict): { status: 'True' | 'False' | 'Unknown'; reason: keyof typeof REASONS.KindsResolved; message: string } {
  const unavailable = verdict.unavailable.map((k) => `${groupKindName(k)} (${k.errors.join('; ')})`);
  if (verdict.unknown.length > 0) {
    return {
      status: 'False',
      reason: 'KindsNotFound',
      message: `not served: ${verdict.unknown.map(described).join('; ')}${unavailable.length ? `; cannot look up: ${unavailable.join('; ')}` : ''}`,
    };
  }
  if (unavailable.length > 0) return { status: 'Unknown', reason: 'DiscoveryFailed', message: `cannot look up: ${unavailable.join('; ')}` };
  const absent = verdict.absent.map(groupKindName);
  return {
    status: 'True',
    reason: 'AllKindsFound',
    message: `found ${plural(verdict.watch.length, 'kind')}${absent.length ? `; not served here, so not recorded: ${absent.join(', ')} (default kinds, recorded where served)` : ''}`,
  };
}

function describe(w: WatchReport): string {
  return `${groupKindName(w.target.kind)}${w.target.namespace ? ` in ${w.target.namespace}` : ''}`;
}

function ready(input: StatusInput): { reason: ReadyReason; message: string } {
  if (input.blocked) return input.blocked;
  const report = input.report;
  if (!report) return { reason: 'Starting', message: 'opening the storage' };
  if (report.queueFull) {
    const { failure, dropped, bound } = report.queueFull;
    const storage = report.storageFailure ? `; the store: ${report.storageFailure.message}` : '';
    return { reason: 'QueueFull', message: `${report.pending} writes waiting, the bound is ${bound}; ${dropped} changes not queued for ${Math.round(failure.forMs / 1000)} s, to be found by comparison once it drains${storage}` };
  }
  if (report.storageFailure) return { reason: 'StorageFailing', message: `${report.storageFailure.message} (failing for ${Math.round(report.storageFailure.forMs / 1000)} s; ${report.pending} writes waiting)` };
  const failing = report.watches.filter((w) => w.failure);
  if (failing.length > 0 || input.namespaceFailure) {
    const messages = failing.map((w) => `${describe(w)}: ${w.failure?.message ?? ''}`);
    if (input.namespaceFailure) messages.unshift(`namespaces: ${input.namespaceFailure}`);
    return { reason: 'WatchFailing', message: messages.join('; ') };
  }
  const verdict = input.verdict;
  if (verdict && verdict.unknown.length > 0) {
    const others = verdict.watch.length;
    return {
      reason: 'UnknownKind',
      message: `spec.resources names ${verdict.unknown.length === 1 ? 'a kind' : 'kinds'} the API server does not serve: ${verdict.unknown.map(described).join('; ')}. ${others > 0 ? `Recording the ${plural(others, 'kind')} it serves meanwhile` : 'Nothing is recorded'}`,
    };
  }
  if (verdict && verdict.unavailable.length > 0) {
    return { reason: 'DiscoveryFailing', message: `cannot look up ${verdict.unavailable.map((k) => `${groupKindName(k)} (${k.errors.join('; ')})`).join('; ')}` };
  }
  const starting = report.watches.filter((w) => !w.ready);
  if (starting.length > 0 || input.namespacesPending) {
    const names = starting.map(describe);
    if (input.namespacesPending) names.unshift('the namespaces the selector picks');
    return { reason: 'Starting', message: `listing and comparing ${names.join(', ')}` };
  }
  if (verdict && verdict.watch.length === 0) return { reason: 'NoKindsFound', message: 'none of the kinds asked for is served by the API server' };
  if (report.watches.length === 0) return { reason: 'Recording', message: 'no namespace is selected now: nothing to watch until one is' };
  const kinds = new Set(report.watches.map((w) => groupKindName(w.target.kind))).size;
  const objects = report.watches.reduce((n, w) => n + w.objects, 0);
  return { reason: 'Recording', message: `recording changes to ${kinds} kind${kinds === 1 ? '' : 's'} (${objects} object${objects === 1 ? '' : 's'})` };
}

export function buildStatus(input: StatusInput): ChangeRecorderStatus {
  const { generation, previous, now, report, verdict } = input;
  const r = ready(input);
  let conditions: Condition[] = setCondition(previous?.conditions, {
    type: 'Ready',
    status: r.reason === 'Recording' ? 'True' : 'False',
    reason: r.reason,
    message: r.message,
    observedGeneration: generation,
  }, now);
  if (verdict) conditions = setCondition(conditions, { ...kindsResolved(verdict), type: 'KindsResolved', observedGeneration: generation }, now);
  if (input.users) {
    const problem = input.users.webhookProblem;
    conditions = setCondition(conditions, {
      type: 'UsersAttributed',
      status: problem === undefined ? 'True' : 'False',
      reason: problem === undefined ? 'AdmissionWebhook' : 'WebhookNotServing',
      message: problem ?? 'the admission webhook is serving: records name the user of each change it was called for, and say why not otherwise',
      observedGeneration: generation,
    }, now);
  } else {
    conditions = removeCondition(conditions, 'UsersAttributed');
  }
  const status: ChangeRecorderStatus = { ...previous, observedGeneration: generation, conditions };
  if (input.blocked) {
    // Nothing is watched any more; what is in storage stays, and so do its figures.
    status.kinds = [];
    status.objects = 0;
  }
  if (report) {
    const kinds = new Map<string, WatchedKind>();
    for (const w of report.watches) {
      const k = w.target.kind;
      const key = `${k.group}/${k.kind}`;
      const entry = kinds.get(key) ?? { group: k.group, kind: k.kind, version: k.version, resource: k.resource, namespaced: k.namespaced, objects: 0 };
      entry.objects += w.objects;
      kinds.set(key, entry);
    }
    status.kinds = [...kinds.values()].sort((a, b) => `${a.group}/${a.kind}`.localeCompare(`${b.group}/${b.kind}`));
    status.objects = status.kinds.reduce((n, k) => n + k.objects, 0);
    status.recordsWritten = report.written;
    status.records = report.store.records;
    status.storageBytes = report.store.bytes;
    if (report.store.lastRecordMs !== undefined) status.lastRecordTime = new Date(report.store.lastRecordMs).toISOString();
  }
  if (input.watchingSince) status.watchingSince = input.watchingSince.toISOString();
  return status;
}
