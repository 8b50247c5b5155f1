// The layout of a record store, the same on a volume and in an object store (where folders are key
// prefixes):
//
//   <store>/<namespace>/<group>.<kind>/<name>/<timestamp>-<resourceVersion>.yaml   one record each
//   <store>/<namespace>/<group>.<kind>/<name>/.last-seen.yaml                       newest version seen
//   <store>/_cluster/…                                                              cluster-scoped objects
//   <store>/.redaction-key                                                          key of Secret hashes
//
// The core group is written `core` (core.ConfigMap, apps.Deployment). A store is recognised by its
// redaction key, which the recorder writes when it opens a store for the first time.
import { randomBytes } from 'node:crypto';

/** An object's place in the store. `namespace` is empty for cluster-scoped objects; `group` for the core group. */
export interface ObjectRef {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

export const CLUSTER_FOLDER = '_cluster';
export const LAST_SEEN_FILE = '.last-seen.yaml';
export const REDACTION_KEY_FILE = '.redaction-key';

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

/** The redaction key's file content for a new store: 32 random bytes, hex. */
export function newRedactionKey(): { key: Uint8Array; text: string } {
  const key = randomBytes(32);
  return { key, text: `${key.toString('hex')}\n` };
}

/** A stored redaction key; `where` names it in the error when it is not one the recorder wrote. */
export function parseRedactionKey(text: string, where: string): Uint8Array {
  const key = Buffer.from(text.trim(), 'hex');
  if (key.length >= 32) return key;
  throw new Error(`${where} holds ${key.length} bytes, not the 32 written when the store was created`);
}
