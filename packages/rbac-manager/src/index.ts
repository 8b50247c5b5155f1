// @quorum/rbac-manager: access as code (issue 22). The RBACDefinition API, the pure planner, and (below) the
// controller, the escalation webhook, the manifests and the CLI commands.
export * from './api/rbacdefinition.ts';
export * from './api/schema.ts';
export { rbacDefinitionCRD, rbacDefinitionCRDYAML } from './api/crd.ts';
export { validateDefinition } from './api/validate.ts';
export { RBACDefinitions } from './resources.ts';
export { desiredState, type World, type DesiredState } from './plan/desired.ts';
export { planActions, type Action } from './plan/actions.ts';
export { createRbacManager, type RbacManagerOptions } from './operator/manager.ts';
export { escalationWebhook, subjectAccessReviewer } from './admission/webhook.ts';
export { rbacManagerManifests, sampleDefinition, escalationWebhookConfiguration, RBAC_MANAGER_IMAGE, type RbacManagerManifestOptions } from './deploy/manifests.ts';
export { installRbacManager, uninstallRbacManager, type RbacInstallOptions } from './deploy/install.ts';
export { importFairwindsDefinitions, convertDefinition } from './migrate/fairwinds.ts';
export { commands, kubectlCommands } from './cli/commands.ts';

/** Builds the manager's image (OCI archive); loaded on demand, since it needs @quorum/images, a build-time package. */
export async function buildRbacManagerImage(name?: string): Promise<import('@quorum/kit/image').ImageArchive> {
  return (await import('./deploy/image.ts')).buildRbacManagerImage(name);
}
