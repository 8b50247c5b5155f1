// `quorum rbac install|uninstall`: the manager from its own manifests (manifests.ts), written with server-side
// apply (field manager quorum-rbac-install) and strict field validation, then waits for it to roll out, for its
// webhook CA to be published and for the webhook to answer through the API server (until then the fail-closed
// webhook refuses every definition write).
// Uninstalling removes the webhook configuration first, then the manager; the CRD and every definition stay,
// and so do the bindings they made: removing the CRD would delete the definitions and, through their owner
// references, every binding (everyone's access at once), which an uninstall must never do.
import { applyManifests, removeManifests, waitCaBundlesPublished, waitRolledOut } from '@quorum/kit';
import { AlreadyExistsError, ValidatingWebhookConfigurations, waitFor, type Client } from '@quorum/runtime';
import { ESCALATION_WEBHOOK_CONFIGURATION } from '../admission/serving.ts';
import { API_VERSION, KIND } from '../api/rbacdefinition.ts';
import { RBACDefinitions } from '../resources.ts';
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
  await waitWebhookAnswers(client, options.timeoutMs ?? 180_000);
  log('rbac manager ready');
}

/** The name of the definition the installer creates in dry run only. */
export const INSTALL_PROBE_DEFINITION = 'quorum-rbac-install-probe';

/**
 * Until the escalation webhook answers through the API server: a dry-run create of an RBACDefinition that binds
 * nothing (so the answer is yes) passes admission. A rolled-out pod whose CA is published can still be out of
 * reach for a moment (its Service's endpoints reach kube-proxy after the pod is ready; the integration test met
 * "connection refused" there), and the webhook fails closed, so without this wait a definition applied right
 * after the install could be refused. AlreadyExists (someone made a definition of that name) comes after
 * admission, so it says the same. Nothing is stored: dryRun.
 */
async function waitWebhookAnswers(client: Client, timeoutMs: number): Promise<void> {
  const probe = { apiVersion: API_VERSION, kind: KIND, metadata: { name: INSTALL_PROBE_DEFINITION } };
  await waitFor(
    `the escalation webhook to answer through the API server (a dry-run create of RBACDefinition ${INSTALL_PROBE_DEFINITION})`,
    async () => {
      try {
        await client.create(RBACDefinitions, probe, { dryRun: true, fieldManager: INSTALL_FIELD_MANAGER });
      } catch (err) {
        if (!(err instanceof AlreadyExistsError)) throw err;
      }
      return true;
    },
    { timeoutMs, intervalMs: 500 },
  );
}

/** Removes the webhook configuration (first: it is fail-closed), then the manager; keeps the CRD, the definitions and their bindings. */
export async function uninstallRbacManager(client: Client, options: Pick<RbacManagerManifestOptions, 'namespace'> = {}): Promise<void> {
  await removeManifests(client, rbacManagerManifests(options), { keep: ['Namespace', 'CustomResourceDefinition'] });
}
