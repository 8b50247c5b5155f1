// The manager grants only while its escalation webhook guards the definitions it acts on. The webhook is the
// only part that knows who wrote a definition (admission/webhook.ts); a definition written while it is missing
// (deleted, never installed, failing open, pointing elsewhere) was never checked, and acting on it would grant
// whatever it names with the manager's own `bind`. So until the configuration is in place the manager creates
// and updates nothing; it still deletes (revoking and expiring never need the webhook, as deleting a
// definition does not). The configuration is watched, and each withheld definition looks again after
// WEBHOOK_RECHECK_MS besides.
//
// "In place" includes whom the API server trusts to answer as the webhook: its caBundle must hold the
// manager's own CA and nothing else. A foreign CA added there lets any server holding a certificate it signed,
// reached at the webhook's address, admit every definition; an empty one leaves the choice to the API server's
// system roots. The manager's CA is the one its serving Secret holds (or, served outside the cluster, a PEM it
// is given); a CA that Secret held earlier in this process's life is still its own, so the 30 s during which a
// renewal's new bundle is being published do not count as a problem.
import { errorText, NotFoundError, Secrets, type Client, type Logger, type OpenObject } from '@quorum/runtime';
import { ESCALATION_WEBHOOK_NAME } from '../admission/serving.ts';
import { ESCALATION_WEBHOOK_PATH } from '../admission/webhook.ts';
import { GROUP, PLURAL, VERSION } from '../api/rbacdefinition.ts';

/** A withheld definition is reconciled again this often even if no change of the configuration is seen. */
export const WEBHOOK_RECHECK_MS = 10_000;

/** Where the configuration must send RBACDefinition writes: the manager's Service, or a URL (run outside the cluster). */
export type WebhookTarget = { service: { namespace: string; name: string } } | { url: string };

/** Where the manager's own CA is read: its serving certificate Secret (`ca.crt`), or a PEM given directly. */
export type WebhookCASource = { secret: { namespace: string; name: string } } | { pem: string };

export interface EscalationWebhookRef {
  /** The ValidatingWebhookConfiguration's name. */
  configuration: string;
  target: WebhookTarget;
  /** The CA the configuration's caBundle must hold, and nothing besides. */
  ca: WebhookCASource;
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
  matchPolicy?: string;
  rules?: Rule[];
  objectSelector?: { matchLabels?: object; matchExpressions?: unknown[] };
  matchConditions?: unknown[];
  clientConfig?: { url?: string; caBundle?: string; service?: { namespace?: string; name?: string; path?: string } };
}

/** The certificates of a PEM bundle, each as its base64 body without line breaks (how two copies compare equal). */
export function pemCertificates(pem: string): string[] {
  return [...pem.matchAll(/-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+?)-----END CERTIFICATE-----/g)].map((m) => m[1]!.replace(/\s+/g, ''));
}

/** Why the caBundle does not trust exactly the manager's CA (`trusted`: pemCertificates of it); undefined when it does. */
function caBundleProblem(caBundle: string | undefined, trusted: readonly string[]): string | undefined {
  if (trusted.length === 0) return "the manager has not read its own CA yet (its serving certificate Secret), so it cannot tell whom the API server trusts as the webhook";
  if (!caBundle) return 'it has no caBundle: the API server would trust its system roots for the webhook, not the manager\'s CA';
  const held = pemCertificates(Buffer.from(caBundle, 'base64').toString('utf8'));
  if (held.length === 0) return 'its caBundle holds no PEM certificate';
  const foreign = held.filter((c) => !trusted.includes(c)).length;
  if (foreign > 0) return `its caBundle trusts ${foreign} CA(s) besides the manager's: a server holding a certificate one of them signed could admit any definition`;
  return undefined;
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

/**
 * Why the configuration does not guard every RBACDefinition write as the manager needs; undefined when it does.
 * `trustedCAs`: the manager's own CA certificates (pemCertificates), which the caBundle must hold and no other.
 */
export function webhookProblem(config: OpenObject | undefined, ref: EscalationWebhookRef, trustedCAs: readonly string[]): string | undefined {
  const where = `the ValidatingWebhookConfiguration ${ref.configuration}`;
  if (!config) return `${where} does not exist`;
  if (config.metadata.deletionTimestamp) return `${where} is being deleted`;
  const hook = ((config['webhooks'] as WebhookEntry[] | undefined) ?? []).find((w) => w.name === ESCALATION_WEBHOOK_NAME);
  if (!hook) return `${where} has no webhook ${ESCALATION_WEBHOOK_NAME}`;
  const failurePolicy = hook.failurePolicy ?? 'Fail';
  if (failurePolicy !== 'Fail') return `${where}: its failurePolicy is ${failurePolicy}; it must fail closed (Fail)`;
  // Exact would let a write through another served version of the CRD past a rule naming only this one.
  const matchPolicy = hook.matchPolicy ?? 'Equivalent';
  if (matchPolicy !== 'Equivalent') return `${where}: its matchPolicy is ${matchPolicy}; writes through another version of ${PLURAL}.${GROUP} would pass unchecked (it must be Equivalent)`;
  const missed = ['CREATE', 'UPDATE'].filter((op) => !intercepts(hook.rules ?? [], op));
  if (missed.length > 0) return `${where} does not send ${missed.join(' and ')} of ${PLURAL}.${GROUP}/${VERSION} to the webhook`;
  const selective = Object.keys(hook.objectSelector?.matchLabels ?? {}).length > 0 || (hook.objectSelector?.matchExpressions?.length ?? 0) > 0;
  if (selective || (hook.matchConditions?.length ?? 0) > 0) return `${where} lets some definitions past the webhook (objectSelector or matchConditions)`;
  const elsewhere = targetProblem(hook.clientConfig, ref.target);
  if (elsewhere !== undefined) return `${where} does not reach this manager: ${elsewhere}`;
  const trust = caBundleProblem(hook.clientConfig?.caBundle, trustedCAs);
  return trust === undefined ? undefined : `${where}: ${trust}`;
}

export interface WebhookGateDeps {
  ref: EscalationWebhookRef;
  /** The configuration as the cache holds it. */
  read: () => OpenObject | undefined;
  /** The manager's own CA certificates (pemCertificates), as far as it has read them (trustedCAReader). */
  trustedCAs: () => Promise<TrustedCAs>;
  log: Pick<Logger, 'warn' | 'info'>;
  /** rbac_manager_escalation_webhook_in_place: 1 while it is, 0 while the manager withholds. */
  inPlace: { set(labels: Record<string, never>, value: number): void };
}

/** The manager's CA certificates as last read, and why the last read failed, if it did. */
export interface TrustedCAs {
  certificates: readonly string[];
  readProblem?: string;
}

/** The Secret is read again at most this often: its CA changes about once a year (a renewal), never faster. */
export const CA_REREAD_MS = 30_000;
/** While no CA is known (the first replica has not made the Secret yet), it is read again this soon. */
export const CA_RETRY_MS = 2_000;

/**
 * The manager's CA certificates: a PEM given, or read from its serving Secret (`get` on that one name, which
 * the webhook's serving already needs) on first use and again at most every CA_REREAD_MS (CA_RETRY_MS while it
 * knows none), one read at a time.
 * Every CA the Secret held since the process started stays trusted, so the configuration may lag behind a
 * renewal. A failed read keeps what was read before, with a warn line when its reason changes.
 */
export function trustedCAReader(client: Pick<Client, 'get'>, source: WebhookCASource, log: Pick<Logger, 'warn'>, now: () => number = Date.now): () => Promise<TrustedCAs> {
  const trusted = new Set('pem' in source ? pemCertificates(source.pem) : []);
  if ('pem' in source) return () => Promise.resolve({ certificates: [...trusted] });
  const { namespace, name } = source.secret;
  let readAt = Number.NEGATIVE_INFINITY;
  let readProblem: string | undefined;
  let reading: Promise<void> | undefined;
  const read = async (): Promise<void> => {
    try {
      const secret = await client.get(Secrets, { namespace, name });
      const pem = secret.data?.['ca.crt'];
      for (const c of pemCertificates(pem ? Buffer.from(pem, 'base64').toString('utf8') : '')) trusted.add(c);
      readProblem = trusted.size > 0 ? undefined : `its serving certificate Secret ${namespace}/${name} holds no ca.crt yet`;
    } catch (err) {
      const problem = err instanceof NotFoundError ? `its serving certificate Secret ${namespace}/${name} does not exist yet` : `cannot read its serving certificate Secret ${namespace}/${name}: ${errorText(err)}`;
      if (problem !== readProblem) log.warn({ err }, `the escalation webhook gate ${problem}; trying again in ${CA_REREAD_MS / 1000} s`);
      readProblem = problem;
    }
    readAt = now();
  };
  return async () => {
    if (now() - readAt >= (trusted.size > 0 ? CA_REREAD_MS : CA_RETRY_MS)) await (reading ??= read().finally(() => (reading = undefined)));
    return { certificates: [...trusted], ...(readProblem !== undefined ? { readProblem } : {}) };
  };
}

/** The gate's current answer (from the cache and the manager's CA), voiced once per change: a warn line when it closes, info when it opens. */
export function webhookGate(deps: WebhookGateDeps): () => Promise<string | undefined> {
  let last: string | undefined | null = null;
  return async () => {
    const cas = await deps.trustedCAs();
    let problem = webhookProblem(deps.read(), deps.ref, cas.certificates);
    // Its CA unknown: say why it could not be read.
    if (problem !== undefined && cas.certificates.length === 0 && cas.readProblem !== undefined) problem = `${problem} (${cas.readProblem})`;
    if (problem !== last) {
      if (problem !== undefined) deps.log.warn({ problem }, 'escalation webhook not in place: the manager grants nothing (it still revokes) until it is');
      else if (last !== null) deps.log.info({ configuration: deps.ref.configuration }, 'escalation webhook in place again: granting');
      deps.inPlace.set({}, problem === undefined ? 1 : 0);
      last = problem;
    }
    return problem;
  };
}
