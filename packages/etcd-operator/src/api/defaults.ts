// Defaults and validation of an EtcdCluster in code, for the operator's own check and the admission webhooks
// (which may be off): the schema part comes from the same TypeBox schemas as the CRD, and each CEL rule of the
// CRD is mirrored below under the same message (RULES in etcdcluster.ts), followed by the checks no CEL rule makes.
import {
  DEFAULT_REPOSITORY,
  ETCD_DEFAULT_ELECTION_MS,
  ETCD_DEFAULT_HEARTBEAT_MS,
  FLAGS_REMOVED_IN,
  MANAGED_FLAG_PATTERN,
  MIN_35_FOR_36,
  RULES,
  STRUCTURED_FLAG_PATTERN,
  SUPPORTED_MINOR_VERSIONS,
  VERSION_PATTERN,
  type AntiAffinity,
  type EtcdClusterSpec,
  type EtcdClusterStatus,
  type ReclaimPolicy,
  type StorageSpec,
} from './etcdcluster.ts';
import { destinationIssues } from './destination.ts';
import { EtcdClusterMetadataSchemaData, EtcdClusterSpecSchemaData } from './schema-data.ts';
import {
  applySchemaDefaults,
  deepEqual,
  formatPath,
  isPlainObject,
  validateAgainstSchema,
  valueAt,
  type FieldError,
  type Issue,
  type Path,
} from '@quorum/runtime/crd';
import { isPvcKey, PVC_KEY_RULE } from '@quorum/storage';
import { parseSchedule } from '@quorum/kit';

export type { FieldError } from '@quorum/runtime/crd';

/**
 * Storage after defaulting. A defaulted volumeClaimTemplate always has resources.requests.storage, but its
 * type stays the plain one so that `volumeClaimTemplate ?? {}` keeps its fields in callers.
 */
export type DefaultedStorage = Omit<StorageSpec, 'reclaimPolicy'> & { reclaimPolicy: ReclaimPolicy };

/** A spec after defaulting: what the API server stores when the CRD is installed, or applyDefaults() returns. */
export type DefaultedSpec = Omit<EtcdClusterSpec, 'replicas' | 'version' | 'storage' | 'antiAffinity' | 'paused' | 'replaceStuckMemberAfterSeconds'> & {
  replicas: number;
  version: string;
  storage: DefaultedStorage;
  antiAffinity: AntiAffinity;
  paused: boolean;
  replaceStuckMemberAfterSeconds: number;
};

/**
 * One finding of validateSpec(): an error (the API server would reject the spec) or, with `warning: true`,
 * something allowed but unwise (an admission warning, an event). `message` names the field itself.
 */
export interface ValidationIssue extends FieldError {
  warning?: true;
}

const specSchema = EtcdClusterSpecSchemaData;
const SPEC: Path = ['spec'];

/**
 * A copy of `spec` with the schema's defaults applied exactly as the API server applies them (including inside
 * defaulted parents). `repository` is not defaulted here or in the schema: a stored default would then clash
 * with a later `image`; use etcdImage() for the effective image. Assumes a spec that passes validateSpec.
 */
export function applyDefaults(spec?: EtcdClusterSpec): DefaultedSpec {
  return applySchemaDefaults(specSchema, spec) as DefaultedSpec;
}

/** The image a member runs: `image` if set, else `<repository>:v<version>`. */
export function etcdImage(spec: Pick<DefaultedSpec, 'image' | 'repository' | 'version'>): string {
  return spec.image ?? `${spec.repository ?? DEFAULT_REPOSITORY}:v${spec.version}`;
}

function minorOf(version: string): string | undefined {
  return new RegExp(VERSION_PATTERN).test(version) ? version.split('.').slice(0, 2).join('.') : undefined;
}

/**
 * Whether the spec allows moving a cluster from `from` to `to`: any change within a minor version, one minor
 * version up, or one back (a rollback; versionPath() decides whether etcd still allows it). Mirrors
 * RULES.versionChange.
 */
export function versionChangeAllowed(from: string, to: string): boolean {
  if (from === to) return true;
  const a = minorOf(from);
  const b = minorOf(to);
  if (a === undefined || b === undefined) return false;
  const i = SUPPORTED_MINOR_VERSIONS.indexOf(a);
  const j = SUPPORTED_MINOR_VERSIONS.indexOf(b);
  return Math.abs(j - i) <= 1;
}

/**
 * How a cluster gets from the versions its members run to `target`, as etcd allows it:
 * - None: every member runs the target already.
 * - Patch: the target is of the cluster version's minor, and no member runs a newer one.
 * - Upgrade: one minor up from the cluster version.
 * - Rollback: back to the cluster version's minor from members that run the next one. etcd allows it only
 *   while its cluster version has not moved up: it moves within seconds of the last member running the newer
 *   minor, and an older binary is refused from then on ("server version is lower than determined cluster
 *   version").
 * - Downgrade: one minor below the cluster version, through etcd's downgrade API (3.6 → 3.5: etcd has the API
 *   from 3.6 on), or on with a downgrade already enabled to the target's minor (the cluster version is then
 *   already the lower one).
 * - Refused: anything else, with why (a skipped minor; 3.5 → 3.4; 3.6 from a 3.5 member older than 3.5.32).
 * Shared by the operator (which acts on it) and the validating webhook (which refuses what it refuses).
 */
export type VersionPath = { kind: 'None' | 'Patch' | 'Upgrade' | 'Rollback' | 'Downgrade' } | { kind: 'Refused'; why: string };

/** The first minor version whose etcd has the downgrade API (and whose members migrate their storage version down). */
export const MIN_DOWNGRADE_MINOR = 6;

export interface VersionFacts {
  /** Each member's own server version; undefined for a member that did not say. */
  memberVersions: readonly (string | undefined)[];
  /** etcd's cluster version, e.g. "3.5.0"; undefined when unknown (the lowest member minor stands in). */
  clusterVersion?: string;
  target: string;
  /** The cluster version a downgrade in flight goes to (a 3.6 member's status), e.g. "3.5.0". */
  downgradeTarget?: string;
}

const release = (version: string): { minor: number; patch: number } | undefined => {
  const m = /^3\.(\d+)\.(\d+)/.exec(version);
  return m ? { minor: Number(m[1]), patch: Number(m[2]) } : undefined;
};

/**
 * etcd's cluster version, unless it is the placeholder a new cluster reports before its leader decided the real
 * one from the members (3.0.0, for a few seconds after bootstrap): a cluster version more than one minor below
 * every member's cannot be decided, since versions move one minor at a time. Undefined when it is not decided.
 */
export function decidedClusterVersion(clusterVersion: string | undefined, memberVersions: readonly (string | undefined)[]): string | undefined {
  const cluster = clusterVersion ? release(clusterVersion) : undefined;
  if (!cluster) return undefined;
  const minors = memberVersions.flatMap((v) => (v === undefined ? [] : [release(v)?.minor])).filter((m): m is number => m !== undefined);
  if (minors.length > 0 && cluster.minor < Math.min(...minors) - 1) return undefined;
  return clusterVersion;
}

export function versionPath(f: VersionFacts): VersionPath {
  const target = release(f.target);
  if (!target) return { kind: 'Refused', why: `${f.target} is not an etcd version` };
  if (f.memberVersions.length > 0 && f.memberVersions.every((v) => v === f.target)) return { kind: 'None' };
  const members = f.memberVersions.flatMap((v) => (v === undefined ? [] : [{ version: v, ...release(v) }])).filter((m) => m.minor !== undefined);
  const decided = decidedClusterVersion(f.clusterVersion, f.memberVersions);
  const cluster = decided ? release(decided) : undefined;
  // etcd's own cluster version is the lowest minor every member runs; without it, the members say it.
  const current = cluster?.minor ?? (members.length > 0 ? Math.min(...members.map((m) => m.minor!)) : undefined);
  if (current === undefined) return { kind: 'Refused', why: 'no member has reported its version yet' };
  const newest = Math.max(current, ...members.map((m) => m.minor!));
  const downgrading = f.downgradeTarget ? release(f.downgradeTarget) : undefined;
  if (downgrading && downgrading.minor === target.minor) return { kind: 'Downgrade' };
  if (target.minor === current) return { kind: newest > current ? 'Rollback' : 'Patch' };
  if (target.minor === current + 1) {
    const min = release(MIN_35_FOR_36)!;
    const tooOld = target.minor === 6 ? members.filter((m) => m.minor === 5 && m.patch! < min.patch).map((m) => m.version) : [];
    if (tooOld.length > 0) {
      return { kind: 'Refused', why: `moving to 3.6 needs every member on ${MIN_35_FOR_36} or later first (etcd-io/etcd#19557), and members run ${[...new Set(tooOld)].join(', ')}` };
    }
    return { kind: 'Upgrade' };
  }
  if (target.minor === current - 1) {
    if (current >= MIN_DOWNGRADE_MINOR) return { kind: 'Downgrade' };
    return { kind: 'Refused', why: `etcd 3.${current} cannot be downgraded to 3.${target.minor}: etcd has a downgrade API from 3.${MIN_DOWNGRADE_MINOR} on` };
  }
  return { kind: 'Refused', why: `${f.target} is more than one minor version away from the cluster version 3.${current}; move one minor version at a time` };
}

/**
 * What the validating webhook adds on an update of spec.version: the version path from what the cluster runs
 * (its status), refused as the operator would refuse it. No status versions yet: nothing to check against,
 * and the operator decides once it has them.
 */
export function versionChangeIssues(spec: unknown, oldSpec: unknown, oldStatus: EtcdClusterStatus | undefined): ValidationIssue[] {
  const to = isPlainObject(spec) ? spec.version : undefined;
  const from = isPlainObject(oldSpec) ? oldSpec.version : undefined;
  const versions = (oldStatus?.members ?? []).map((m) => m.version);
  if (typeof to !== 'string' || to === from || versions.length === 0 || versions.every((v) => v === undefined)) return [];
  const path = versionPath({ memberVersions: versions, ...(oldStatus?.clusterVersion ? { clusterVersion: oldStatus.clusterVersion } : {}), target: to });
  return path.kind === 'Refused' ? [{ field: 'spec.version', message: `spec.version ${to}: ${path.why}` }] : [];
}

/** How many members can fail with `replicas` members while a majority remains. */
export function faultTolerance(replicas: number): number {
  return Math.max(0, Math.floor((replicas - 1) / 2));
}

/** spec.network.clientsFrom's label selectors: In and NotIn take values, Exists and DoesNotExist none (RULES.selectorValues, on each peer). */
function selectorIssues(spec: Record<string, unknown>): Issue[] {
  const clientsFrom = isPlainObject(spec.network) ? spec.network.clientsFrom : undefined;
  if (!Array.isArray(clientsFrom)) return [];
  const wellFormed = (e: unknown): boolean => !isPlainObject(e) || (e.operator === 'In' || e.operator === 'NotIn') === (Array.isArray(e.values) && e.values.length > 0);
  const expressions = (peer: unknown, side: string): unknown[] => {
    const selector = isPlainObject(peer) ? peer[side] : undefined;
    return isPlainObject(selector) && Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [];
  };
  return clientsFrom.flatMap((peer: unknown, i) =>
    [...expressions(peer, 'namespaceSelector'), ...expressions(peer, 'podSelector')].every(wellFormed) ? [] : [{ path: [...SPEC, 'network', 'clientsFrom', String(i)], message: RULES.selectorValues.message }],
  );
}

function celIssues(spec: Record<string, unknown>, old: Record<string, unknown> | undefined): Issue[] {
  const issues: Issue[] = [];
  const rule = (path: Path, ok: boolean, message: string): void => {
    if (!ok) issues.push({ path, message });
  };

  rule(SPEC, !(spec.image !== undefined && spec.repository !== undefined), RULES.imageOrRepository.message);

  const storage = spec.storage;
  if (isPlainObject(storage)) {
    const has = (o: Record<string, unknown>, k: string): boolean => o[k] !== undefined;
    rule([...SPEC, 'storage'], has(storage, 'volumeClaimTemplate') !== has(storage, 'emptyDir'), RULES.storageExactlyOne.message);
    const oldStorage = old?.storage;
    if (isPlainObject(oldStorage)) {
      const same = deepEqual(storage.volumeClaimTemplate, oldStorage.volumeClaimTemplate) && deepEqual(storage.emptyDir, oldStorage.emptyDir);
      rule([...SPEC, 'storage'], same, RULES.storageImmutable.message);
    }
  }

  if (old) rule(SPEC, (spec.bootstrap === undefined) === (old.bootstrap === undefined) && deepEqual(spec.bootstrap, old.bootstrap), RULES.bootstrapImmutable.message);
  const bootstrap = spec.bootstrap;
  if (isPlainObject(bootstrap)) {
    rule(SPEC, typeof spec.version !== 'string' || !spec.version.startsWith('3.4.'), RULES.restoreVersion.message);
    const from = bootstrap.fromBackup;
    if (isPlainObject(from)) {
      const has = (k: string): boolean => from[k] !== undefined;
      const path = [...SPEC, 'bootstrap', 'fromBackup'];
      rule(path, has('backupName') ? !has('destination') && !has('key') && !has('sha256') : has('destination') && has('key'), RULES.backupSource.message);
      if (isPlainObject(from.destination)) issues.push(...destinationIssues(from.destination, [...path, 'destination']));
    }
  }

  if (old) rule(SPEC, old.tls === undefined || spec.tls !== undefined, RULES.tlsFixed.message);
  if (isPlainObject(spec.tls)) rule([...SPEC, 'tls'], spec.tls.disabled !== true || (spec.tls.peer === undefined && spec.tls.client === undefined), RULES.tlsDisabledAlone.message);
  if (isPlainObject(spec.tls) && isPlainObject(old?.tls)) {
    const tls = spec.tls;
    const oldTls = old.tls;
    const fixed = (side: 'peer' | 'client'): boolean => oldTls[side] === undefined || (tls[side] !== undefined && deepEqual(tls[side], oldTls[side]));
    rule([...SPEC, 'tls'], fixed('peer'), RULES.tlsPeerFixed.message);
    rule([...SPEC, 'tls'], fixed('client'), RULES.tlsClientFixed.message);
  }

  issues.push(...selectorIssues(spec));

  const defrag = isPlainObject(spec.maintenance) ? spec.maintenance.defrag : undefined;
  if (isPlainObject(defrag)) rule([...SPEC, 'maintenance', 'defrag'], defrag.thresholdPercent !== undefined || defrag.schedule !== undefined, RULES.defragTrigger.message);

  if (typeof spec.version === 'string' && typeof old?.version === 'string') {
    rule([...SPEC, 'version'], versionChangeAllowed(old.version, spec.version), RULES.versionChange.message);
  }

  const etcd = spec.etcd;
  if (isPlainObject(etcd)) {
    const path = [...SPEC, 'etcd'];
    const num = (v: unknown, fallback: number): number => (typeof v === 'number' ? v : fallback);
    rule(path, num(etcd.electionTimeoutMs, ETCD_DEFAULT_ELECTION_MS) >= 5 * num(etcd.heartbeatIntervalMs, ETCD_DEFAULT_HEARTBEAT_MS), RULES.electionTimeout.message);
    const retention = etcd.autoCompactionRetention;
    rule(path, etcd.autoCompactionMode !== 'revision' || typeof retention !== 'string' || /^[0-9]+$/.test(retention), RULES.revisionRetention.message);
    const args = etcd.extraArgs;
    if (Array.isArray(args)) {
      const strings = args.filter((a): a is string => typeof a === 'string');
      const managed = new RegExp(MANAGED_FLAG_PATTERN);
      const structured = new RegExp(STRUCTURED_FLAG_PATTERN);
      rule([...path, 'extraArgs'], !strings.some((a) => managed.test(a)), RULES.managedFlags.message);
      rule([...path, 'extraArgs'], !strings.some((a) => structured.test(a)), RULES.structuredFlags.message);
    }
  }
  return issues;
}

/**
 * What the CRD does not check and the operator would otherwise find out only once members start: a snapshot
 * key on a PVC destination that the PVC store refuses (the restore would stop in the members' init containers).
 */
function beyondCelIssues(spec: Record<string, unknown>): Issue[] {
  const from = isPlainObject(spec.bootstrap) ? spec.bootstrap.fromBackup : undefined;
  const restore = isPlainObject(from) && isPlainObject(from.destination) ? restoreKeyIssues(from.destination, from.key, [...SPEC, 'bootstrap', 'fromBackup', 'key']) : [];
  return [...restore, ...removedFlagIssues(spec), ...defragScheduleIssues(spec)];
}

/** A defragmentation schedule cron-parser refuses (CEL cannot parse cron): the same parse the operator makes. */
function defragScheduleIssues(spec: Record<string, unknown>): Issue[] {
  const defrag = isPlainObject(spec.maintenance) ? spec.maintenance.defrag : undefined;
  const schedule = isPlainObject(defrag) ? defrag.schedule : undefined;
  if (typeof schedule !== 'string') return [];
  const parsed = parseSchedule(schedule, DEFRAG_SCHEDULE_SEED);
  return parsed.ok ? [] : [{ path: [...SPEC, 'maintenance', 'defrag', 'schedule'], message: parsed.message.replace('spec.schedule', 'spec.maintenance.defrag.schedule') }];
}

/**
 * The seed of `H` in a defragmentation schedule. The spec alone is validated (no name at hand in validateSpec),
 * so one seed for all: whether a schedule parses must not depend on who checks it.
 */
export const DEFRAG_SCHEDULE_SEED = 'defrag';

/** Flags the version's etcd no longer has: every member made from the spec would exit at once. */
function removedFlagIssues(spec: Record<string, unknown>): Issue[] {
  const minor = typeof spec.version === 'string' ? minorOf(spec.version) : undefined;
  const removed = minor === undefined ? [] : (FLAGS_REMOVED_IN[minor] ?? []);
  const args = isPlainObject(spec.etcd) && Array.isArray(spec.etcd.extraArgs) ? spec.etcd.extraArgs.filter((a): a is string => typeof a === 'string') : [];
  const refused = args.filter((a) => removed.includes(a.replace(/^--/, '').split('=')[0]!));
  if (refused.length === 0) return [];
  const message = `etcd ${minor} (spec.version ${String(spec.version)}) has no ${refused.join(', ')} (spec.etcd.extraArgs) and refuses to start with ${refused.length === 1 ? 'it' : 'them'}`;
  // At both fields, because ratcheting keeps an issue only where the value changed: a move to the new minor
  // changes the version, adding the flag changes the arguments.
  return [{ path: [...SPEC, 'version'], message }, { path: [...SPEC, 'etcd', 'extraArgs'], message }];
}

/** A snapshot restored from a PVC destination is read at `key`, which the PVC store refuses unless isPvcKey(). */
function restoreKeyIssues(destination: Record<string, unknown>, key: unknown, path: Path): Issue[] {
  if (destination.pvc === undefined || typeof key !== 'string' || isPvcKey(key)) return [];
  return [{ path, message: `${formatPath(path)} ${JSON.stringify(key)} is not ${PVC_KEY_RULE}, so the snapshot could not be read from the PVC` }];
}

function warningsFor(spec: DefaultedSpec): ValidationIssue[] {
  const warnings: ValidationIssue[] = [];
  const { replicas } = spec;
  if (replicas === 1) {
    warnings.push({ field: 'spec.replicas', message: 'spec.replicas is 1: a single member tolerates no failures; use 3 or 5 members for availability', warning: true });
  } else if (replicas % 2 === 0) {
    const tolerated = faultTolerance(replicas);
    warnings.push({
      field: 'spec.replicas',
      message: `spec.replicas is ${replicas}: an even number of members tolerates no more failures than one fewer (${replicas} members tolerate ${tolerated} failure${tolerated === 1 ? '' : 's'}, as ${replicas - 1} do)`,
      warning: true,
    });
  }
  if (spec.storage.emptyDir !== undefined) {
    warnings.push({
      field: 'spec.storage.emptyDir',
      message: "spec.storage.emptyDir loses a member's data whenever its pod is deleted; losing a majority of pods at once loses the cluster",
      warning: true,
    });
  }
  if (spec.antiAffinity === 'None' && replicas > 1) {
    warnings.push({ field: 'spec.antiAffinity', message: 'spec.antiAffinity is None: members may share a node, so one node failure can cost quorum', warning: true });
  }
  return warnings;
}

/**
 * Issues as field errors, once each, without those ratcheting drops: on update (`old` given), a problem at a
 * path whose value did not change. For every kind's validation (the webhooks of the backup kinds too).
 */
export function toFieldErrors(issues: readonly Issue[], value: unknown, old: unknown): FieldError[] {
  // Ratcheting, as the API server does on update: a problem with a value that did not change (accepted before,
  // perhaps under an older, looser schema) does not block the update. Transition rules never fire on an
  // unchanged value, so they are unaffected.
  const kept = old === undefined ? issues : issues.filter((i) => !deepEqual(valueAt(value, i.path), valueAt(old, i.path)));
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  for (const { path, message } of kept) {
    const field = formatPath(path);
    if (seen.has(`${field}\n${message}`)) continue;
    seen.add(`${field}\n${message}`);
    errors.push({ field, message });
  }
  return errors;
}

/**
 * Validates a spec as the API server would after defaulting it: the schema (types, ranges, patterns, enums,
 * unknown fields) and every CEL rule, including the transition rules when `oldSpec` (the stored spec) is given.
 * Returns the errors, then the warnings; warnings are only given for an otherwise valid spec.
 */
export function validateSpec(spec: unknown, oldSpec?: unknown): ValidationIssue[] {
  return validateObject({ spec }, oldSpec === undefined ? undefined : { spec: oldSpec }, false);
}

/** validateSpec() for a whole EtcdCluster, adding the checks on metadata.name. */
export function validateEtcdCluster(obj: unknown, old?: unknown): ValidationIssue[] {
  return validateObject(obj, old, true);
}

/** Only the errors of validateSpec() or validateEtcdCluster(). */
export function errorsOf(issues: readonly ValidationIssue[]): ValidationIssue[] {
  return issues.filter((i) => i.warning !== true);
}

/** Only the warnings of validateSpec() or validateEtcdCluster(). */
export function warningsOf(issues: readonly ValidationIssue[]): ValidationIssue[] {
  return issues.filter((i) => i.warning === true);
}

function validateObject(obj: unknown, old: unknown, checkMetadata: boolean): ValidationIssue[] {
  if (!isPlainObject(obj)) return [{ field: '', message: 'an EtcdCluster must be a JSON object' }];
  const value = defaultedObject(obj);
  const previous = isPlainObject(old) ? defaultedObject(old) : undefined;
  const issues: Issue[] = [];
  if (checkMetadata) {
    issues.push(...validateAgainstSchema({ ...EtcdClusterMetadataSchemaData, 'x-kubernetes-preserve-unknown-fields': true }, value.metadata, ['metadata']));
  }
  issues.push(...validateAgainstSchema(specSchema, value.spec, SPEC));
  if (isPlainObject(value.spec)) {
    const oldSpec = previous?.spec;
    issues.push(...celIssues(value.spec, isPlainObject(oldSpec) ? oldSpec : undefined), ...beyondCelIssues(value.spec));
  }
  const errors = toFieldErrors(issues, value, previous);
  return errors.length > 0 ? errors : warningsFor(value.spec as DefaultedSpec);
}

function defaultedObject(obj: Record<string, unknown>): Record<string, unknown> {
  return { ...obj, spec: applySchemaDefaults(specSchema, obj.spec) };
}
