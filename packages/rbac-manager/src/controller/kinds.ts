// The kinds the manager makes, as the runtime's typed resources, by the planner's ObjectKind.
import { ClusterRoleBindings, RoleBindings, ServiceAccounts, type OpenObject, type ResourceType } from '@quorum/runtime';
import type { ObjectKind } from '../plan/desired.ts';

export const MADE_KINDS: Record<ObjectKind, ResourceType<OpenObject>> = {
  ClusterRoleBinding: ClusterRoleBindings,
  RoleBinding: RoleBindings,
  ServiceAccount: ServiceAccounts,
};

/** The field manager of every write the manager makes. */
export const FIELD_MANAGER = 'quorum-rbac-manager';
/** The reportingController of its Events. */
export const EVENT_CONTROLLER = 'rbac.quorum.dev/rbac-manager';
