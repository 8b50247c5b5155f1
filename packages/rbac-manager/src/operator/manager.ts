// The manager process: a runtime Manager with the RBACDefinition controller. Every source only enqueues the
// definitions a change concerns: the definition itself, the owner of an object it made (a manual edit or
// deletion is set back), the definitions a namespace concerns (created, relabelled, deleted: by watch, within
// the moment, never by resync), and those naming a role that appears or goes.
import { hostname } from 'node:os';
import {
  ClusterRoleBindings,
  ClusterRoles,
  generationChanged,
  Manager,
  Namespaces,
  RoleBindings,
  Roles,
  ServiceAccounts,
  type Logger,
  type ManagerOptions,
  type ObjectKey,
  type OpenObject,
  type Predicate,
} from '@quorum/runtime';
import type { RBACDefinition } from '../api/rbacdefinition.ts';
import { EVENT_CONTROLLER } from '../controller/kinds.ts';
import type { Caches } from '../controller/observe.ts';
import { rbacDefinitionReconciler } from '../controller/reconcile.ts';
import { concernsNamespace, concernsRole } from '../plan/desired.ts';
import { MANAGED_BY, MANAGED_BY_LABEL } from '../plan/names.ts';
import { RBACDefinitions } from '../resources.ts';

export interface RbacManagerOptions {
  manager?: Partial<ManagerOptions>;
  logger?: Logger;
  /** The reportingInstance of its Events (the pod's name); default the host name. */
  instance?: string;
  /** Definitions reconciled at once. */
  workers?: number;
  /** Writes in flight at once within one definition. */
  writeConcurrency?: number;
  now?: () => Date;
}

const MADE_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;

/** A namespace matters when it appears, goes, starts going, or its labels change. */
const namespaceChanged: Predicate<OpenObject> = (e) =>
  e.type !== 'update' ||
  e.object.metadata.deletionTimestamp !== e.oldObject.metadata.deletionTimestamp ||
  JSON.stringify(e.object.metadata.labels ?? {}) !== JSON.stringify(e.oldObject.metadata.labels ?? {});
const appearsOrGoes: Predicate<OpenObject> = (e) => e.type !== 'update';

export async function createRbacManager(options: RbacManagerOptions = {}): Promise<{ manager: Manager }> {
  const manager = await Manager.create({ ...(options.logger ? { logger: options.logger } : {}), ...options.manager });
  const definitions = manager.informer(RBACDefinitions);
  const keys = (match: (d: RBACDefinition) => boolean): ObjectKey[] => definitions.store.list().filter(match).map((d) => ({ namespace: '', name: d.metadata.name ?? '' }));
  const made = [RoleBindings, ClusterRoleBindings, ServiceAccounts].map((type) => manager.informer(type, { labelSelector: MADE_SELECTOR }));
  const caches: Caches = { namespaces: manager.informer(Namespaces), clusterRoles: manager.informer(ClusterRoles), roles: manager.informer(Roles), made };
  const metrics = manager.metrics;
  const builder = manager
    .controller('rbacdefinition')
    // Status writes do not change the generation, so they do not wake the definition.
    .for(RBACDefinitions, { predicates: [generationChanged] })
    .watches(Namespaces, (ns) => keys((d) => concernsNamespace(d, ns.metadata.name ?? '', ns.metadata.labels)), { predicates: [namespaceChanged] })
    .watches(ClusterRoles, (role) => keys((d) => concernsRole(d, 'ClusterRole', role.metadata.name ?? '')), { predicates: [appearsOrGoes] })
    .watches(Roles, (role) => keys((d) => concernsRole(d, 'Role', role.metadata.name ?? '')), { predicates: [appearsOrGoes] });
  for (const type of [RoleBindings, ClusterRoleBindings, ServiceAccounts]) builder.owns(type, { labelSelector: MADE_SELECTOR });
  builder.withOptions({ maxConcurrentReconciles: options.workers ?? 4 }).complete(
    rbacDefinitionReconciler({
      client: manager.client,
      definitions,
      caches,
      events: manager.eventRecorder({ controller: EVENT_CONTROLLER, instance: options.instance ?? hostname() }),
      writes: metrics.counter('rbac_manager_writes_total', 'Objects the RBAC manager created, updated, adopted or deleted, by kind, action and reason (Granted, Updated, Adopted, Revoked, Expired).', ['kind', 'action', 'reason']),
      transitions: metrics.counter('rbac_manager_window_transitions_total', 'Bindings whose time window began (Active) or ended (Expired), as the manager acted on them.', ['state']),
      concurrency: options.writeConcurrency ?? 16,
      now: options.now ?? (() => new Date()),
    }),
  );
  return { manager };
}
