// `quorum rbac import`: FairwindsOps rbac-manager's definitions (rbacmanager.reactiveops.io/v1beta1) become
// RBACDefinitions of the same name and bindings, and the manager adopts the objects FairwindsOps made, in
// place: an adopted binding is patched (its owner reference becomes the new definition's), never deleted and
// made again, so nobody loses access for a moment. Only once a new definition reports that everything of its
// is in place is the old one deleted, and with propagationPolicy Orphan, so its garbage collection cannot take
// anything with it.
//
// Stop FairwindsOps' controller first (scale its Deployment to 0): two controllers owning the same bindings
// would undo each other's work.
import { NotFoundError, resource, sleep, type Client, type KubeObject } from '@quorum/runtime';
import { API_VERSION, KIND, type RBACBinding, type RBACDefinition } from '../api/rbacdefinition.ts';
import { validateDefinition } from '../api/validate.ts';
import { RBACDefinitions } from '../resources.ts';

export const FAIRWINDS_API_VERSION = 'rbacmanager.reactiveops.io/v1beta1';
export const FairwindsDefinitions = resource<KubeObject & { rbacBindings?: RBACBinding[] }>(FAIRWINDS_API_VERSION, 'RBACDefinition', 'rbacdefinitions', false);

export const IMPORT_FIELD_MANAGER = 'quorum-rbac-import';

/** Their definition as ours: the same name and bindings (their fields are a subset of ours), no status. */
export function convertDefinition(old: KubeObject & { rbacBindings?: unknown }): RBACDefinition {
  const bindings = Array.isArray(old.rbacBindings) ? (old.rbacBindings as RBACBinding[]) : [];
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: old.metadata.name ?? '', ...(old.metadata.labels ? { labels: old.metadata.labels } : {}), annotations: { 'rbac.quorum.dev/imported-from': FAIRWINDS_API_VERSION } },
    rbacBindings: bindings.map((b) => stripUnknown(b)),
  };
}

/** Only the fields of the shared shape: anything else their API may carry would be refused by strict validation. */
function stripUnknown(b: RBACBinding): RBACBinding {
  const subjects = b.subjects.map((s) => ({
    kind: s.kind,
    name: s.name,
    ...(s.namespace ? { namespace: s.namespace } : {}),
    ...(s.apiGroup ? { apiGroup: s.apiGroup } : {}),
    ...(s.kind === 'ServiceAccount' && s.imagePullSecrets?.length ? { imagePullSecrets: s.imagePullSecrets } : {}),
    ...(s.kind === 'ServiceAccount' && typeof s.automountServiceAccountToken === 'boolean' ? { automountServiceAccountToken: s.automountServiceAccountToken } : {}),
  }));
  const roleBindings = (b.roleBindings ?? []).map((rb) => {
    const selector = rb.namespaceSelector;
    const hasSelector = selector !== undefined && (Object.keys(selector.matchLabels ?? {}).length > 0 || (selector.matchExpressions ?? []).length > 0);
    return {
      ...(rb.clusterRole ? { clusterRole: rb.clusterRole } : { role: rb.role ?? '' }),
      // FairwindsOps ignores an empty selector when a namespace is set; ours takes exactly one of them.
      ...(rb.namespace ? { namespace: rb.namespace } : hasSelector ? { namespaceSelector: selector } : {}),
    };
  });
  return {
    name: b.name,
    subjects,
    ...(b.clusterRoleBindings?.length ? { clusterRoleBindings: b.clusterRoleBindings.map((c) => ({ clusterRole: c.clusterRole })) } : {}),
    ...(roleBindings.length ? { roleBindings } : {}),
  };
}

export interface ImportResult {
  name: string;
  outcome: 'imported' | 'exists' | 'invalid' | 'not ready';
  detail?: string;
}

export interface ImportOptions {
  /** Only print what would be created. */
  dryRun?: boolean;
  /** How long to wait for each new definition's Ready condition before keeping the old one. */
  readyTimeoutMs?: number;
  log?: (line: string) => void;
}

export async function importFairwindsDefinitions(client: Client, options: ImportOptions = {}): Promise<ImportResult[]> {
  const log = options.log ?? (() => undefined);
  const old = (await client.list(FairwindsDefinitions)).items;
  const results: ImportResult[] = [];
  for (const definition of old) {
    const converted = convertDefinition(definition);
    const name = converted.metadata.name ?? '';
    const invalid = validateDefinition(converted);
    if (invalid.length > 0) {
      results.push({ name, outcome: 'invalid', detail: invalid.join('; ') });
      continue;
    }
    if (options.dryRun) {
      results.push({ name, outcome: 'imported', detail: 'dry run: nothing written' });
      continue;
    }
    if (await client.find(RBACDefinitions, name)) {
      results.push({ name, outcome: 'exists', detail: `an ${KIND} ${name} of ${API_VERSION} exists already; the old definition is kept` });
      continue;
    }
    await client.create(RBACDefinitions, converted, { fieldManager: IMPORT_FIELD_MANAGER });
    log(`created ${KIND} ${name}; waiting until its bindings are in place`);
    const ready = await waitReady(client, name, options.readyTimeoutMs ?? 60_000);
    if (ready !== true) {
      results.push({ name, outcome: 'not ready', detail: `${ready}; the old definition is kept (delete it once the new one is Ready)` });
      continue;
    }
    await client.delete(FairwindsDefinitions, name, { propagationPolicy: 'Orphan' }).catch((err: unknown) => {
      if (!(err instanceof NotFoundError)) throw err;
    });
    log(`deleted ${FAIRWINDS_API_VERSION} ${name} (orphaning: its objects are the new definition's now)`);
    results.push({ name, outcome: 'imported' });
  }
  return results;
}

/** True once Ready is True for the current generation; else, at the deadline, what the status says. */
async function waitReady(client: Client, name: string, timeoutMs: number): Promise<true | string> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no status yet (is the RBAC manager running?)';
  while (Date.now() < deadline) {
    const got = await client.get(RBACDefinitions, name);
    const ready = got.status?.conditions?.find((c) => c.type === 'Ready');
    if (ready && ready.observedGeneration === got.metadata.generation) {
      if (ready.status === 'True') return true;
      last = `Ready ${ready.status} (${ready.reason}): ${ready.message}`;
      // Waiting for a namespace or role that does not exist is as far as FairwindsOps got too.
      if (ready.reason === 'Waiting') return true;
    }
    await sleep(250);
  }
  return last;
}
