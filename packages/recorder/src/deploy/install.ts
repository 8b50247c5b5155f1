// `quorum history install`: installs or updates the recorder from its own manifests (manifests.ts), with the
// ClusterRole derived from the ChangeRecorders it is to serve (rbac.ts): those given, and unless told
// otherwise those already in the cluster, so that an update never takes a kind away from a running recorder.
// Everything is written with server-side apply (field manager quorum-history-install) and strict field
// validation; then the given ChangeRecorders, and it waits for the Deployment to roll out and reports each
// given ChangeRecorder's Ready condition. uninstallRecorder() removes the recorder and keeps every record.
// The users webhook is installed when a ChangeRecorder asks for users (spec.attribution.users) or when told
// to, and removed by an install that has none: a configuration left behind would call a recorder that no
// longer answers it. With it goes the recorder's NetworkPolicy, whose callers of the webhook's port are the API
// server's CIDRs when given, else every address but the pods': the Nodes' spec.podCIDRs, read here.
import type { V1Deployment } from '@kubernetes/client-node';
import { applyManifests, removeManifests, rolledOut as kitRolledOut, waitCaBundlesPublished, waitFor, waitRolledOut } from '@quorum/kit';
import { ForbiddenError, Nodes, NotFoundError, ValidatingWebhookConfigurations, type Client, type OpenObject } from '@quorum/runtime';
import { API_VERSION, KIND, type ChangeRecorder } from '../api/changerecorder.ts';
import { applyDefaults, validateSpec } from '../api/defaults.ts';
import { ChangeRecorders } from '../resources.ts';
import { USERS_WEBHOOK_CONFIGURATION, WEBHOOK_PORT } from '../attribution/webhook.ts';
import { NAME, recorderManifests, storageSecretsOf, usersWebhookObjects, usersWebhookPolicy, webhookClientCAConfigMap, type RecorderManifestOptions } from './manifests.ts';
import { derivationProblem, deriveRecordedKinds, manifestKinds, type DerivedKinds } from './rbac.ts';

export const INSTALL_FIELD_MANAGER = 'quorum-history-install';

export interface RecorderInstallOptions extends Omit<RecorderManifestOptions, 'kinds' | 'plurals' | 'usersWebhook'> {
  /** Install the users webhook even if no ChangeRecorder asks for users (default: when one does). */
  usersWebhook?: boolean;
  /** ChangeRecorders to create or update, and derive the role from. */
  recorders?: readonly ChangeRecorder[];
  /** Derive from the ChangeRecorders already in the cluster too (default true). */
  includeExisting?: boolean;
  /** Wait for the Deployment to roll out and the given ChangeRecorders to be Ready (default true). */
  wait?: boolean;
  /** How long to wait for each given ChangeRecorder to turn Ready before reporting it as it is (default 60 s). */
  readyTimeoutMs?: number;
  log?: (message: string) => void;
}

export interface RecorderInstallPlan {
  /** The objects that run the recorder, its ClusterRole derived. */
  manifests: OpenObject[];
  /** The ChangeRecorders to apply after them (validated, with apiVersion and kind). */
  recorders: ChangeRecorder[];
  /** Every ChangeRecorder the role was derived from, by name. */
  derivedFrom: string[];
  derived: DerivedKinds;
  /** Whether the users webhook is among the manifests; when not, an install removes one left by an earlier install. */
  usersWebhook: boolean;
  /** The ChangeRecorders (of derivedFrom) that ask for users. */
  usersFor: string[];
  /** With the users webhook, who its NetworkPolicy admits to its port, in words (the install logs it). */
  webhookCallers?: string;
  /** What the operator should know before trusting that policy: set when it admits every address (no pod CIDR found). */
  warnings: string[];
}

export interface RecorderInstallResult extends RecorderInstallPlan {
  /** The given ChangeRecorders' Ready condition once ready, or as it was when the wait ended. */
  ready: { name: string; status: string; reason: string; message: string }[];
}

/** Refuses a ChangeRecorder the recorder would refuse, with its name and every broken rule. */
function checked(recorder: ChangeRecorder): ChangeRecorder {
  const name = recorder.metadata?.name;
  if (!name) throw new Error('a ChangeRecorder without metadata.name');
  if ((recorder.apiVersion ?? API_VERSION) !== API_VERSION || (recorder.kind ?? KIND) !== KIND) {
    throw new Error(`${recorder.kind ?? '?'} ${name}: expected ${KIND} of ${API_VERSION}, not ${recorder.kind} of ${recorder.apiVersion}`);
  }
  const errors = validateSpec(applyDefaults(recorder.spec ?? {}));
  if (errors.length > 0) throw new Error(`ChangeRecorder ${name}: ${errors.join('; ')}`);
  return { apiVersion: API_VERSION, kind: KIND, metadata: { name, ...(recorder.metadata.labels ? { labels: recorder.metadata.labels } : {}), ...(recorder.metadata.annotations ? { annotations: recorder.metadata.annotations } : {}) }, spec: recorder.spec };
}

/** ChangeRecorders in the cluster; none when their CRD is not installed yet. */
async function existingRecorders(client: Client): Promise<ChangeRecorder[]> {
  try {
    return (await client.list(ChangeRecorders)).items;
  } catch (err) {
    if (err instanceof NotFoundError) return [];
    throw err;
  }
}

/** What an install would apply, its role derived through discovery; throws when a kind cannot be granted. */
export async function planRecorderInstall(client: Client, options: RecorderInstallOptions = {}): Promise<RecorderInstallPlan> {
  const recorders = (options.recorders ?? []).map(checked);
  const byName = new Map<string, ChangeRecorder>();
  if (options.includeExisting !== false) for (const r of await existingRecorders(client)) byName.set(r.metadata.name!, r);
  for (const r of recorders) byName.set(r.metadata.name!, r);
  const all = [...byName.values()];
  const derived = await deriveRecordedKinds(client, all.map((r) => r.spec));
  const problem = derivationProblem(derived);
  if (problem) throw new Error(problem);
  const { recorders: _r, includeExisting: _i, wait: _w, readyTimeoutMs: _t, log: _l, usersWebhook: _u, ...manifestOptions } = options;
  const storageSecrets = [...new Set([...(options.storageSecrets ?? []), ...storageSecretsOf(all)])].sort();
  const usersFor = all.filter((r) => applyDefaults(r.spec).attribution.users).map((r) => r.metadata.name!).sort();
  const usersWebhook = options.usersWebhook === true || usersFor.length > 0;
  const callers = usersWebhook ? await webhookCallers(client, options) : { podCIDRs: [], warnings: [] };
  const manifests = recorderManifests({ ...manifestOptions, ...manifestKinds(derived), storageSecrets, usersWebhook, podCIDRs: callers.podCIDRs }) as OpenObject[];
  return { manifests, recorders, derivedFrom: [...byName.keys()].sort(), derived, usersWebhook, usersFor, warnings: callers.warnings, ...(callers.said ? { webhookCallers: callers.said } : {}) };
}

/** The Nodes' spec.podCIDRs (spec.podCIDR on a node without the list), each once; none when the user may not list Nodes. */
async function nodePodCIDRs(client: Client): Promise<{ cidrs: string[]; forbidden?: string }> {
  try {
    const nodes = (await client.list(Nodes)).items;
    const cidrs = nodes.flatMap((n) => n.spec?.podCIDRs ?? (n.spec?.podCIDR ? [n.spec.podCIDR] : []));
    return { cidrs: [...new Set(cidrs.filter((c): c is string => typeof c === 'string' && c.length > 0))].sort() };
  } catch (err) {
    if (err instanceof ForbiddenError) return { cidrs: [], forbidden: err.message };
    throw err;
  }
}

/**
 * Who the users webhook's NetworkPolicy admits: the API server's CIDRs when given; else every address but the
 * pods' (podCIDRs, or the Nodes'). A cluster whose Nodes carry no pod CIDR (CNIs with their own IPAM: Calico,
 * Cilium's cluster pool) leaves the port open to every address, which the install says.
 */
async function webhookCallers(client: Client, options: RecorderInstallOptions): Promise<{ podCIDRs: string[]; said?: string; warnings: string[] }> {
  if (options.apiServerCIDRs?.length) return { podCIDRs: [], said: `only ${options.apiServerCIDRs.join(', ')} (--api-server-cidr)`, warnings: [] };
  if (options.podCIDRs?.length) return { podCIDRs: [...options.podCIDRs], said: `every address but the pod CIDRs ${options.podCIDRs.join(', ')} (--pod-cidr)`, warnings: [] };
  const found = await nodePodCIDRs(client);
  if (found.cidrs.length) {
    return { podCIDRs: found.cidrs, said: `every address but the Nodes' pod CIDRs ${found.cidrs.join(', ')} (where pods share the nodes' subnets, e.g. EKS's VPC CNI, give --api-server-cidr)`, warnings: [] };
  }
  const why = found.forbidden ? `the Nodes could not be listed (${found.forbidden})` : 'no Node has spec.podCIDRs (its CNI allocates pod addresses itself)';
  return { podCIDRs: [], warnings: [`the users webhook's NetworkPolicy admits every address to port ${WEBHOOK_PORT}, pods included: ${why}. Give the API server's addresses (--api-server-cidr) or the cluster's pod CIDRs (--pod-cidr)`] };
}

/** Rolled out as `kubectl rollout status` judges it: the kit's judgement, for a Deployment as the recorder reads it. */
export const rolledOut: (deployment: V1Deployment) => boolean = kitRolledOut;

export async function installRecorder(client: Client, options: RecorderInstallOptions = {}): Promise<RecorderInstallResult> {
  const log = options.log ?? (() => undefined);
  const plan = await planRecorderInstall(client, options);
  log(`role derived from ${plan.derivedFrom.length ? `ChangeRecorder(s) ${plan.derivedFrom.join(', ')}` : 'the default kinds (no ChangeRecorder given or found)'}: get, list, watch on ${plan.derived.granted.map((k) => `${k.resource}${k.group ? `.${k.group}` : ''}`).join(', ')}`);
  for (const warning of plan.warnings) log(`warning: ${warning}`);
  const write = { fieldManager: INSTALL_FIELD_MANAGER, force: true, fieldValidation: 'Strict' } as const;
  await applyManifests(client, plan.manifests, { ...write, log });
  const ns = options.namespace ?? 'quorum-system';
  if (plan.usersWebhook) {
    log(`users webhook installed${plan.usersFor.length ? ` for ChangeRecorder(s) ${plan.usersFor.join(', ')}` : ''}: UPDATE and DELETE of the same kinds, failurePolicy Ignore`);
    if (plan.webhookCallers) log(`its port admits (NetworkPolicy ${NAME}, where a policy agent enforces it) ${plan.webhookCallers}`);
  } else {
    await removeManifests(client, [...usersWebhookObjects(ns), usersWebhookPolicy(ns)], { log: (line) => log(`${line} (no ChangeRecorder asks for users)`) });
  }
  for (const r of plan.recorders) {
    await client.apply(ChangeRecorders, r, write);
    log(`applied ChangeRecorder ${r.metadata.name}`);
  }
  const result: RecorderInstallResult = { ...plan, ready: [] };
  if (options.wait === false) return result;
  await waitRolledOut(client, { namespace: ns, name: NAME });
  log('recorder ready');
  if (plan.usersWebhook) {
    // Until the recorder has published its CA the API server cannot call the webhook, and changes go unattributed.
    await waitCaBundlesPublished(client, ValidatingWebhookConfigurations, USERS_WEBHOOK_CONFIGURATION);
    log('users webhook CA published');
  }
  for (const r of plan.recorders) result.ready.push(await readyCondition(client, r.metadata.name!, options.readyTimeoutMs ?? 60_000));
  return result;
}

/** The ChangeRecorder's Ready condition once True, or as it is when `timeoutMs` has passed. */
async function readyCondition(client: Client, name: string, timeoutMs: number): Promise<RecorderInstallResult['ready'][number]> {
  const readyOf = async (): Promise<RecorderInstallResult['ready'][number]> => {
    const got = await client.get(ChangeRecorders, name);
    const c = got.status?.conditions?.find((x) => x.type === 'Ready');
    const current = got.status?.observedGeneration === got.metadata.generation;
    return { name, status: current && c ? c.status : 'Unknown', reason: current && c ? c.reason : 'NotObservedYet', message: current && c ? c.message : 'the recorder has not written a status for this generation yet' };
  };
  try {
    return await waitFor(`ChangeRecorder ${name} to be Ready`, async () => {
      const ready = await readyOf();
      return ready.status === 'True' ? ready : undefined;
    }, { timeoutMs, intervalMs: 500 });
  } catch {
    // Not Ready in time is not an install failure: the condition says why (a Secret not mounted yet, a kind refused).
    return readyOf();
  }
}

/**
 * Removes the recorder: its Deployment, Service, RBAC, ServiceAccount, users webhook and its client CA. The CRD, every ChangeRecorder, the
 * records' volume (PVC) and the namespace stay, so installing again resumes where it stopped.
 */
export async function uninstallRecorder(client: Client, options: Pick<RecorderManifestOptions, 'namespace'> = {}): Promise<void> {
  // With the users webhook's objects, whether or not it was installed: deleting what is absent is nothing.
  const ns = options.namespace ?? 'quorum-system';
  await removeManifests(client, [...recorderManifests({ namespace: ns, usersWebhook: true }), webhookClientCAConfigMap(ns, '')], { keep: ['Namespace', 'CustomResourceDefinition', 'PersistentVolumeClaim'] });
}
