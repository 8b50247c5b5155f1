// `quorum rbac install|uninstall`: the manager from its own manifests (manifests.ts), written with server-side
// apply (field manager quorum-rbac-install) and strict field validation, then waits for it to roll out and for
// its webhook CA to be published (until then the fail-closed webhook refuses every definition write).
// Uninstalling removes the webhook configuration first, then the manager; the CRD and every definition stay,
// and so do the bindings they made: removing the CRD would delete the definitions and, through their owner
// references, every binding (everyone's access at once), which an uninstall must never do.
import {
  ClusterRoleBindings,
  ClusterRoles,
  CustomResourceDefinitions,
  Deployments,
  Namespaces,
  NotFoundError,
  RoleBindings,
  Roles,
  ServiceAccounts,
  Services,
  sleep,
  ValidatingWebhookConfigurations,
  type Client,
  type OpenObject,
  type ResourceType,
} from '@quorum/runtime';
import { ESCALATION_WEBHOOK_CONFIGURATION } from '../admission/serving.ts';
import { DEFAULT_NAMESPACE, NAME, rbacManagerManifests, type RbacManagerManifestOptions } from './manifests.ts';

export const INSTALL_FIELD_MANAGER = 'quorum-rbac-install';

const TYPES: Readonly<Record<string, ResourceType<OpenObject>>> = {
  Namespace: Namespaces,
  CustomResourceDefinition: CustomResourceDefinitions,
  ServiceAccount: ServiceAccounts,
  ClusterRole: ClusterRoles,
  ClusterRoleBinding: ClusterRoleBindings,
  Role: Roles,
  RoleBinding: RoleBindings,
  Deployment: Deployments,
  Service: Services,
  ValidatingWebhookConfiguration: ValidatingWebhookConfigurations,
};

function typeOf(obj: OpenObject): ResourceType<OpenObject> {
  const type = TYPES[obj.kind ?? ''];
  if (!type) throw new Error(`install: no resource for ${obj.kind}`);
  return type;
}

export interface RbacInstallOptions extends RbacManagerManifestOptions {
  /** Wait for the rollout and the webhook's CA (default true). */
  wait?: boolean;
  timeoutMs?: number;
  log?: (line: string) => void;
}

async function poll(what: string, timeoutMs: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`);
    await sleep(500);
  }
}

export async function installRbacManager(client: Client, options: RbacInstallOptions = {}): Promise<void> {
  const log = options.log ?? (() => undefined);
  const write = { fieldManager: INSTALL_FIELD_MANAGER, force: true, fieldValidation: 'Strict' } as const;
  for (const manifest of rbacManagerManifests(options)) {
    const obj = manifest.kind === 'ValidatingWebhookConfiguration' ? await withPublishedCa(client, manifest) : manifest;
    await client.apply(typeOf(obj), obj, write);
    log(`applied ${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`);
    if (obj.kind === 'CustomResourceDefinition') {
      await poll('the RBACDefinition CRD to be established', 30_000, async () => {
        const crd = (await client.get(CustomResourceDefinitions, obj.metadata.name ?? '')) as { status?: { conditions?: { type: string; status: string }[] } };
        return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
      });
    }
  }
  if (options.wait === false) return;
  const ns = options.namespace ?? DEFAULT_NAMESPACE;
  const timeoutMs = options.timeoutMs ?? 180_000;
  await poll(`the Deployment ${ns}/${NAME} to roll out`, timeoutMs, async () => {
    const d = (await client.get(Deployments, { namespace: ns, name: NAME })) as OpenObject & { spec?: { replicas?: number }; status?: { readyReplicas?: number; updatedReplicas?: number; observedGeneration?: number } };
    const want = d.spec?.replicas ?? 1;
    return (d.status?.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) && d.status?.updatedReplicas === want && d.status.readyReplicas === want;
  });
  await poll(`the webhook CA in ValidatingWebhookConfiguration ${ESCALATION_WEBHOOK_CONFIGURATION}`, 60_000, async () => {
    const config = (await client.get(ValidatingWebhookConfigurations, ESCALATION_WEBHOOK_CONFIGURATION)) as { webhooks?: { clientConfig?: { caBundle?: string } }[] };
    return config.webhooks?.every((w) => w.clientConfig?.caBundle) ?? false;
  });
  log('rbac manager ready');
}

/** The configuration with the caBundle the manager published, so that applying it again does not blank it. */
async function withPublishedCa(client: Client, config: OpenObject): Promise<OpenObject> {
  const existing = (await client.find(ValidatingWebhookConfigurations, config.metadata.name ?? '')) as { webhooks?: { name?: string; clientConfig?: { caBundle?: string } }[] } | undefined;
  const copy = structuredClone(config) as OpenObject & { webhooks?: { name: string; clientConfig: Record<string, unknown> }[] };
  for (const webhook of copy.webhooks ?? []) {
    const ca = existing?.webhooks?.find((w) => w.name === webhook.name)?.clientConfig?.caBundle;
    if (ca) webhook.clientConfig['caBundle'] = ca;
  }
  return copy;
}

/** Removes the webhook configuration (first: it is fail-closed), then the manager; keeps the CRD, the definitions and their bindings. */
export async function uninstallRbacManager(client: Client, options: Pick<RbacManagerManifestOptions, 'namespace'> = {}): Promise<void> {
  const keep = new Set(['Namespace', 'CustomResourceDefinition']);
  const objects = rbacManagerManifests(options).filter((o) => !keep.has(o.kind ?? ''));
  const webhookFirst = [...objects.filter((o) => o.kind === 'ValidatingWebhookConfiguration'), ...objects.filter((o) => o.kind !== 'ValidatingWebhookConfiguration').reverse()];
  for (const obj of webhookFirst) {
    try {
      await client.delete(typeOf(obj), { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' });
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }
}
