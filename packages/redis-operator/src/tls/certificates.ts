// TLS of a Redis: which Secret its servers serve, the names the certificate covers, and, for operator-managed TLS,
// what to issue (the kit's checks and writes: packages/kit/src/tls). Two Secrets, never one: `<name>-ca` holds the
// CA's key and stays with the operator; `<name>-tls` holds the certificate every instance and Sentinel serves,
// with the CA bundle (ca.crt) that clients, replicas and Sentinels verify it by.
//
// One certificate serves every pod: its names are a wildcard over the headless Service's per-pod names and the
// Services' names, so that scaling never needs a new one. A CA is issued only while no instance pod exists (nothing
// trusts one yet): a new CA under running pods would cut replicas and Sentinels off from the primary, so a lost CA
// is reported for a person, never replaced. A CA is rotated instead, in the kit's three steps (kit tls/ca-rotation.ts):
// TrustNew, Reissue, DropOld, each one write of `<name>-ca` that the planner orders (plan/tls.ts); the certificate
// follows each step (issued again with the CA Secret's bundle, by its signing CA).
import { createHash, X509Certificate } from 'node:crypto';
import {
  bundleProblem,
  CA_ROTATION_KEYS,
  CA_ROTATION_STEP_FROM,
  caProfile,
  caRotationDue,
  caRotationPhase,
  caRotationTime,
  rotatedCAContents,
  foreignSecretProblem,
  issueCertificate,
  leafProblem,
  loadCA,
  readManagedSecrets,
  secretContents,
  secretOwner,
  TLS_KEYS,
  tlsSecretObject,
  TLSNotReadyError,
  writeIssuedSecret,
  type CertificateAuthority,
  type CARotationStep,
  type CertificateRequest,
  type IssueReason,
  type SecretContents,
  type SecretOwnerSpec,
} from '@quorum/kit';
import { Secrets, type Client } from '@quorum/runtime';
import type { DefaultedSpec } from '../api/defaults.ts';
import { names, objectLabels, ownerRef, type RedisRef } from '../names.ts';

export const DEFAULT_CLUSTER_DOMAIN = 'cluster.local';
export const CA_VALIDITY_DAYS = 3650;
export const LEAF_VALIDITY_DAYS = 365;

/** A new value asks for a CA rotation (TrustNew, Reissue, DropOld); `<name>-ca` records the value it answered. */
export const ROTATE_CA_ANNOTATION = 'redis.quorum.dev/rotate-ca';
/** A new value asks for a new certificate from the same CA; `<name>-tls` records (annotation) the value it was issued under. */
export const ROTATE_CERTIFICATES_ANNOTATION = 'redis.quorum.dev/rotate-certificates';

/** The Redis's rotate-ca and rotate-certificates annotations now. */
export interface RotationTokens {
  ca?: string | undefined;
  certificates?: string | undefined;
}

/** The Secret whose `ca.crt`, `tls.crt` and `tls.key` the pods serve; undefined without TLS. */
export function servedSecretName(redis: string, spec: Pick<DefaultedSpec, 'tls'>): string | undefined {
  if (spec.tls.disabled === true) return undefined;
  return spec.tls.secretName ?? names.tlsSecret(redis);
}

/** Every name of one Service, from the same namespace to fully qualified. */
function serviceNames(service: string, namespace: string, clusterDomain: string): string[] {
  return [service, `${service}.${namespace}`, `${service}.${namespace}.svc`, `${service}.${namespace}.svc.${clusterDomain}`];
}

/**
 * The served certificate's names: every pod's stable name (`<pod>.<name>-headless.<ns>.svc`, by a wildcard), the
 * Services (`<name>`, `<name>-replicas`, `<name>-sentinel`, whether Sentinels run or not), and loopback for the
 * probes' redis-cli. Pod IPs never: they change on every restart (the operator dials IPs with the pod's name as
 * TLS server name).
 */
export function servingSANs(redis: string, namespace: string, clusterDomain: string): { dnsNames: string[]; ipAddresses: string[] } {
  const domain = clusterDomain.replace(/\.$/, '');
  const headless = `${names.headlessService(redis)}.${namespace}.svc`;
  const services = [names.primaryService(redis), names.replicasService(redis), names.sentinelService(redis)];
  return {
    dnsNames: [`*.${headless}`, `*.${headless}.${domain}`, ...services.flatMap((s) => serviceNames(s, namespace, domain)), 'localhost'],
    ipAddresses: ['127.0.0.1', '::1'],
  };
}

export function caRequest(redis: RedisRef): CertificateRequest {
  return caProfile(names.caSecret(redis.name), redis.namespace, CA_VALIDITY_DAYS);
}

/** serverAuth for the listeners; clientAuth because replicas and Sentinels present it when they dial. */
export function leafRequest(redis: RedisRef, clusterDomain: string): CertificateRequest {
  return { subject: { commonName: redis.name, organization: redis.namespace }, isCA: false, extendedKeyUsage: ['serverAuth', 'clientAuth'], ...servingSANs(redis.name, redis.namespace, clusterDomain), validityDays: LEAF_VALIDITY_DAYS };
}

export function redisSecretOwner(redis: RedisRef): SecretOwnerSpec {
  return { kind: 'Redis', name: redis.name, uid: redis.uid, handOverLabels: objectLabels(redis.name), noun: 'Redis', docs: 'docs/redis.md' };
}

export type TLSProblemReason = 'TLSSecretConflict' | 'TLSSecretInvalid';

/** A CA rotation: due (Start, with why) or under way in the phase `<name>-ca` is in. */
export interface CARotationObservation {
  phase: 'Start' | 'TrustNew' | 'Reissue';
  why: string;
  /** TrustNew: when the new CA joined the bundle (the overlap counts from it); Reissue: when signing moved to it. */
  since?: string;
}

export interface TLSObservation {
  mode: 'Operator' | 'Secret';
  /** The Secret the pods serve and clients read ca.crt from. */
  secretName: string;
  /** The CA bundle the operator verifies the servers by (its own connections, the backup agent's). */
  ca?: string;
  /** A short hash of the served certificate: part of the Sentinels' config hash, so that a new one rolls them. */
  fingerprint?: string;
  /** The certificate's SHA-256 fingerprint as a TLS peer shows it: an instance serving another one reloads. */
  fingerprint256?: string;
  notAfter?: string;
  /** Operator-managed Secrets to issue now, with why. */
  issue: { name: string; reason: IssueReason }[];
  /** Why TLS cannot be served as asked: a Secret in the way, a user's Secret missing or incomplete, a lost CA. */
  problem?: { reason: TLSProblemReason; message: string };
  /** Operator-managed: a CA rotation due or under way. */
  caRotation?: CARotationObservation;
}

function served(contents: SecretContents | undefined): Pick<TLSObservation, 'ca' | 'fingerprint' | 'fingerprint256' | 'notAfter'> {
  const certificate = contents?.[TLS_KEYS.certificate];
  const ca = contents?.[TLS_KEYS.ca];
  if (!certificate || !ca) return {};
  try {
    const parsed = new X509Certificate(certificate);
    return { ca, fingerprint: createHash('sha256').update(certificate.trim()).digest('hex').slice(0, 16), fingerprint256: parsed.fingerprint256, notAfter: parsed.validToDate.toISOString() };
  } catch {
    return {};
  }
}

/** A user's Secret: it must exist and hold the three keys; the servers check the rest as they load it. */
async function observeUserSecret(client: Pick<Client, 'find'>, namespace: string, secretName: string): Promise<TLSObservation> {
  const base = { mode: 'Secret' as const, secretName, issue: [] };
  const contents = secretContents(await client.find(Secrets, { namespace, name: secretName }));
  const where = `Secret ${secretName} (spec.tls.secretName)`;
  if (!contents) return { ...base, problem: { reason: 'TLSSecretInvalid', message: `${where} does not exist in namespace ${namespace}` } };
  const missing = Object.values(TLS_KEYS).filter((k) => !contents[k]);
  if (missing.length > 0) return { ...base, problem: { reason: 'TLSSecretInvalid', message: `${where} lacks ${missing.join(', ')}` } };
  const now = served(contents);
  if (!now.fingerprint) return { ...base, problem: { reason: 'TLSSecretInvalid', message: `${where}: tls.crt does not parse as a PEM certificate` } };
  return { ...base, ...now };
}

/** The operator-managed Secrets as read: their contents, and the rotate-certificates value the certificate was issued under. */
interface ManagedContents {
  ca: SecretContents | undefined;
  leaf: SecretContents | undefined;
  leafToken: string | undefined;
}

/**
 * What to issue for operator-managed TLS: a missing CA only while no pod exists; the certificate whenever the kit's
 * checks say (other CA, other bundle, other names, nearing its end), or a rotate-certificates value it was not issued under.
 */
function toIssue(redis: RedisRef, read: ManagedContents, podsExist: boolean, clusterDomain: string, now: Date, tokens: RotationTokens): Pick<TLSObservation, 'issue' | 'problem'> {
  const { ca, leaf } = read;
  const loaded = loadCA(ca);
  if (typeof loaded === 'string') {
    if (loaded === 'Missing' && !podsExist) return { issue: [{ name: names.caSecret(redis.name), reason: 'Missing' }, { name: names.tlsSecret(redis.name), reason: 'IssuerChanged' }] };
    const state = loaded === 'Missing' ? 'missing' : 'unreadable';
    return { issue: [], problem: { reason: 'TLSSecretInvalid', message: `the CA Secret ${names.caSecret(redis.name)} is ${state} while pods trust the CA it held: a new CA would cut replicas and Sentinels off from the primary. Restore the Secret from a copy, or create a new Redis from a backup (docs/redis.md)` } };
  }
  const requested = tokens.certificates !== undefined && read.leafToken !== tokens.certificates ? ('RotationRequested' as const) : undefined;
  const reason = leafProblem(leaf, TLS_KEYS.certificate, TLS_KEYS.key, loaded, leafRequest(redis, clusterDomain), now) ?? bundleProblem(leaf, TLS_KEYS.ca, ca?.[TLS_KEYS.ca]) ?? requested;
  return { issue: reason ? [{ name: names.tlsSecret(redis.name), reason }] : [] };
}

/** The rotation `<name>-ca` is in, else one due (a new rotate-ca value, or the CA nearing its end). */
function caRotationOf(ca: SecretContents | undefined, token: string | undefined, now: Date): CARotationObservation | undefined {
  const phase = caRotationPhase(ca);
  if (phase !== 'None') {
    const at = caRotationTime(ca, phase === 'TrustNew' ? CA_ROTATION_KEYS.trustedAt : CA_ROTATION_KEYS.rotatedAt);
    return { phase, why: 'under way', ...(at !== undefined ? { since: new Date(at).toISOString() } : {}) };
  }
  const why = caRotationDue(ca, token, ROTATE_CA_ANNOTATION, now);
  return why !== undefined ? { phase: 'Start', why } : undefined;
}

export interface TLSObserveInput {
  client: Pick<Client, 'find'>;
  redis: RedisRef;
  spec: Pick<DefaultedSpec, 'tls'>;
  /** Whether any instance pod exists: a CA such pods trust must not be replaced. */
  podsExist: boolean;
  clusterDomain: string;
  now: Date;
  /** The rotate-ca and rotate-certificates annotations of the Redis. */
  tokens?: RotationTokens;
}

/** The Redis's TLS as it is now; undefined without TLS. Secrets are read from the API server (the operator caches none). */
export async function observeTLS(i: TLSObserveInput): Promise<TLSObservation | undefined> {
  const { redis, spec } = i;
  if (spec.tls.disabled === true) return undefined;
  if (spec.tls.secretName !== undefined) return observeUserSecret(i.client, redis.namespace, spec.tls.secretName);
  const owner = redisSecretOwner(redis);
  const secretName = names.tlsSecret(redis.name);
  const read = async (name: string): Promise<{ contents?: SecretContents; token?: string; foreign?: string }> => {
    const secret = await i.client.find(Secrets, { namespace: redis.namespace, name });
    if (secret && secretOwner(secret, owner) === 'foreign') return { foreign: foreignSecretProblem(secret, owner) };
    const contents = secretContents(secret);
    const token = secret?.metadata.annotations?.[ROTATE_CERTIFICATES_ANNOTATION];
    return { ...(contents ? { contents } : {}), ...(token !== undefined ? { token } : {}) };
  };
  const [ca, leaf] = [await read(names.caSecret(redis.name)), await read(secretName)];
  const foreign = [ca.foreign, leaf.foreign].filter((f): f is string => f !== undefined);
  const base = { mode: 'Operator' as const, secretName, ...served(leaf.contents) };
  if (foreign.length > 0) return { ...base, issue: [], problem: { reason: 'TLSSecretConflict', message: foreign.join('; ') } };
  const tokens = i.tokens ?? {};
  const planned = toIssue(redis, { ca: ca.contents, leaf: leaf.contents, leafToken: leaf.token }, i.podsExist, i.clusterDomain, i.now, tokens);
  const rotation = planned.problem ? undefined : caRotationOf(ca.contents, tokens.ca, i.now);
  return { ...base, ...planned, ...(rotation ? { caRotation: rotation } : {}) };
}

export interface TLSWriteInput {
  client: Pick<Client, 'find' | 'create' | 'replace'>;
  redis: RedisRef;
  podsExist: boolean;
  clusterDomain: string;
  now: Date;
  fieldManager: string;
  signal: AbortSignal;
  tokens?: RotationTokens;
}

/**
 * Issues what operator-managed TLS needs now, deciding again on Secrets read fresh (a Secret written by the previous
 * reconcile may not be visible to the last observation): the CA first, then the certificate it signs. Returns the
 * Secrets written, with why.
 */
export async function writeTLS(w: TLSWriteInput): Promise<{ name: string; reason: IssueReason }[]> {
  const { redis } = w;
  const caName = names.caSecret(redis.name);
  const leafName = names.tlsSecret(redis.name);
  const objects = await readManagedSecrets(w.client, redis.namespace, [caName, leafName], redisSecretOwner(redis));
  const caContents = secretContents(objects.get(caName));
  const leafToken = objects.get(leafName)?.metadata.annotations?.[ROTATE_CERTIFICATES_ANNOTATION];
  const tokens = w.tokens ?? {};
  const plan = toIssue(redis, { ca: caContents, leaf: secretContents(objects.get(leafName)), leafToken }, w.podsExist, w.clusterDomain, w.now, tokens);
  if (plan.problem) throw new TLSNotReadyError(plan.problem.message, plan.problem.reason);
  const write = (name: string, contents: SecretContents, isCA: boolean): Promise<void> => {
    const object = tlsSecretObject(name, redis.namespace, contents, objectLabels(redis.name), ownerRef(redis));
    // The certificate records the rotate-certificates value it was issued under: that value asks for no other.
    const annotated = !isCA && tokens.certificates !== undefined ? { ...object, metadata: { ...object.metadata, annotations: { [ROTATE_CERTIFICATES_ANNOTATION]: tokens.certificates } } } : object;
    return writeIssuedSecret(w.client, annotated, objects.get(name), { isCA, fieldManager: w.fieldManager, signal: w.signal });
  };
  let authority: CertificateAuthority;
  let bundle: string;
  if (plan.issue.some((s) => s.name === caName)) {
    const issued = await issueCertificate(caRequest(redis), w.now);
    await write(caName, { [TLS_KEYS.ca]: issued.certificatePem, [TLS_KEYS.certificate]: issued.certificatePem, [TLS_KEYS.key]: issued.privateKeyPem }, true);
    authority = { certificate: issued.certificate, privateKey: issued.privateKey };
    bundle = issued.certificatePem;
  } else {
    authority = loadCA(caContents) as CertificateAuthority;
    bundle = caContents?.[TLS_KEYS.ca] ?? authority.certificate.toString();
  }
  if (plan.issue.some((s) => s.name === leafName)) {
    const leaf = await issueCertificate(leafRequest(redis, w.clusterDomain), w.now, authority);
    await write(leafName, { [TLS_KEYS.ca]: bundle, [TLS_KEYS.certificate]: leaf.certificatePem, [TLS_KEYS.key]: leaf.privateKeyPem }, false);
  }
  return plan.issue;
}

export interface CARotationInput {
  client: Pick<Client, 'find' | 'replace'>;
  redis: RedisRef;
  step: CARotationStep;
  /** The rotate-ca value a TrustNew answers (recorded in `<name>-ca`); unset for a CA nearing its end. */
  token?: string | undefined;
  now: Date;
  fieldManager: string;
  signal: AbortSignal;
}

/**
 * One step of a CA rotation, written to `<name>-ca` read fresh and replaced with its resourceVersion (a concurrent
 * write fails instead of being lost). A step taken already (the operator died after writing it) is left as it is:
 * the Secret's phase says what was done; false then. TrustNew also records when (`trusted-at`): the overlap
 * clients have to read the two-CA bundle counts from it.
 */
export async function rotateCA(r: CARotationInput): Promise<boolean> {
  const { redis } = r;
  const caName = names.caSecret(redis.name);
  const existing = (await readManagedSecrets(r.client, redis.namespace, [caName], redisSecretOwner(redis))).get(caName);
  const contents = secretContents(existing);
  if (!existing || !contents) throw new TLSNotReadyError(`the CA Secret ${caName} is missing`);
  if (caRotationPhase(contents) !== CA_ROTATION_STEP_FROM[r.step]) return false;
  const next = await rotatedCAContents(contents, r.step, caRequest(redis), r.now, r.step === 'TrustNew' ? r.token : undefined);
  const recorded = r.step === 'TrustNew' ? { ...next, [CA_ROTATION_KEYS.trustedAt]: r.now.toISOString() } : next;
  const object = tlsSecretObject(caName, redis.namespace, recorded, objectLabels(redis.name), ownerRef(redis));
  await r.client.replace(Secrets, { ...object, metadata: { ...object.metadata, resourceVersion: existing.metadata.resourceVersion } }, { fieldManager: r.fieldManager, signal: r.signal });
  return true;
}
