// `quorum rbac install|uninstall`: the manager from its own manifests (manifests.ts), written with server-side
// apply (field manager quorum-rbac-install) and strict field validation, then waits for it to roll out and for
// its webhook CA to be published (until then the fail-closed webhook refuses every definition write).
// Uninstalling removes the webhook configuration first, then the manager; the CRD and every definition stay,
// and so do the bindings they made: removing the CRD would delete the definitions and, through their owner
// references, every binding (everyone's access at once), which an uninstall must never do.
import { applyManifests, removeManifests, waitCaBundlesPublished, waitRolledOut } from '@quorum/kit';
import { ValidatingWebhookConfigurations, type Client } from '@quorum/runtime';
import { ESCALATION_WEBHOOK_CONFIGURATION } from '../admission/serving.ts';
import { DEFAULT_NAMESPACE, NAME, rbacManagerManifests, type RbacManagerManifestOptions } from './manifests.ts';

export const INSTALL_FIELD_MANAGER = 'quorum-rbac-install';

export interface RbacInstallOptions extends RbacManagerManifestOptions {
  /** Wait for the rollout and the webhook's CA (default true). */
  wait?: boolean;
  /** The rollout's bound (default 180 s). */
  timeoutMs?: number;
  log?: (line: string) => void;
}

export async function installRbacManager(client: Client, options: RbacInstallOptions = {}): Promise<void> {
  const log = options.log ?? (() => undefined);
  await applyManifests(client, rbacManagerManifests(options), { fieldManager: INSTALL_FIELD_MANAGER, fieldValidation: 'Strict', log });
  if (options.wait === false) return;
  await waitRolledOut(client, { namespace: options.namespace ?? DEFAULT_NAMESPACE, name: NAME }, { timeoutMs: options.timeoutMs ?? 180_000 });
  await waitCaBundlesPublished(client, ValidatingWebhookConfigurations, ESCALATION_WEBHOOK_CONFIGURATION);
  log('rbac manager ready');
}

/** Removes the webhook configuration (first: it is fail-closed), then the manager; keeps the CRD, the definitions and their bindings. */
export async function uninstallRbacManager(client: Client, options: Pick<RbacManagerManifestOptions, 'namespace'> = {}): Promise<void> {
  await removeManifests(client, rbacManagerManifests(options), { keep: ['Namespace', 'CustomResourceDefinition'] });
}
