// Installing an operator from its own manifests, and removing it again: what `quorum install`, `quorum history
// install`, `quorum rbac install` and `quorum redis install` share. Objects are written with server-side apply in
// the order the manifests give them; a CustomResourceDefinition is awaited until it is Established before the
// next object (a later object or the operator's first watch would otherwise meet a 404); a webhook
// configuration is applied with the caBundle its operator published (the manifests carry none, and applying
// them as they are would blank it, so the API server could no longer call the webhook until the operator
// noticed); then the operator's Deployment is awaited until it has rolled out. Removal deletes webhook
// configurations first (a configuration whose server is going away would refuse or delay writes), then the
// rest in reverse, keeping the kinds the operator names (its CRDs and so every object of them; its namespace).
// Every wait is bounded and its error names what it awaited.
import {
  ClusterRoleBindings,
  ClusterRoles,
  ConfigMaps,
  CustomResourceDefinitions,
  Deployments,
  NetworkPolicies,
  MutatingWebhookConfigurations,
  Namespaces,
  NotFoundError,
  PersistentVolumeClaims,
  PodDisruptionBudgets,
  resource,
  RoleBindings,
  Roles,
  Secrets,
  ServiceAccounts,
  Services,
  ValidatingWebhookConfigurations,
  waitFor,
  waitForCRDEstablished,
  type ApplyOptions,
  type Client,
  type KubeObject,
  type ObjectKey,
  type ResourceType,
  type WaitOptions,
} from '@quorum/runtime';

/** The kinds operators' manifests hold, by kind: where each lives in the API. */
const MANIFEST_TYPES: ReadonlyMap<string, ResourceType> = new Map(
  [
    Namespaces,
    CustomResourceDefinitions,
    ServiceAccounts,
    ClusterRoles,
    ClusterRoleBindings,
    Roles,
    RoleBindings,
    ConfigMaps,
    Secrets,
    PersistentVolumeClaims,
    Deployments,
    Services,
    PodDisruptionBudgets,
    NetworkPolicies,
    MutatingWebhookConfigurations,
    ValidatingWebhookConfigurations,
  ].map((type): [string, ResourceType] => [type.kind, type]),
);

/** The resource a manifest object is written to, at the object's own apiVersion; throws for a kind no operator ships. */
export function manifestType(obj: KubeObject): ResourceType {
  const known = MANIFEST_TYPES.get(obj.kind ?? '');
  if (!known || !obj.apiVersion) throw new Error(`install: no resource for ${obj.kind ?? 'an object without a kind'} ${obj.metadata.name ?? ''}`);
  return resource(obj.apiVersion, known.kind, known.plural, known.namespaced);
}

/** `Kind namespace/name`, or `Kind name` when cluster-scoped: how progress lines name an object. */
export function describeObject(obj: KubeObject): string {
  return `${obj.kind ?? '?'} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name ?? ''}`;
}

function isWebhookConfiguration(obj: KubeObject): boolean {
  return obj.kind === MutatingWebhookConfigurations.kind || obj.kind === ValidatingWebhookConfigurations.kind;
}

export type InstallLog = (line: string) => void;

export interface ApplyManifestsOptions extends Pick<ApplyOptions, 'fieldManager' | 'fieldValidation' | 'signal'> {
  /** Bound of each CRD's wait for Established (default 30 s). */
  establishTimeoutMs?: number;
  /** One line per object applied: `applied Kind namespace/name`. */
  log?: InstallLog;
}

type WebhookConfiguration = KubeObject & { webhooks?: { name?: string; clientConfig?: Record<string, unknown> }[] };

/**
 * The webhook configuration with the caBundle its operator published into the one in the cluster, webhook by
 * webhook (matched by name), so that applying the manifests again does not blank it.
 */
export async function withPublishedCaBundles(client: Pick<Client, 'find'>, config: KubeObject): Promise<KubeObject> {
  const type: ResourceType<WebhookConfiguration> = manifestType(config);
  const existing = await client.find(type, config.metadata.name ?? '');
  const copy = structuredClone<WebhookConfiguration>(config);
  for (const webhook of copy.webhooks ?? []) {
    const ca = existing?.webhooks?.find((w) => w.name === webhook.name)?.clientConfig?.['caBundle'];
    if (ca && webhook.clientConfig) webhook.clientConfig['caBundle'] = ca;
  }
  return copy;
}

/**
 * Applies `objects` in order (server-side apply, forced: the installer owns what its manifests set), each
 * CustomResourceDefinition awaited until Established, each webhook configuration with its published caBundle.
 */
export async function applyManifests(client: Pick<Client, 'apply' | 'find' | 'get'>, objects: readonly KubeObject[], options: ApplyManifestsOptions): Promise<void> {
  const { establishTimeoutMs, log, ...write } = options;
  for (const manifest of objects) {
    const obj = isWebhookConfiguration(manifest) ? await withPublishedCaBundles(client, manifest) : manifest;
    await client.apply(manifestType(obj), obj, { ...write, force: true });
    log?.(`applied ${describeObject(obj)}`);
    if (obj.kind === CustomResourceDefinitions.kind) {
      await waitForCRDEstablished(client, obj.metadata.name ?? '', { timeoutMs: establishTimeoutMs ?? 30_000, signal: options.signal });
    }
  }
}

/** What a rollout is judged by: a Deployment as read (the client-node model is one). */
export interface RolloutView {
  metadata?: { generation?: number };
  spec?: { replicas?: number };
  status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number; readyReplicas?: number };
}

/** Rolled out as `kubectl rollout status` judges it: the new template everywhere, no old pod left, all available and ready. */
export function rolledOut(deployment: RolloutView): boolean {
  const s = deployment.status ?? {};
  const want = deployment.spec?.replicas ?? 1;
  const observed = (s.observedGeneration ?? 0) >= (deployment.metadata?.generation ?? 0);
  return observed && s.updatedReplicas === want && s.replicas === want && s.availableReplicas === want && s.readyReplicas === want;
}

/** Waits until the Deployment at `key` has rolled out (default bound 180 s, looked at every 500 ms). */
export async function waitRolledOut(client: Pick<Client, 'get'>, key: ObjectKey, options: WaitOptions = {}): Promise<void> {
  await waitFor(
    `the Deployment ${key.namespace}/${key.name} to roll out`,
    async () => rolledOut(await client.get(Deployments, key, { signal: options.signal })),
    { ...options, timeoutMs: options.timeoutMs ?? 180_000, intervalMs: options.intervalMs ?? 500 },
  );
}

/**
 * Waits until every webhook of the configuration `name` carries a caBundle: the operator publishes its CA
 * there once it serves, and until then the API server cannot call it (default bound 60 s).
 */
export async function waitCaBundlesPublished(client: Pick<Client, 'get'>, type: ResourceType, name: string, options: WaitOptions = {}): Promise<void> {
  await waitFor(
    `the webhook CA to be published in ${type.kind} ${name}`,
    async () => {
      const config = (await client.get(type, name, { signal: options.signal })) as WebhookConfiguration;
      return (config.webhooks ?? []).length > 0 && (config.webhooks ?? []).every((w) => w.clientConfig?.['caBundle']);
    },
    { ...options, timeoutMs: options.timeoutMs ?? 60_000, intervalMs: options.intervalMs ?? 500 },
  );
}

/** Deletes `obj`; false when it was already gone. */
export async function deleteIfPresent(client: Pick<Client, 'delete'>, obj: KubeObject): Promise<boolean> {
  try {
    await client.delete(manifestType(obj), { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' });
    return true;
  } catch (err) {
    if (err instanceof NotFoundError) return false;
    throw err;
  }
}

export interface RemoveManifestsOptions {
  /** Kinds left in place (an operator keeps its CustomResourceDefinitions, and so every object of them). */
  keep?: readonly string[];
  /** One line per object deleted: `removed Kind namespace/name`. */
  log?: InstallLog;
}

/**
 * Removes what `objects` installed: webhook configurations first, then the rest in reverse order (the
 * Deployment before the RBAC it runs with), except the kinds to keep. Objects already gone are no error.
 * Resolves to the objects it deleted.
 */
export async function removeManifests(client: Pick<Client, 'delete'>, objects: readonly KubeObject[], options: RemoveManifestsOptions = {}): Promise<KubeObject[]> {
  const keep = new Set(options.keep ?? []);
  const removable = objects.filter((o) => !keep.has(o.kind ?? ''));
  const ordered = [...removable.filter(isWebhookConfiguration), ...removable.filter((o) => !isWebhookConfiguration(o)).reverse()];
  const removed: KubeObject[] = [];
  for (const obj of ordered) {
    if (!(await deleteIfPresent(client, obj))) continue;
    removed.push(obj);
    options.log?.(`removed ${describeObject(obj)}`);
  }
  return removed;
}
