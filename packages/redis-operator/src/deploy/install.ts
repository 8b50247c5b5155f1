// Applying the operator's manifests to a cluster (server-side apply, CRD first, waiting until it is established
// and until the operator's Deployment has rolled out), and removing the operator again without touching any Redis,
// its pods or its data. The machinery is the kit's installer.
import { applyManifests, removeManifests, waitCaBundlesPublished, waitRolledOut } from '@quorum/kit';
import { ForbiddenError, Namespaces, RoleBindings, Roles, ValidatingWebhookConfigurations, type Client, type KubeObject } from '@quorum/runtime';
import { OPERATOR_POD_LABELS } from '../names.ts';
import { VALIDATING_WEBHOOK } from '../webhooks/credentials.ts';
import { NAME, operatorManifests, redisTenantNamespaces, type ManifestOptions } from './manifests.ts';

const FIELD_MANAGER = 'quorum-redis-install';

export interface InstallOptions extends ManifestOptions {
  /** Wait until the operator's pod is ready (default true). */
  wait?: boolean;
  log?: (line: string) => void;
}

export async function install(client: Client, options: InstallOptions = {}): Promise<void> {
  const log = options.log ?? (() => undefined);
  const objects = operatorManifests(options);
  // A Role cannot be created in a namespace that does not exist: say so before anything changes.
  const missing: string[] = [];
  for (const ns of redisTenantNamespaces(options) ?? []) if (!(await client.find(Namespaces, ns))) missing.push(ns);
  if (missing.length > 0) throw new Error(`the tenant namespaces ${missing.join(', ')} do not exist: create them first (kubectl create namespace NAME), or give others with --namespaces`);
  await applyManifests(client, objects, { fieldManager: FIELD_MANAGER, log });
  if (options.wait === false) return;
  await waitRolledOut(client, { namespace: options.namespace ?? 'quorum-system', name: NAME });
  log('operator ready');
  if (options.webhooks === false) return;
  // The operator publishes its CA into the configuration once it serves: until then the API server cannot call it.
  await waitCaBundlesPublished(client, ValidatingWebhookConfigurations, VALIDATING_WEBHOOK);
  log('webhook CA published');
}

/**
 * Removes the operator (Deployment, RBAC, webhook). The CRD and every Redis, its pods, claims and Secrets stay.
 * The RBAC of either scope goes whatever `options` say: the ClusterRole, and the tenant namespaces' Roles wherever
 * they are (found by name and label), so an uninstall need not repeat the install's namespaces.
 */
export async function uninstall(client: Client, options: ManifestOptions = {}): Promise<void> {
  // The webhook's objects whatever `options` say: an install with them is undone by an uninstall without the flag.
  const objects = operatorManifests({ ...(options.namespace !== undefined ? { namespace: options.namespace } : {}), clusterWide: true, webhooks: true });
  await removeManifests(client, [...objects, ...(await tenantAccess(client))], { keep: ['CustomResourceDefinition', 'Namespace'] });
}

/** The tenant namespaces' Roles and RoleBindings, in every namespace (none when this client may not list them). */
async function tenantAccess(client: Client): Promise<KubeObject[]> {
  const labelSelector = Object.entries(OPERATOR_POD_LABELS).map(([k, v]) => `${k}=${v}`).join(',');
  const found: KubeObject[] = [];
  for (const type of [Roles, RoleBindings]) {
    try {
      const list = await client.list(type, { labelSelector, fieldSelector: `metadata.name=${NAME}` });
      found.push(...list.items.map((o) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: type.kind, metadata: { name: o.metadata.name, namespace: o.metadata.namespace } })));
    } catch (err) {
      if (!(err instanceof ForbiddenError)) throw err;
    }
  }
  return found;
}
