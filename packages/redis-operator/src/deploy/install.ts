// Applying the operator's manifests to a cluster (server-side apply, CRD first, waiting until it is established
// and until the operator's Deployment has rolled out), and removing the operator again without touching any Redis,
// its pods or its data. The machinery is the kit's installer.
import { applyManifests, removeManifests, waitCaBundlesPublished, waitRolledOut } from '@quorum/kit';
import { ValidatingWebhookConfigurations, type Client } from '@quorum/runtime';
import { VALIDATING_WEBHOOK } from '../webhooks/credentials.ts';
import { NAME, operatorManifests, type ManifestOptions } from './manifests.ts';

const FIELD_MANAGER = 'quorum-redis-install';

export interface InstallOptions extends ManifestOptions {
  /** Wait until the operator's pod is ready (default true). */
  wait?: boolean;
  log?: (line: string) => void;
}

export async function install(client: Client, options: InstallOptions = {}): Promise<void> {
  const log = options.log ?? (() => undefined);
  await applyManifests(client, operatorManifests(options), { fieldManager: FIELD_MANAGER, log });
  if (options.wait === false) return;
  await waitRolledOut(client, { namespace: options.namespace ?? 'quorum-system', name: NAME });
  log('operator ready');
  if (options.webhooks === false) return;
  // The operator publishes its CA into the configuration once it serves: until then the API server cannot call it.
  await waitCaBundlesPublished(client, ValidatingWebhookConfigurations, VALIDATING_WEBHOOK);
  log('webhook CA published');
}

/** Removes the operator (Deployment, RBAC, webhook). The CRD and every Redis, its pods, claims and Secrets stay. */
export async function uninstall(client: Client, options: ManifestOptions = {}): Promise<void> {
  // The webhook's objects whatever `options` say: an install with them is undone by an uninstall without the flag.
  await removeManifests(client, operatorManifests({ ...options, webhooks: true }), { keep: ['CustomResourceDefinition', 'Namespace'] });
}
