// Who changed an object, and when, as far as the object itself tells: its managedFields entries name each
// field manager with the time of its last write. The manager whose entry moved with the change made it.
import type { KubeObject } from '@quorum/runtime';

export interface ChangeAuthor {
  /** The field manager, e.g. kubectl-edit, kubectl-client-side-apply, helm, or a controller's name. */
  manager: string;
  /** Apply (server-side apply) or Update. */
  operation: string;
  /** Set when the write went to a subresource, e.g. status or scale. */
  subresource?: string;
  /** When that manager last wrote (second precision, from the API server). */
  time: string;
}

interface ManagedFieldsEntry {
  manager?: unknown;
  operation?: unknown;
  subresource?: unknown;
  time?: unknown;
  apiVersion?: unknown;
  fieldsType?: unknown;
}

/**
 * Who made the change from `before` to `after`. The managers whose entries are new or carry a new time in
 * `after` wrote it; without `before` (a change found at start), every entry is a candidate. Among the
 * candidates the newest wins. Times have one-second precision, so several may tie: then a write to the object
 * itself is preferred over one to a subresource (a controller updating status in the same second did not make
 * the recorded change), and after that the entry listed last.
 */
export function lastChange(after: KubeObject, before?: KubeObject): ChangeAuthor | undefined {
  const previous = new Set((before?.metadata.managedFields ?? []).map((raw) => identity(raw as ManagedFieldsEntry, true)));
  const entries = (after.metadata.managedFields ?? []).map((raw) => raw as ManagedFieldsEntry);
  const changed = entries.filter((e) => !previous.has(identity(e, true)));
  return newest(changed) ?? newest(entries);
}

function identity(entry: ManagedFieldsEntry, withTime: boolean): string {
  return JSON.stringify([entry.manager, entry.operation, entry.subresource ?? '', withTime ? entry.time : '']);
}

function newest(entries: readonly ManagedFieldsEntry[]): ChangeAuthor | undefined {
  let best: { author: ChangeAuthor; at: number } | undefined;
  for (const entry of entries) {
    if (typeof entry.manager !== 'string' || typeof entry.time !== 'string') continue;
    const at = Date.parse(entry.time);
    if (Number.isNaN(at)) continue;
    const author: ChangeAuthor = { manager: entry.manager, operation: typeof entry.operation === 'string' ? entry.operation : '', time: entry.time };
    if (typeof entry.subresource === 'string' && entry.subresource !== '') author.subresource = entry.subresource;
    const better = !best || at > best.at || (at === best.at && (author.subresource === undefined || best.author.subresource !== undefined));
    if (better) best = { author, at };
  }
  return best?.author;
}

/**
 * The informer transform: managedFields kept without their field sets, which are most of their size and
 * which lastChange() does not read. The runtime's default transform drops managedFields whole.
 */
export function keepManagersOnly<T extends KubeObject>(obj: T): T {
  const entries = obj.metadata.managedFields;
  if (!entries) return obj;
  const slim = entries.map((raw) => {
    const { manager, operation, subresource, time } = raw as ManagedFieldsEntry;
    return Object.fromEntries(Object.entries({ manager, operation, subresource, time }).filter(([, v]) => v !== undefined));
  });
  return { ...obj, metadata: { ...obj.metadata, managedFields: slim } };
}
