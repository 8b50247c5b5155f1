// The manager grants only while its escalation webhook guards the definitions it acts on. The webhook is the
// only part that knows who wrote a definition (admission/webhook.ts); a definition written while it is missing
// (deleted, never installed, failing open, pointing elsewhere) was never checked, and acting on it would grant
// whatever it names with the manager's own `bind`. So until the configuration is in place the manager creates
// and updates nothing; it still deletes (revoking and expiring never need the webhook, as deleting a
// definition does not). The configuration is watched, and each withheld definition looks again after
// WEBHOOK_RECHECK_MS besides.
import type { Logger, OpenObject } from '@quorum/runtime';
import { ESCALATION_WEBHOOK_NAME } from '../admission/serving.ts';
import { ESCALATION_WEBHOOK_PATH } from '../admission/webhook.ts';
import { GROUP, PLURAL, VERSION } from '../api/rbacdefinition.ts';

/** A withheld definition is reconciled again this often even if no change of the configuration is seen. */
export const WEBHOOK_RECHECK_MS = 10_000;

/** Where the configuration must send RBACDefinition writes: the manager's Service, or a URL (run outside the cluster). */
export type WebhookTarget = { service: { namespace: string; name: string } } | { url: string };

export interface EscalationWebhookRef {
  /** The ValidatingWebhookConfiguration's name. */
  configuration: string;
  target: WebhookTarget;
}

interface Rule {
  apiGroups?: string[];
  apiVersions?: string[];
  operations?: string[];
  resources?: string[];
  scope?: string;
}

interface WebhookEntry {
  name?: string;
  failurePolicy?: string;
  rules?: Rule[];
  objectSelector?: { matchLabels?: object; matchExpressions?: unknown[] };
  matchConditions?: unknown[];
  clientConfig?: { url?: string; service?: { namespace?: string; name?: string; path?: string } };
}

const covers = (list: readonly string[] | undefined, value: string): boolean => (list ?? []).some((v) => v === value || v === '*');

/** Whether one of the rules sends this operation on RBACDefinitions to the webhook. */
function intercepts(rules: readonly Rule[], operation: string): boolean {
  return rules.some(
    (r) => covers(r.apiGroups, GROUP) && covers(r.apiVersions, VERSION) && covers(r.resources, PLURAL) && covers(r.operations, operation) && r.scope !== 'Namespaced',
  );
}

function targetProblem(client: WebhookEntry['clientConfig'], target: WebhookTarget): string | undefined {
  if ('url' in target) return client?.url === target.url ? undefined : `it calls ${client?.url ?? 'a Service'}, not ${target.url}`;
  const svc = client?.service;
  const want = target.service;
  if (svc?.namespace === want.namespace && svc.name === want.name && (svc.path ?? '/') === ESCALATION_WEBHOOK_PATH) return undefined;
  const got = svc ? `Service ${svc.namespace}/${svc.name} path ${svc.path ?? '/'}` : (client?.url ?? 'nothing');
  return `it calls ${got}, not Service ${want.namespace}/${want.name} path ${ESCALATION_WEBHOOK_PATH}`;
}

/** Why the configuration does not guard every RBACDefinition write as the manager needs; undefined when it does. */
export function webhookProblem(config: OpenObject | undefined, ref: EscalationWebhookRef): string | undefined {
  const where = `the ValidatingWebhookConfiguration ${ref.configuration}`;
  if (!config) return `${where} does not exist`;
  if (config.metadata.deletionTimestamp) return `${where} is being deleted`;
  const hook = ((config['webhooks'] as WebhookEntry[] | undefined) ?? []).find((w) => w.name === ESCALATION_WEBHOOK_NAME);
  if (!hook) return `${where} has no webhook ${ESCALATION_WEBHOOK_NAME}`;
  const failurePolicy = hook.failurePolicy ?? 'Fail';
  if (failurePolicy !== 'Fail') return `${where}: its failurePolicy is ${failurePolicy}; it must fail closed (Fail)`;
  const missed = ['CREATE', 'UPDATE'].filter((op) => !intercepts(hook.rules ?? [], op));
  if (missed.length > 0) return `${where} does not send ${missed.join(' and ')} of ${PLURAL}.${GROUP}/${VERSION} to the webhook`;
  const selective = Object.keys(hook.objectSelector?.matchLabels ?? {}).length > 0 || (hook.objectSelector?.matchExpressions?.length ?? 0) > 0;
  if (selective || (hook.matchConditions?.length ?? 0) > 0) return `${where} lets some definitions past the webhook (objectSelector or matchConditions)`;
  const elsewhere = targetProblem(hook.clientConfig, ref.target);
  return elsewhere === undefined ? undefined : `${where} does not reach this manager: ${elsewhere}`;
}

export interface WebhookGateDeps {
  ref: EscalationWebhookRef;
  /** The configuration as the cache holds it. */
  read: () => OpenObject | undefined;
  log: Pick<Logger, 'warn' | 'info'>;
  /** rbac_manager_escalation_webhook_in_place: 1 while it is, 0 while the manager withholds. */
  inPlace: { set(labels: Record<string, never>, value: number): void };
}

/** The gate's current answer (from the cache), voiced once per change: a warn line when it closes, info when it opens. */
export function webhookGate(deps: WebhookGateDeps): () => string | undefined {
  let last: string | undefined | null = null;
  return () => {
    const problem = webhookProblem(deps.read(), deps.ref);
    if (problem !== last) {
      if (problem !== undefined) deps.log.warn({ problem }, 'escalation webhook not in place: the manager grants nothing (it still revokes) until it is');
      else if (last !== null) deps.log.info({ configuration: deps.ref.configuration }, 'escalation webhook in place again: granting');
      deps.inPlace.set({}, problem === undefined ? 1 : 0);
      last = problem;
    }
    return problem;
  };
}
