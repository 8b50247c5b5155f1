// The layout of a record store, the same on a volume and in an object store (where folders are key
// prefixes):
//
//   <store>/<namespace>/<group>.<kind>/<name>/<timestamp>-<resourceVersion>.yaml   one record each
//   <store>/<namespace>/<group>.<kind>/<name>/.last-seen.yaml                       newest version seen
//   <store>/_cluster/…                                                              cluster-scoped objects
//   <store>/.quorum-store                                                           the store's marker and id
//
// The core group is written `core` (core.ConfigMap, apps.Deployment). A store is recognised by its marker,
// which the recorder writes when it opens a store for the first time, with the id its redaction key is kept
// under, apart from the store (redaction-keys.ts). Stores written before the keys moved have a
// `.redaction-key` instead, until the recorder opens them: it adopts the key, writes the marker, and removes it.
import { randomBytes } from 'node:crypto';
import type { RedactionKeySource } from './redaction-keys.ts';

/** An object's place in the store. `namespace` is empty for cluster-scoped objects; `group` for the core group. */
export interface ObjectRef {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

export const CLUSTER_FOLDER = '_cluster';
export const LAST_SEEN_FILE = '.last-seen.yaml';
/** Where a store kept its own redaction key before the keys moved to a Secret: read once, adopted, removed. */
export const REDACTION_KEY_FILE = '.redaction-key';
export const STORE_MARKER_FILE = '.quorum-store';

/** `apps.Deployment`, `core.ConfigMap`: a kind's folder. Kinds have no dots, so the last one splits it. */
export function kindFolder(group: string, kind: string): string {
  return `${group || 'core'}.${kind}`;
}

/** `apps.Deployment` → apps/Deployment, `core.ConfigMap` → ''/ConfigMap; undefined for anything else. */
export function parseKindFolder(folder: string): { group: string; kind: string } | undefined {
  const dot = folder.lastIndexOf('.');
  if (dot <= 0 || dot === folder.length - 1) return undefined;
  const group = folder.slice(0, dot);
  return { group: group === 'core' ? '' : group, kind: folder.slice(dot + 1) };
}

/** The folders of an object below its store: namespace (or _cluster), kind, name. */
export function objectFolders(ref: ObjectRef): [string, string, string] {
  return [ref.namespace || CLUSTER_FOLDER, kindFolder(ref.group, ref.kind), ref.name];
}

/** `default/core.ConfigMap/app`: an object's folder below its store, as a path (and a queue key). */
export function objectPath(ref: ObjectRef): string {
  return objectFolders(ref).join('/');
}

/** A legacy `.redaction-key` file's key; `where` names it in the error when it is not one the recorder wrote. */
export function parseRedactionKey(text: string, where: string): Uint8Array {
  const key = Buffer.from(text.trim(), 'hex');
  if (key.length >= 32) return key;
  throw new Error(`${where} holds ${key.length} bytes, not the 32 written when the store was created`);
}

const MARKER_ID = /^id: ([0-9a-f]{32})$/m;

/** The marker file's content for a store of `id`. */
export function storeMarker(id: string): string {
  return `# history.quorum.dev record store; its redaction key is kept apart, under this id\nid: ${id}\n`;
}

/** The id in a marker file; `where` names it when it is not one the recorder wrote. */
export function parseStoreMarker(text: string, where: string): string {
  const id = MARKER_ID.exec(text)?.[1];
  if (id === undefined) throw new Error(`${where} is not a record store marker (no id line)`);
  return id;
}

/** What a store holds of its identity when it is opened, and how to write what it lacks. */
export interface StoreIdentityFiles {
  /** The id of its marker; undefined when it has none yet (a new store, or one written before markers). */
  id: string | undefined;
  /** The key of its legacy `.redaction-key`, when it still has one. */
  legacyKey: Uint8Array | undefined;
  writeMarker(content: string): Promise<void>;
  removeLegacyKey(): Promise<void>;
}

/**
 * The store's redaction key, kept by `keys` under the store's id. A store without a marker gets a new id; one
 * with a legacy key file has that key adopted (so its old records' hashes stay comparable), and the file is
 * removed only once the key is kept and the marker written: a crash in between leaves the file, and the next
 * open adopts it again.
 */
export async function storeRedactionKey(files: StoreIdentityFiles, keys: RedactionKeySource, where: string): Promise<Uint8Array> {
  const id = files.id ?? randomBytes(16).toString('hex');
  const key = await keys.key(id, files.legacyKey);
  if (files.legacyKey && !Buffer.from(key).equals(Buffer.from(files.legacyKey))) {
    throw new Error(`${where}: its ${REDACTION_KEY_FILE} differs from the key ${keys.description} keeps for store ${id}; remove one of them (the file's key hashed this store's older records)`);
  }
  if (files.id === undefined) await files.writeMarker(storeMarker(id));
  if (files.legacyKey) await files.removeLegacyKey();
  return key;
}
