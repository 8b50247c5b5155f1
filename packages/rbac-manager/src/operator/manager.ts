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
  ValidatingWebhookConfigurations,
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
import { trustedCAReader, webhookGate, type EscalationWebhookRef } from '../controller/webhook-gate.ts';
import { concernsNamespace, concernsRole } from '../plan/desired.ts';
import { MANAGED_BY, MANAGED_BY_LABEL } from '../plan/names.ts';
import { RBACDefinitions } from '../resources.ts';

export interface RbacManagerOptions {
  /** The escalation webhook's configuration: the manager grants only while it guards every definition write. */
  escalationWebhook: EscalationWebhookRef;
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
/** Definitions reconciled at once, and writes in flight within each: together what the API server sees at most. */
export const DEFAULT_WORKERS = 4;
export const DEFAULT_WRITE_CONCURRENCY = 16;

/** A namespace matters when it appears, goes, starts going, or its labels change. */
const namespaceChanged: Predicate<OpenObject> = (e) =>
  e.type !== 'update' ||
  e.object.metadata.deletionTimestamp !== e.oldObject.metadata.deletionTimestamp ||
  JSON.stringify(e.object.metadata.labels ?? {}) !== JSON.stringify(e.oldObject.metadata.labels ?? {});
const appearsOrGoes: Predicate<OpenObject> = (e) => e.type !== 'update';

export async function createRbacManager(options: RbacManagerOptions): Promise<{ manager: Manager }> {
  const manager = await Manager.create({ ...(options.logger ? { logger: options.logger } : {}), ...options.manager });
  const definitions = manager.informer(RBACDefinitions);
  const keys = (match: (d: RBACDefinition) => boolean): ObjectKey[] => definitions.store.list().filter(match).map((d) => ({ namespace: '', name: d.metadata.name ?? '' }));
  const made = [RoleBindings, ClusterRoleBindings, ServiceAccounts].map((type) => manager.informer(type, { labelSelector: MADE_SELECTOR }));
  const caches: Caches = { namespaces: manager.informer(Namespaces), clusterRoles: manager.informer(ClusterRoles), roles: manager.informer(Roles), made };
  const metrics = manager.metrics;
  // Only its own configuration: the RBAC allows list and watch of that one name.
  const webhookScope = { fieldSelector: `metadata.name=${options.escalationWebhook.configuration}` };
  const webhookConfigurations = manager.informer(ValidatingWebhookConfigurations, webhookScope);
  const gateLog = manager.log.child({ component: 'escalation-webhook-gate' });
  const webhookProblem = webhookGate({
    ref: options.escalationWebhook,
    read: () => webhookConfigurations.store.get(options.escalationWebhook.configuration),
    trustedCAs: trustedCAReader(manager.client, options.escalationWebhook.ca, gateLog),
    log: gateLog,
    inPlace: metrics.gauge('rbac_manager_escalation_webhook_in_place', 'Whether the escalation webhook guards every RBACDefinition write (1), or the manager withholds every grant until it does (0).', []),
  });
  const builder = manager
    .controller('rbacdefinition')
    // Status writes do not change the generation, so they do not wake the definition.
    .for(RBACDefinitions, { predicates: [generationChanged] })
    .watches(Namespaces, (ns) => keys((d) => concernsNamespace(d, ns.metadata.name ?? '', ns.metadata.labels)), { predicates: [namespaceChanged] })
    .watches(ClusterRoles, (role) => keys((d) => concernsRole(d, 'ClusterRole', role.metadata.name ?? '')), { predicates: [appearsOrGoes] })
    .watches(Roles, (role) => keys((d) => concernsRole(d, 'Role', role.metadata.name ?? '')), { predicates: [appearsOrGoes] })
    // The webhook's configuration appearing, changing or going concerns every definition.
    .watches(ValidatingWebhookConfigurations, () => keys(() => true), webhookScope);
  for (const type of [RoleBindings, ClusterRoleBindings, ServiceAccounts]) builder.owns(type, { labelSelector: MADE_SELECTOR });
  builder.withOptions({ maxConcurrentReconciles: options.workers ?? DEFAULT_WORKERS }).complete(
    rbacDefinitionReconciler({
      client: manager.client,
      definitions,
      caches,
      events: manager.eventRecorder({ controller: EVENT_CONTROLLER, instance: options.instance ?? hostname() }),
      writes: metrics.counter('rbac_manager_writes_total', 'Objects the RBAC manager created, updated, adopted or deleted, by kind, action and reason (Granted, Updated, Adopted, Revoked, Expired).', ['kind', 'action', 'reason']),
      transitions: metrics.counter('rbac_manager_window_transitions_total', 'Bindings whose time window began (Active) or ended (Expired), as the manager acted on them.', ['state']),
      concurrency: options.writeConcurrency ?? DEFAULT_WRITE_CONCURRENCY,
      now: options.now ?? (() => new Date()),
      webhookProblem,
    }),
  );
  return { manager };
}
