// The EtcdRestore API (etcd.quorum.dev/v1alpha1): the imperative twin of spec.bootstrap.fromBackup, as
// CoreOS's operator had it. It creates a new EtcdCluster that starts from a backup, and reports how that
// restore goes. The CRD, the types and its section of docs/api.md all come from the schemas in
// etcdrestore-schema.ts; this file holds the names, rules and types used at run time.
import type { Static } from '@sinclair/typebox';
import type { Condition } from '@quorum/runtime';
import type { ObjectMeta } from '@quorum/runtime';
import type { Destination } from './destination.ts';
import { GROUP, VERSION, type EtcdClusterSpec } from './etcdcluster.ts';
import type { EtcdRestoreStatusSchema } from './etcdrestore-schema.ts';

export const RESTORE_KIND = 'EtcdRestore';
export const RESTORE_LIST_KIND = 'EtcdRestoreList';
export const RESTORE_PLURAL = 'etcdrestores';
export const RESTORE_SINGULAR = 'etcdrestore';
export const RESTORE_SHORT_NAMES: readonly string[] = ['etcdrestore'];
export const RESTORE_API_VERSION = `${GROUP}/${VERSION}`;

export const RESTORE_PHASES = ['Pending', 'Restoring', 'Succeeded', 'Failed'] as const;
export type RestorePhase = (typeof RESTORE_PHASES)[number];

/** Condition types of an EtcdRestore: Complete (True once the new cluster is Available) and Failed (True with the reason). */
export const RESTORE_CONDITION_TYPES = ['Complete', 'Failed'] as const;

export const RESTORE_RULES = {
  specImmutable: { rule: 'self == oldSelf', message: 'an EtcdRestore spec is immutable: create a new EtcdRestore for another restore' },
  source: {
    // sha256 with destination and key: the members check the snapshot against it (an EtcdBackup records its own).
    rule: 'has(self.backupName) ? !has(self.destination) && !has(self.key) && !has(self.sha256) : has(self.destination) && has(self.key) && has(self.sha256)',
    message: 'an EtcdRestore must set either backupName, or destination, key and sha256 (the snapshot is checked against it before any member starts)',
  },
  version: {
    rule: "!has(self.clusterSpec) || !has(self.clusterSpec.version) || !self.clusterSpec.version.startsWith('3.4.')",
    message: 'a restore needs etcd 3.5 or newer (members are restored with etcdutl, which 3.4 lacks)',
  },
} as const;

/** spec.backupWaitSeconds when unset: an hour (the CRD defaults it; the operator's own code does too). */
export const DEFAULT_BACKUP_WAIT_SECONDS = 3600;

/** The EtcdCluster spec fields a restore may set for the new cluster, with EtcdCluster's own schemas. */
export const RESTORE_CLUSTER_SPEC_FIELDS = ['replicas', 'version', 'repository', 'image', 'storage', 'podTemplate', 'antiAffinity', 'etcd', 'tls'] as const;

export type EtcdRestoreStatus = Static<typeof EtcdRestoreStatusSchema>;
export type RestoreCondition = Condition;
export type RestoreClusterSpec = Pick<EtcdClusterSpec, (typeof RESTORE_CLUSTER_SPEC_FIELDS)[number]>;

export interface EtcdRestore {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: { clusterName: string; backupName?: string; destination?: Destination; key?: string; sha256?: string; clusterSpec?: RestoreClusterSpec; backupWaitSeconds?: number };
  status?: EtcdRestoreStatus;
}
