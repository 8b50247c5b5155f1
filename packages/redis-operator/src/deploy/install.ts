// Applying the operator's manifests to a cluster (server-side apply, CRD first, waiting until it is established
// and until the operator's Deployment has rolled out), and removing the operator again without touching any Redis,
// its pods or its data.
import { Client, CustomResourceDefinitions, resource, type KubeObject, type ResourceType } from '@quorum/runtime';
import { eventually } from '@quorum/runtime/testing';
import { NAME, operatorManifests, type ManifestOptions } from './manifests.ts';

const FIELD_MANAGER = 'quorum-redis-install';

const RESOURCES: Record<string, [string, boolean]> = {
  Namespace: ['namespaces', false],
  CustomResourceDefinition: ['customresourcedefinitions', false],
  ServiceAccount: ['serviceaccounts', true],
  ClusterRole: ['clusterroles', false],
  ClusterRoleBinding: ['clusterrolebindings', false],
  Role: ['roles', true],
  RoleBinding: ['rolebindings', true],
  Deployment: ['deployments', true],
};

function typeOf(obj: KubeObject): ResourceType {
  const found = RESOURCES[obj.kind ?? ''];
  if (!found) throw new Error(`install: no resource mapping for ${obj.kind}`);
  return resource(obj.apiVersion!, obj.kind!, found[0], found[1]);
}

export interface InstallOptions extends ManifestOptions {
  /** Wait until the operator's pod is ready (default true). */
  wait?: boolean;
  log?: (line: string) => void;
}

export async function install(client: Client, options: InstallOptions = {}): Promise<void> {
  const log = options.log ?? (() => undefined);
  for (const obj of operatorManifests(options)) {
    await client.apply(typeOf(obj), obj, { fieldManager: FIELD_MANAGER, force: true });
    log(`applied ${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`);
    if (obj.kind === 'CustomResourceDefinition') {
      await eventually('the Redis CRD to be established', async () => {
        const crd = (await client.get(CustomResourceDefinitions, obj.metadata.name!)) as { status?: { conditions?: { type: string; status: string }[] } };
        return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
      }, { timeoutMs: 30_000 });
    }
  }
  if (options.wait === false) return;
  const Deployments = resource('apps/v1', 'Deployment', 'deployments', true);
  await eventually('the operator Deployment to roll out', async () => {
    const d = (await client.get(Deployments, { namespace: options.namespace ?? 'quorum-system', name: NAME })) as unknown as { metadata: { generation: number }; status?: { observedGeneration?: number; updatedReplicas?: number; availableReplicas?: number; replicas?: number } };
    const s = d.status ?? {};
    return (s.observedGeneration ?? 0) >= d.metadata.generation && s.updatedReplicas === 1 && s.availableReplicas === 1 && s.replicas === 1;
  }, { timeoutMs: 180_000, intervalMs: 500 });
  log('operator ready');
}

/** Removes the operator (Deployment, RBAC). The CRD and every Redis, its pods, claims and Secrets stay. */
export async function uninstall(client: Client, options: ManifestOptions = {}): Promise<void> {
  const objects = operatorManifests(options).filter((o) => o.kind !== 'CustomResourceDefinition' && o.kind !== 'Namespace');
  for (const obj of objects.reverse()) {
    await client.delete(typeOf(obj), { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name! }).catch((err: { code?: number }) => {
      if (err.code !== 404) throw err;
    });
  }
}
