// Restoring a record through the API server, with the caller's own credentials (the recorder never writes):
// a deleted object is created again from the record; a live one is brought to the record's version with
// server-side apply under the field manager `quorum-history`, force-applied so the fields the mistaken change
// took over come back. Apply only sets what the record holds; when the mistaken change added fields that
// other managers own (a new key, a new label, a container), apply cannot remove them, so the whole change is
// then made by one JSON patch guarded by the resourceVersion, and apply follows only to take ownership. Either
// way the object changes in one write (no half-restored version is ever live, and the recorder records the
// restore as one change) and ends up exactly as recorded. What changed is returned as a diff.
import { parse } from 'yaml';
import {
  ConflictError,
  DiscoveryClient,
  InvalidError,
  escapePointerToken,
  groupOf,
  jsonPatchDiff,
  resource,
  type Client,
  type JsonPatchOp,
  type KubeObject,
  type OpenObject,
  type OwnerReference,
  type ResourceType,
} from '@quorum/runtime';
import { describeObject } from '../history/handlers.ts';
import type { ObjectId, RecordResponse } from '../history/protocol.ts';
import { cleanObject, sameVersion, type CleanSettings, type Json } from '../record/clean.ts';
import { unifiedDiff } from '../record/diff.ts';
import { objectYAML } from '../record/record-file.ts';
import { groupKindName } from '../recorder/discovery.ts';
import { CliError } from './errors.ts';

export const RESTORE_FIELD_MANAGER = 'quorum-history';
const ATTEMPTS = 3;

export interface RestoreOptions {
  dryRun?: boolean;
}

export interface RestoreResult {
  /** created: the object was gone and is back; updated: the live one changed; unchanged: it already matched. */
  action: 'created' | 'updated' | 'unchanged' | 'would-create' | 'would-update';
  /** The object before → after (or what would change, for a dry run); '' when nothing changes. */
  diff: string;
  /** Adjustments made so that the restored object can live: owner references that changed. */
  warnings: string[];
  /** resourceVersion of the object after the restore. */
  resourceVersion?: string;
}

type RestoreClient = Pick<Client, 'get' | 'find' | 'create' | 'apply' | 'jsonPatch' | 'request'>;

/** The object the record holds, as it will be sent: status left out (it is the controllers' to write). */
function recordedObject(record: RecordResponse, id: ObjectId): Json {
  const object = parse(record.yaml) as unknown;
  if (typeof object !== 'object' || object === null || Array.isArray(object)) throw new CliError(`record ${record.record.id} of ${describeObject(id)} does not hold an object`);
  const { status: _status, ...rest } = object as Json;
  const metadata = { ...((rest.metadata as Json | undefined) ?? {}) };
  metadata.name = id.name;
  if (id.namespace) metadata.namespace = id.namespace;
  return { ...rest, metadata };
}

/** How live objects are cleaned for comparison with the record: as the record was, without status. */
function comparisonSettings(record: RecordResponse): CleanSettings {
  return { status: false, secrets: record.record.cleaning.secrets };
}

export async function restoreRecord(client: RestoreClient, id: ObjectId, record: RecordResponse, options: RestoreOptions = {}): Promise<RestoreResult> {
  if (id.group === '' && id.kind === 'Secret' && record.record.cleaning.secrets === 'redact') {
    throw new CliError(
      `record ${record.record.id} of ${describeObject(id)} holds keyed hashes of the Secret's values, not the values (the ChangeRecorder has secrets: redact), ` +
        'so it cannot be restored; its keys and which values changed are in quorum history show and diff. Secrets recorded with secrets: full can be restored',
    );
  }
  const target = recordedObject(record, id);
  const type = await resourceTypeOf(client, id, typeof target.apiVersion === 'string' ? target.apiVersion : undefined);
  const settings = comparisonSettings(record);
  const clean = (obj: KubeObject): Json => cleanObject(obj, settings, new Uint8Array(0));
  const key = { namespace: id.namespace, name: id.name };

  for (let attempt = 1; ; attempt++) {
    const live = await client.find(type, key);
    const warnings = await adjustOwners(client, target, id);
    if (!live) {
      const after = objectYAML(clean(target as unknown as KubeObject));
      if (options.dryRun) return { action: 'would-create', diff: unifiedDiff('', after, '(absent)', `record ${record.record.id}`) ?? '', warnings };
      const created = await createAgain(client, type, target, id, warnings);
      return { action: 'created', diff: unifiedDiff('', objectYAML(clean(created)), '(absent)', `resourceVersion ${created.metadata.resourceVersion ?? '?'}`) ?? '', warnings, resourceVersion: created.metadata.resourceVersion };
    }
    if (live.metadata.deletionTimestamp) {
      throw new CliError(`${describeObject(id)} is being deleted (since ${live.metadata.deletionTimestamp}); run restore again once it is gone, and it is created again from the record`);
    }
    keepImmutable(target, live, id);
    const before = clean(live);
    const wanted = clean(target as unknown as KubeObject);
    const beforeLabel = `live (resourceVersion ${live.metadata.resourceVersion ?? '?'})`;
    if (sameVersion(before, wanted)) return { action: 'unchanged', diff: '', warnings, resourceVersion: live.metadata.resourceVersion };
    if (options.dryRun) return { action: 'would-update', diff: unifiedDiff(objectYAML(before), objectYAML(wanted), beforeLabel, `record ${record.record.id}`) ?? '', warnings };
    try {
      // Apply alone is one write, and enough unless the record lacks fields that other managers set: a dry run says.
      const predicted = await client.apply(type, target as unknown as OpenObject, { fieldManager: RESTORE_FIELD_MANAGER, force: true, dryRun: true });
      let after: OpenObject;
      if (leftoverOps(clean(predicted), wanted, predicted.metadata).length === 0) {
        after = await client.apply(type, target as unknown as OpenObject, { fieldManager: RESTORE_FIELD_MANAGER, force: true });
        if (leftoverOps(clean(after), wanted, after.metadata).length > 0) warnings.push(`${describeObject(id)} changed while it was restored: it is not exactly the record; see the diff`);
      } else {
        // One JSON patch makes the whole change at once (guarded by the resourceVersion), so that no half-restored
        // version is ever live (a Deployment would roll it out); apply then takes ownership of the record's
        // fields without changing any.
        const ops = leftoverOps(before, wanted, live.metadata);
        await client.jsonPatch(type, key, [{ op: 'test', path: '/metadata/resourceVersion', value: live.metadata.resourceVersion }, ...ops], { fieldManager: RESTORE_FIELD_MANAGER });
        after = await client.apply(type, target as unknown as OpenObject, { fieldManager: RESTORE_FIELD_MANAGER, force: true });
      }
      const diff = unifiedDiff(objectYAML(before), objectYAML(clean(after)), beforeLabel, `restored (resourceVersion ${after.metadata.resourceVersion ?? '?'})`) ?? '';
      return { action: 'updated', diff, warnings, resourceVersion: after.metadata.resourceVersion };
    } catch (err) {
      // Someone changed the object since we read it (the patch's test of the resourceVersion failed, or apply
      // met a conflict): start over from what is there now.
      if (attempt < ATTEMPTS && (err instanceof ConflictError || (err instanceof InvalidError && (await client.find(type, key))?.metadata.resourceVersion !== live.metadata.resourceVersion))) continue;
      throw err;
    }
  }
}

/**
 * The JSON patch that turns `current` into `wanted`, both cleaned. Labels and annotations are changed key by
 * key, so that what cleaning hides there (the deployment controller's revision) is left alone; `real` is the
 * uncleaned object's metadata, which says whether the label and annotation maps exist at all. Lists are
 * replaced whole.
 */
export function leftoverOps(current: Json, wanted: Json, real?: { labels?: unknown; annotations?: unknown }): JsonPatchOp[] {
  const from = structuredClone(current);
  const to = structuredClone(wanted);
  delete from.status;
  delete to.status;
  const fromMeta = (from.metadata ?? {}) as Json;
  const toMeta = (to.metadata ?? {}) as Json;
  const ops: JsonPatchOp[] = [];
  for (const field of ['labels', 'annotations'] as const) {
    const had = (fromMeta[field] ?? {}) as Record<string, unknown>;
    const want = (toMeta[field] ?? {}) as Record<string, unknown>;
    const exists = real ? real[field] !== undefined : fromMeta[field] !== undefined;
    delete fromMeta[field];
    delete toMeta[field];
    const path = (key: string): string => `/metadata/${field}/${escapePointerToken(key)}`;
    const mapOps: JsonPatchOp[] = [];
    for (const key of Object.keys(had)) if (!Object.hasOwn(want, key)) mapOps.push({ op: 'remove', path: path(key) });
    for (const [key, value] of Object.entries(want)) {
      if (!Object.hasOwn(had, key)) mapOps.push({ op: 'add', path: path(key), value });
      else if (had[key] !== value) mapOps.push({ op: 'replace', path: path(key), value });
    }
    if (!exists && mapOps.some((op) => op.op === 'add')) ops.push({ op: 'add', path: `/metadata/${field}`, value: {} });
    ops.push(...mapOps);
  }
  return [...ops, ...jsonPatchDiff(from, to)];
}

/** Creates the object; a Service whose recorded cluster IP is taken by now gets a new one. */
async function createAgain(client: RestoreClient, type: ResourceType<OpenObject>, target: Json, id: ObjectId, warnings: string[]): Promise<OpenObject> {
  try {
    return await client.create(type, target as unknown as OpenObject, { fieldManager: RESTORE_FIELD_MANAGER });
  } catch (err) {
    const spec = target.spec as Json | undefined;
    if (!(err instanceof InvalidError) || id.group !== '' || id.kind !== 'Service' || spec?.clusterIP === undefined || !/already allocated/i.test(err.message)) throw err;
    warnings.push(`the recorded cluster IP ${JSON.stringify(spec.clusterIP)} is taken by now: the Service got a new one`);
    delete spec.clusterIP;
    delete spec.clusterIPs;
    return client.create(type, target as unknown as OpenObject, { fieldManager: RESTORE_FIELD_MANAGER });
  }
}

/**
 * Fields the API server does not let change, taken from the live object when they differ (a Service created
 * again got a new cluster IP): the rest of the record still applies.
 */
function keepImmutable(target: Json, live: KubeObject, id: ObjectId): void {
  if (id.group !== '' || id.kind !== 'Service') return;
  const liveSpec = (live as OpenObject).spec as Json | undefined;
  const spec = target.spec as Json | undefined;
  if (!liveSpec || !spec) return;
  for (const field of ['clusterIP', 'clusterIPs']) if (liveSpec[field] !== undefined) spec[field] = liveSpec[field];
}

/**
 * Owner references as they must be now: to an owner that was created again, with its new uid; an owner that
 * is gone is dropped. A reference to a uid that does not exist would make the garbage collector delete the
 * restored object at once.
 */
async function adjustOwners(client: RestoreClient, target: Json, id: ObjectId): Promise<string[]> {
  const metadata = target.metadata as Json;
  const owners = metadata.ownerReferences as OwnerReference[] | undefined;
  if (!owners?.length) return [];
  const warnings: string[] = [];
  const kept: OwnerReference[] = [];
  for (const owner of owners) {
    const ownerId: ObjectId = { group: groupOf(owner.apiVersion), kind: owner.kind, namespace: id.namespace, name: owner.name };
    let current: KubeObject | undefined;
    try {
      const type = await resourceTypeOf(client, ownerId, owner.apiVersion);
      current = await client.find(type, type.namespaced ? { namespace: id.namespace, name: owner.name } : { namespace: '', name: owner.name });
    } catch (err) {
      if (!(err instanceof CliError)) throw err;
    }
    if (!current?.metadata.uid) {
      warnings.push(`owner reference to ${owner.kind} ${owner.name} dropped: that owner is gone, and the garbage collector would delete an object that points to it`);
    } else if (current.metadata.uid !== owner.uid) {
      warnings.push(`owner reference to ${owner.kind} ${owner.name} now points to the ${owner.kind} of that name that exists (uid ${current.metadata.uid}, was ${owner.uid})`);
      kept.push({ ...owner, uid: current.metadata.uid });
    } else {
      kept.push(owner);
    }
  }
  if (kept.length > 0) metadata.ownerReferences = kept;
  else delete metadata.ownerReferences;
  return warnings;
}

/** The resource an object of `id`'s kind is written to, in the record's apiVersion when it has one. */
async function resourceTypeOf(client: Pick<Client, 'request'>, id: Pick<ObjectId, 'group' | 'kind'>, apiVersion?: string): Promise<ResourceType<OpenObject>> {
  const kind = await new DiscoveryClient(client).resolveKind({ group: id.group, kind: id.kind });
  if (!kind) throw new CliError(`the API server does not serve ${groupKindName(id)}: there is nowhere to restore it to (is its CRD installed?)`);
  const version = apiVersion && groupOf(apiVersion) === id.group ? apiVersion : kind.type.apiVersion;
  return resource<OpenObject>(version, id.kind, kind.resource, kind.namespaced);
}
