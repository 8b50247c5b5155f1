// Applying the operator's manifests to a cluster (server-side apply, CRD first, waiting until it is established
// and until the operator's Deployment has rolled out), and removing the operator again without touching any Redis,
// its pods or its data. The machinery is the kit's installer.
import { applyManifests, removeManifests, waitRolledOut } from '@quorum/kit';
import type { Client } from '@quorum/runtime';
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
}

/** Removes the operator (Deployment, RBAC). The CRD and every Redis, its pods, claims and Secrets stay. */
export async function uninstall(client: Client, options: ManifestOptions = {}): Promise<void> {
  await removeManifests(client, operatorManifests(options), { keep: ['CustomResourceDefinition', 'Namespace'] });
}
