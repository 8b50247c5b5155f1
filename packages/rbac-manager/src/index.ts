// @quorum/rbac-manager: access as code (issue 22). The RBACDefinition API, the pure planner, and (below) the
// controller, the escalation webhook, the manifests and the CLI commands.
export * from './api/rbacdefinition.ts';
export { rbacDefinitionCRD, rbacDefinitionCRDYAML } from './api/crd.ts';
export { validateDefinition } from './api/validate.ts';
export { RBACDefinitions } from './resources.ts';
export { desiredState, type World, type DesiredState } from './plan/desired.ts';
export { planActions, type Action } from './plan/actions.ts';
