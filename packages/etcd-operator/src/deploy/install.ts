// Applying the generated manifests to a cluster (server-side apply, CRD first), waiting until the operator
// serves; and removing the operator again without touching any etcd cluster or its data. The machinery is the
// kit's installer; what is the etcd operator's own: the webhook configurations go last (once the operator can
// answer them), and an install waits until the API server's calls to the webhooks are answered.
import { applyManifests, removeManifests, waitCaBundlesPublished, waitFor, waitRolledOut } from '@quorum/kit';
import { Client, ForbiddenError, Namespaces, NotFoundError, RoleBindings, Roles, ValidatingWebhookConfigurations, type KubeObject } from '@quorum/runtime';
import { EtcdClusters } from '../resources.ts';
import { MUTATING_WEBHOOK_NAME, NAME, VALIDATING_WEBHOOK, VALIDATING_WEBHOOK_NAME, WATCH_ROLE, accessObjects, operatorManifests, tenantNamespaces, type ManifestOptions } from './manifests.ts';

const FIELD_MANAGER = 'quorum-install';

export interface InstallOptions extends ManifestOptions {
  /** Wait until the operator's pods are ready (default true). */
  wait?: boolean;
  log?: (message: string) => void;
}

export async function install(client: Client, options: InstallOptions = {}): Promise<void> {
  const log = options.log ?? (() => undefined);
  const objects = operatorManifests(options);
  const tenants = tenantNamespaces(options);
  if (tenants) await checkTenants(client, tenants);
  // Webhook configurations go last, once the operator can answer them; each keeps the caBundle the operator patched in.
  const isWebhook = (o: { kind?: string }): boolean => o.kind?.endsWith('WebhookConfiguration') ?? false;
  await applyManifests(client, [...objects.filter((o) => !isWebhook(o)), ...objects.filter(isWebhook)], { fieldManager: FIELD_MANAGER, log });
  if (options.wait === false) return;
  const ns = options.namespace ?? 'quorum-system';
  await waitRolledOut(client, { namespace: ns, name: NAME });
  log('operator ready');
  if (options.webhooks !== false) {
    await waitCaBundlesPublished(client, ValidatingWebhookConfigurations, VALIDATING_WEBHOOK);
    // A namespace-scoped install's webhooks answer for its tenant namespaces only.
    await waitForWebhooks(client, tenants?.[0] ?? ns);
    log('webhooks answering');
  }
}

/**
 * Before a namespace-scoped install: each tenant namespace exists (its Role cannot be created otherwise), and
 * no EtcdCluster lives outside them, which this install would stop managing (an upgrade from a cluster-wide
 * install, the default before namespace-scoped installs). Both refuse with what to do instead.
 */
async function checkTenants(client: Client, tenants: readonly string[]): Promise<void> {
  const missing: string[] = [];
  for (const ns of tenants) if (!(await client.find(Namespaces, ns))) missing.push(ns);
  if (missing.length > 0) throw new Error(`the tenant namespaces ${missing.join(', ')} do not exist: create them first (kubectl create namespace NAME), or give others with --namespaces`);
  let clusters;
  try {
    clusters = await client.list(EtcdClusters);
  } catch (err) {
    // No CRD yet (a first install), or an installer who may not list every namespace: nothing to compare.
    if (err instanceof NotFoundError || err instanceof ForbiddenError) return;
    throw err;
  }
  const outside = clusters.items.filter((c) => !tenants.includes(c.metadata.namespace ?? '')).map((c) => `${c.metadata.namespace}/${c.metadata.name}`);
  if (outside.length > 0) {
    const namespaces = [...new Set([...tenants, ...outside.map((c) => c.slice(0, c.indexOf('/')))])];
    throw new Error(`EtcdClusters outside the tenant namespaces (${tenants.join(', ')}) would no longer be managed: ${outside.join(', ')}. Install with --namespaces ${namespaces.join(',')} (value namespaces), or --cluster-wide (value clusterWide)`);
  }
}

/**
 * Calls each of our webhooks has answered with HTTP 200, summed over operations, from the API server's own
 * counter; undefined when this client may not read /metrics (on a real cluster an installer may lack it).
 */
async function webhookAnswers(client: Client): Promise<Map<string, number> | undefined> {
  let text: string;
  try {
    text = await client.request<string>('GET', '/metrics');
  } catch (err) {
    if (err instanceof ForbiddenError || err instanceof NotFoundError) return undefined;
    throw err;
  }
  const answers = new Map<string, number>([[MUTATING_WEBHOOK_NAME, 0], [VALIDATING_WEBHOOK_NAME, 0]]);
  for (const [, labelText = '', value = ''] of text.matchAll(/^apiserver_admission_webhook_request_total\{([^}]*)\}\s+(\S+)/gm)) {
    const labels = new Map<string, string>();
    for (const [, key = '', v = ''] of labelText.matchAll(/(\w+)="([^"]*)"/g)) labels.set(key, v);
    const name = labels.get('name') ?? '';
    const seen = answers.get(name);
    if (labels.get('code') === '200' && seen !== undefined) answers.set(name, seen + Number(value));
  }
  return answers;
}

/**
 * Waits until the API server can call the webhooks. It reaches them through a Service that kube-proxy must
 * have programmed. A server-side dry-run create goes through both webhooks, but they are failurePolicy Ignore,
 * so its success alone proves nothing: the API server's count of answered calls for each webhook must grow
 * across it. (Without read access to /metrics, the dry-run's success is all there is to go on.)
 */
export async function waitForWebhooks(client: Client, namespace = 'quorum-system'): Promise<void> {
  await waitFor('the webhooks to answer the API server', async () => {
    const before = await webhookAnswers(client);
    await client.create(EtcdClusters, { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name: 'install-probe', namespace }, spec: { replicas: 1 } }, { dryRun: true });
    if (before === undefined) return true;
    const after = await webhookAnswers(client);
    return [...before].every(([name, n]) => (after?.get(name) ?? 0) > n);
  }, { timeoutMs: 60_000, intervalMs: 500 });
}

/**
 * Removes the operator (Deployment, RBAC, webhooks). The CRD and every EtcdCluster, pod and PVC stay. The RBAC
 * of either scope goes, whatever `options` say: the ClusterRoles, and the tenant namespaces' Roles wherever
 * they are (found by name and label), so an uninstall need not repeat the install's namespaces.
 */
export async function uninstall(client: Client, options: ManifestOptions = {}): Promise<void> {
  const ns = options.namespace ?? 'quorum-system';
  const objects = [...operatorManifests({ ...options, namespaces: undefined, clusterWide: true }), ...accessObjects(ns, [], true), ...(await tenantAccess(client))];
  await removeManifests(client, objects, { keep: ['CustomResourceDefinition', 'Namespace'] });
}

/** The Roles and RoleBindings of the tenant namespaces, in every namespace (none when this client may not list them). */
async function tenantAccess(client: Client): Promise<KubeObject[]> {
  const found: KubeObject[] = [];
  for (const type of [Roles, RoleBindings]) {
    try {
      const list = await client.list(type, { labelSelector: 'app.kubernetes.io/name=quorum,app.kubernetes.io/component=operator', fieldSelector: `metadata.name=${WATCH_ROLE}` });
      found.push(...list.items.map((o) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: type.kind, metadata: { name: o.metadata.name, namespace: o.metadata.namespace } })));
    } catch (err) {
      if (!(err instanceof ForbiddenError)) throw err;
    }
  }
  return found;
}
