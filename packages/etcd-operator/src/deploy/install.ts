// Applying the generated manifests to a cluster (server-side apply, CRD first), waiting until the operator
// serves; and removing the operator again without touching any etcd cluster or its data. The machinery is the
// kit's installer; what is the etcd operator's own: the webhook configurations go last (once the operator can
// answer them), and an install waits until the API server's calls to the webhooks are answered.
import { applyManifests, removeManifests, waitCaBundlesPublished, waitFor, waitRolledOut } from '@quorum/kit';
import { Client, ForbiddenError, NotFoundError, ValidatingWebhookConfigurations } from '@quorum/runtime';
import { EtcdClusters } from '../resources.ts';
import { MUTATING_WEBHOOK_NAME, NAME, VALIDATING_WEBHOOK, VALIDATING_WEBHOOK_NAME, operatorManifests, type ManifestOptions } from './manifests.ts';

const FIELD_MANAGER = 'quorum-install';

export interface InstallOptions extends ManifestOptions {
  /** Wait until the operator's pods are ready (default true). */
  wait?: boolean;
  log?: (message: string) => void;
}

export async function install(client: Client, options: InstallOptions = {}): Promise<void> {
  const log = options.log ?? (() => undefined);
  const objects = operatorManifests(options);
  // Webhook configurations go last, once the operator can answer them; each keeps the caBundle the operator patched in.
  const isWebhook = (o: { kind?: string }): boolean => o.kind?.endsWith('WebhookConfiguration') ?? false;
  await applyManifests(client, [...objects.filter((o) => !isWebhook(o)), ...objects.filter(isWebhook)], { fieldManager: FIELD_MANAGER, log });
  if (options.wait === false) return;
  const ns = options.namespace ?? 'quorum-system';
  await waitRolledOut(client, { namespace: ns, name: NAME });
  log('operator ready');
  if (options.webhooks !== false) {
    await waitCaBundlesPublished(client, ValidatingWebhookConfigurations, VALIDATING_WEBHOOK);
    // A namespace-scoped install's webhooks answer for the watched namespace only.
    await waitForWebhooks(client, options.watchNamespace || ns);
    log('webhooks answering');
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

/** Removes the operator (Deployment, RBAC, webhooks). The CRD and every EtcdCluster, pod and PVC stay. */
export async function uninstall(client: Client, options: ManifestOptions = {}): Promise<void> {
  await removeManifests(client, operatorManifests(options), { keep: ['CustomResourceDefinition', 'Namespace'] });
}
