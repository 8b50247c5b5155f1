// Record stores on a real temporary directory, written by the recorder's own FileRecordStore and record
// functions, as a running recorder would have left them: what the history handlers and `quorum history
// --path` are tested against.
//
//   <root>/rec-a      ConfigMap default/app: red → blue → green (+extra) → yellow, live (3 records)
//                     Deployment.apps default/web: replicas 1 → 2, then deleted (2 records, no last-seen)
//                     Secret prod/db: a changed password, redacted (1 record)
//                     ClusterRole.rbac.authorization.k8s.io reader (cluster-scoped): deleted (1 record)
//   <root>/team/b     ConfigMap default/app again (1 record), as a second ChangeRecorder would keep it
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '@quorum/runtime';
import { lastSeenOf, recordOfDeletion, recordOfUpdate, type CleaningContext } from '../../src/record/changes.ts';
import type { ObjectRef } from '../../src/store/layout.ts';
import { FileRecordStore } from '../../src/store/record-store.ts';
import { MemoryRedactionKeys } from './fake-api.ts';

const keys = new MemoryRedactionKeys();

export const CM: ObjectRef = { group: '', kind: 'ConfigMap', namespace: 'default', name: 'app' };
export const DEPLOY: ObjectRef = { group: 'apps', kind: 'Deployment', namespace: 'default', name: 'web' };
export const SECRET: ObjectRef = { group: '', kind: 'Secret', namespace: 'prod', name: 'db' };
export const ROLE: ObjectRef = { group: 'rbac.authorization.k8s.io', kind: 'ClusterRole', namespace: '', name: 'reader' };

export interface Fixture {
  root: string;
  /** Record IDs by object, oldest first. */
  ids: { cm: string[]; deploy: string[]; secret: string[]; role: string[]; cmInB: string[] };
  /** The ConfigMap's data per version: red, blue, green, yellow (the live one). */
  cmData: Record<string, string>[];
}

export function configMap(rv: string, data: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'app', namespace: 'default', resourceVersion: rv, uid: 'u-cm', managedFields: [{ manager: 'kubectl-edit', operation: 'Update', time: `2026-03-01T12:0${rv}:00Z` }] },
    data,
  } as KubeObject;
}

function deployment(rv: string, replicas: number): KubeObject {
  const labels = { app: 'web' };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', resourceVersion: rv, labels },
    spec: { replicas, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] } } },
    status: { replicas },
  } as KubeObject;
}

const id = (file: string): string => file.slice(0, -'.yaml'.length);
const at = (minute: number): Date => new Date(Date.UTC(2026, 2, 1, 12, minute, 0, 0));

export async function writeFixture(t: { after: (fn: () => Promise<void>) => void }): Promise<Fixture> {
  const root = await mkdtemp(join(tmpdir(), 'history-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  const a = await FileRecordStore.open(join(root, 'rec-a'), keys);
  const context: CleaningContext = { settings: { status: false, secrets: 'redact' }, redactionKey: a.redactionKey };
  const ids: Fixture['ids'] = { cm: [], deploy: [], secret: [], role: [], cmInB: [] };

  const cmData: Record<string, string>[] = [{ color: 'red' }, { color: 'blue' }, { color: 'green', extra: 'x' }, { color: 'yellow', extra: 'x' }];
  const versions = cmData.map((data, i) => configMap(String(i + 1), data));
  for (let i = 0; i < 3; i++) {
    const record = recordOfUpdate(versions[i]!, versions[i + 1]!, context, at(i + 1));
    ids.cm.push(id(await a.writeRecord(CM, record!)));
  }
  await a.writeLastSeen(CM, lastSeenOf(versions[3]!, context, at(4)));

  const d1 = deployment('10', 1);
  const d2 = deployment('11', 2);
  ids.deploy.push(id(await a.writeRecord(DEPLOY, recordOfUpdate(d1, d2, context, at(5))!)));
  ids.deploy.push(id(await a.writeRecord(DEPLOY, recordOfDeletion(d2, context, at(6)))));

  const secret = (rv: string, password: string): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'prod', resourceVersion: rv }, data: { password } }) as KubeObject;
  ids.secret.push(id(await a.writeRecord(SECRET, recordOfUpdate(secret('20', 'c2VjcmV0'), secret('21', 'b3RoZXI='), context, at(7))!)));
  await a.writeLastSeen(SECRET, lastSeenOf(secret('21', 'b3RoZXI='), context, at(7)));

  const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'reader', resourceVersion: '30' }, rules: [] } as KubeObject;
  ids.role.push(id(await a.writeRecord(ROLE, recordOfDeletion(role, context, at(8)))));

  const b = await FileRecordStore.open(join(root, 'team', 'b'), keys);
  const contextB: CleaningContext = { settings: { status: false, secrets: 'redact' }, redactionKey: b.redactionKey };
  ids.cmInB.push(id(await b.writeRecord(CM, recordOfUpdate(versions[2]!, versions[3]!, contextB, at(9))!)));
  await b.writeLastSeen(CM, lastSeenOf(versions[3]!, contextB, at(9)));
  return { root, ids, cmData };
}
