// Applying the generated manifests to a cluster (server-side apply, CRD first), waiting until the operator
// serves; and removing the operator again without touching any etcd cluster or its data.
import { Client, CustomResourceDefinitions, ForbiddenError, NotFoundError, resource, type KubeObject, type ResourceType } from '@quorum/runtime';
import { EtcdClusters } from '../resources.ts';
import { MUTATING_WEBHOOK_NAME, NAME, VALIDATING_WEBHOOK_NAME, operatorManifests, type ManifestOptions } from './manifests.ts';

const FIELD_MANAGER = 'quorum-install';

/** Polls until `probe` returns true; errors count as "not yet". */
async function eventually(what: string, probe: () => Promise<boolean | undefined>, options: { timeoutMs: number; intervalMs?: number }): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      if (await probe()) return;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 250));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

function typeOf(obj: KubeObject): ResourceType {
  const kinds: Record<string, [string, boolean]> = {
    Namespace: ['namespaces', false],
    CustomResourceDefinition: ['customresourcedefinitions', false],
    ServiceAccount: ['serviceaccounts', true],
    ClusterRole: ['clusterroles', false],
    ClusterRoleBinding: ['clusterrolebindings', false],
    Role: ['roles', true],
    RoleBinding: ['rolebindings', true],
    Deployment: ['deployments', true],
    PodDisruptionBudget: ['poddisruptionbudgets', true],
    Service: ['services', true],
    MutatingWebhookConfiguration: ['mutatingwebhookconfigurations', false],
    ValidatingWebhookConfiguration: ['validatingwebhookconfigurations', false],
  };
  const found = kinds[obj.kind ?? ''];
  if (!found) throw new Error(`install: no resource mapping for ${obj.kind}`);
  return resource(obj.apiVersion!, obj.kind!, found[0], found[1]);
}

export interface InstallOptions extends ManifestOptions {
  /** Wait until the operator's pods are ready (default true). */
  wait?: boolean;
  log?: (message: string) => void;
}

export async function install(client: Client, options: InstallOptions = {}): Promise<void> {
  const log = options.log ?? (() => undefined);
  const objects = operatorManifests(options);
  for (const obj of objects) {
    // Webhook configurations go last, once the operator can answer them (apply order below).
    if (obj.kind?.endsWith('WebhookConfiguration')) continue;
    await client.apply(typeOf(obj), obj, { fieldManager: FIELD_MANAGER, force: true });
    log(`applied ${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`);
    if (obj.kind === 'CustomResourceDefinition') {
      await eventually('the CRD to be established', async () => {
        const crd = (await client.get(CustomResourceDefinitions, obj.metadata.name!)) as { status?: { conditions?: { type: string; status: string }[] } };
        return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
      }, { timeoutMs: 30_000 });
    }
  }
  for (const obj of objects.filter((o) => o.kind?.endsWith('WebhookConfiguration'))) {
    // Keep the caBundle the operator patched in (re-installs must not blank it).
    const existing = (await client.find(typeOf(obj), obj.metadata.name!)) as { webhooks?: { clientConfig?: { caBundle?: string } }[] } | undefined;
    const withCa = structuredClone(obj) as unknown as KubeObject & { webhooks: { clientConfig: Record<string, unknown> }[] };
    withCa.webhooks.forEach((w, i) => {
      const ca = existing?.webhooks?.[i]?.clientConfig?.caBundle;
      if (ca) w.clientConfig['caBundle'] = ca;
    });
    await client.apply(typeOf(obj), withCa, { fieldManager: FIELD_MANAGER, force: true });
    log(`applied ${obj.kind} ${obj.metadata.name}`);
  }
  if (options.wait === false) return;
  const ns = options.namespace ?? 'quorum-system';
  const Deployments = resource('apps/v1', 'Deployment', 'deployments', true);
  await eventually('the operator Deployment to be available', async () => {
    // As `kubectl rollout status` judges it: the new template everywhere, no old pod left, all available.
    const d = (await client.get(Deployments, { namespace: ns, name: NAME })) as unknown as {
      metadata: { generation: number };
      spec: { replicas: number };
      status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number; readyReplicas?: number };
    };
    const s = d.status ?? {};
    return (s.observedGeneration ?? 0) >= d.metadata.generation && s.updatedReplicas === d.spec.replicas && s.replicas === d.spec.replicas && s.availableReplicas === d.spec.replicas && s.readyReplicas === d.spec.replicas;
  }, { timeoutMs: 180_000, intervalMs: 500 });
  log('operator ready');
  if (options.webhooks !== false) {
    const Validating = resource('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', false);
    await eventually('the webhook CA to be published', async () => {
      const v = (await client.get(Validating, "quorum-etcd-validating")) as unknown as { webhooks: { clientConfig: { caBundle?: string } }[] };
      return !!v.webhooks[0]?.clientConfig.caBundle;
    }, { timeoutMs: 60_000 });
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
  await eventually('the webhooks to answer the API server', async () => {
    const before = await webhookAnswers(client);
    await client.create(EtcdClusters, { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name: 'install-probe', namespace }, spec: { replicas: 1 } }, { dryRun: true });
    if (before === undefined) return true;
    const after = await webhookAnswers(client);
    return [...before].every(([name, n]) => (after?.get(name) ?? 0) > n);
  }, { timeoutMs: 60_000, intervalMs: 500 });
}

/** Removes the operator (Deployment, RBAC, webhooks). The CRD and every EtcdCluster, pod and PVC stay. */
export async function uninstall(client: Client, options: ManifestOptions = {}): Promise<void> {
  const objects = operatorManifests(options).filter((o) => o.kind !== 'CustomResourceDefinition' && o.kind !== 'Namespace');
  for (const obj of objects.reverse()) {
    await client.delete(typeOf(obj), { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name! }).catch((err: { code?: number }) => {
      if (err.code !== 404) throw err;
    });
  }
}
