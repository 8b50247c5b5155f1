// The TLS Secrets of a cluster with spec.tls, as the reconciler sees and writes them: what is observed (the
// operator's own Secrets from the informer cache, a user's Secret by GET, checked as etcd will use it), the
// credentials the operator dials members with, status.tls, and the writes (issue, renew, delete) that the
// step handlers (cluster/act/) make. Deciding what to issue is tls/secrets.ts's (pure); this file does the I/O around it.
//
// A CA is issued only while nothing trusts one yet. Replacing one under running members would cut them off from
// each other (etcd loads its trusted CAs only at start), so a missing or unreadable CA of a cluster whose members
// hold certificates is reported for a person (TLSSecretInvalid), never replaced. A CA is changed only by a
// rotation, step by step (rotateCA), in which both CAs are trusted for as long as either signs what a member serves.
import { X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';
import type { V1Secret } from '@kubernetes/client-node';
import { ForeignSecretError, needsRotation, readManagedSecrets, secretContents, TLSNotReadyError, writeIssuedSecret, type SecretObject } from '@quorum/kit';
import { NotFoundError, Secrets, type Client, type KubeObject, type Secret } from '@quorum/runtime';
import type { EtcdCluster, TlsStatus } from '../api/etcdcluster.ts';
import { checkUserCertificate, clientCAProfile, DEFAULT_CLUSTER_DOMAIN, peerCAProfile } from './issue.ts';
import {
  CA_ROTATION_KEYS,
  caRotationPhase,
  clientCASecretName,
  rotatedCAContents,
  clientTLSSecretName,
  issueTLSSecrets,
  MEMBER_TLS_FILES,
  memberTLSSecretName,
  peerCASecretName,
  TLS_KEYS,
  tlsSecret,
  tlsSecretsToIssue,
  type ObservedTLSSecrets,
  type SecretContents,
  type TLSIssuePlan,
  type TLSSubject,
} from './secrets.ts';
import { CLIENT_PORT, FIELD_MANAGER, LABELS, memberHost, ownerRef, PEER_PORT, ROTATE_CA_ANNOTATION, ROTATE_CERTIFICATES_ANNOTATION } from '../names.ts';
import type { DefaultedSpec } from '../api/defaults.ts';
import { caBundleHash, clientScheme, operatorManaged, peerScheme, tlsSides, type CABundles, type ClientCredentials, type TLSSide } from './members.ts';
import type { Scheme } from '../names.ts';
import { clusterSecretOwner, foreignSecretProblem, secretOwner } from './ownership.ts';

// The kit's generic parts, where the etcd code has always taken them.
export { ForeignSecretError, secretContents, TLSNotReadyError };

/**
 * The cluster's TLS Secrets, for a cluster with spec.tls (observeTLS below). A member's own Secret is
 * made with its pod (act createPod); these are the rest.
 */
export interface ObservedTLS {
  /** Operator-managed Secrets to issue, or issue again, with why (a missing CA, a member certificate that expires soon, …). */
  issue: { name: string; reason: string }[];
  /** Members that have an operator-managed `<member>-tls` Secret. */
  memberSecrets: string[];
  /** Why the certificates cannot be used (a user's Secret that fails its check, an unreadable CA): no pod is created or changed. */
  invalid?: string;
  /**
   * An operator-managed CA that is being rotated, or should be (the first side that needs it, peer first).
   * `Start`: asked for (the etcd.quorum.dev/rotate-ca annotation, or the CA nears its end) and not begun.
   * `notServedByNew`: read only in Reissue once the overlap has passed, by a TLS handshake with every member: each serves a certificate of the new CA
   * (the kubelet refreshes mounted Secrets on its own period); the member names that do not, otherwise.
   */
  caRotation?: { ca: 'peer' | 'client'; phase: 'Start' | 'TrustNew' | 'Reissue'; why: string; rotatedAt?: number; notServedByNew?: string[] };
  /** How long the old CA stays trusted after signing moved to the new one (applications pick up the new client certificate). */
  caOverlapMs?: number;
}

/** The cluster domain member certificates name (`<member>.<cluster>.<ns>.svc.<domain>`): the operator's CLUSTER_DOMAIN. */
export function clusterDomain(env: NodeJS.ProcessEnv = process.env): string {
  return env['CLUSTER_DOMAIN'] || DEFAULT_CLUSTER_DOMAIN;
}

export interface TLSObservation {
  observed: ObservedTLS;
  /** What the operator presents to members' client ports, and trusts them by; undefined without client TLS. */
  credentials?: ClientCredentials;
  status: TlsStatus;
  /** A certificate that ends soon and that a person must replace (a user's Secret, or a CA: rotation is not built). */
  expiring?: string;
  peerScheme: Scheme;
  clientScheme: Scheme;
  /** The CA bundles members should trust now; a side is missing while its CA cannot be read (then nothing changes). */
  caBundles: CABundles;
}

export interface TLSObserveInput {
  client: Pick<Client, 'find'>;
  cluster: EtcdCluster;
  spec: DefaultedSpec;
  /** The operator's Secrets in the cluster's namespace, from the informer cache (label managed-by=quorum). */
  cached: (name: string) => (KubeObject & { data?: Record<string, string> }) | undefined;
  /** Members that have a pod: their certificates must be valid now. */
  podMembers: string[];
  /** Every member name the cache has a `<member>-tls` Secret for. */
  memberSecrets: string[];
  /** Whether any pod of the cluster was made with TLS material: a CA such pods trust must not be replaced. */
  podsWithTLS: boolean;
  clusterDomain: string;
  now: Date;
}

const earliest = (dates: (Date | undefined)[]): string | undefined => {
  const times = dates.filter((d): d is Date => d !== undefined).map((d) => d.getTime());
  return times.length ? new Date(Math.min(...times)).toISOString() : undefined;
};

function notAfter(pem: string | undefined): Date | undefined {
  if (!pem) return undefined;
  try {
    return new X509Certificate(pem).validToDate;
  } catch {
    return undefined;
  }
}

/** The cluster's TLS as it is now; undefined for a cluster without spec.tls. */
export async function observeTLS(i: TLSObserveInput): Promise<TLSObservation | undefined> {
  const { spec, cluster } = i;
  if (!spec.tls) return undefined;
  const name = cluster.metadata.name!;
  const sides = tlsSides(spec);
  const users = await readUserSecrets(i, sides);
  const foreign: string[] = [];
  // A Secret of one of our names that is not ours is neither used nor replaced (tls/ownership.ts).
  const ours = (secretName: string): SecretContents | undefined => {
    const secret = i.cached(secretName);
    if (secret && secretOwner(secret, cluster) === 'foreign') foreign.push(foreignSecretProblem(secret, cluster));
    return secret && secretOwner(secret, cluster) === 'ours' ? secretContents(secret) : undefined;
  };
  const observedSecrets: ObservedTLSSecrets = {
    peerCA: ours(peerCASecretName(name)),
    clientCA: ours(clientCASecretName(name)),
    client: ours(clientTLSSecretName(name)),
    members: Object.fromEntries(i.podMembers.map((m) => [m, ours(memberTLSSecretName(m))])),
  };
  const managed = operatorManaged(sides);
  const toIssue = managed ? managedToIssue(i, observedSecrets) : { issue: [], problems: [] };
  if (managed) foreign.push(...(await foreignInTheWay(i, toIssue.issue)));
  const problems = [...users.problems, ...foreign, ...toIssue.problems];
  const caRotation = managed ? caRotationOf(cluster, observedSecrets, i.now) : undefined;
  const credentials = operatorCredentials(sides, observedSecrets, users.valid);
  return {
    observed: {
      issue: toIssue.issue,
      memberSecrets: i.memberSecrets,
      ...(problems.length > 0 ? { invalid: problems.join('; ') } : {}),
      ...(caRotation ? { caRotation } : {}),
    },
    ...(credentials ? { credentials } : {}),
    ...tlsStatusOf(i, sides, observedSecrets, users.valid),
    ...(users.warnings.length > 0 ? { expiring: users.warnings.join('; ') } : {}),
    peerScheme: peerScheme(spec),
    clientScheme: clientScheme(spec),
  };
}

/**
 * The cache holds only Secrets with the operator's labels, so one missing from it may still exist under the same
 * name without them: read each Secret about to be created, so that it is reported, not overwritten.
 */
async function foreignInTheWay(i: TLSObserveInput, issue: ObservedTLS['issue']): Promise<string[]> {
  const namespace = i.cluster.metadata.namespace!;
  const problems: string[] = [];
  for (const { name } of issue) {
    if (i.cached(name)) continue;
    const existing = await i.client.find(Secrets, { namespace, name });
    if (existing && secretOwner(existing, i.cluster) === 'foreign') problems.push(foreignSecretProblem(existing, i.cluster));
  }
  return problems;
}

type UserSecrets = Map<'peer' | 'client', SecretContents>;

/**
 * A user's Secrets: read as they are now (they are not in the cache, which holds only the operator's), and checked
 * the way etcd, its peers and the operator will use them. `valid` holds those that pass.
 */
async function readUserSecrets(i: TLSObserveInput, sides: ReturnType<typeof tlsSides>): Promise<{ valid: UserSecrets; problems: string[]; warnings: string[] }> {
  const name = i.cluster.metadata.name!;
  const namespace = i.cluster.metadata.namespace!;
  const valid: UserSecrets = new Map();
  const problems: string[] = [];
  const warnings: string[] = [];
  for (const side of ['peer', 'client'] as const) {
    const s: TLSSide | undefined = sides[side];
    if (s?.mode !== 'Secret') continue;
    const contents = secretContents(await i.client.find(Secrets, { namespace, name: s.secretName }));
    const where = `Secret ${s.secretName} (spec.tls.${side})`;
    if (!contents) {
      problems.push(`${where} does not exist in namespace ${namespace}`);
      continue;
    }
    const missing = Object.values(TLS_KEYS).filter((k) => !contents[k]);
    if (missing.length > 0) {
      problems.push(`${where} lacks ${missing.join(', ')}`);
      continue;
    }
    const check = checkUserCertificate(
      { ca: contents[TLS_KEYS.ca]!, cert: contents[TLS_KEYS.certificate]!, key: contents[TLS_KEYS.key]! },
      { side, cluster: name, namespace, clusterDomain: i.clusterDomain, now: i.now },
    );
    problems.push(...check.problems.map((p) => `${where}: ${p}`));
    warnings.push(...check.warnings.map((w) => `${where}: ${w}`));
    if (check.problems.length === 0) valid.set(side, contents);
  }
  return { valid, problems, warnings };
}

/** The operator-managed Secrets to issue now, or why a CA must not be: a new CA would cut off members that trust the old. */
function managedToIssue(i: TLSObserveInput, observedSecrets: ObservedTLSSecrets): { issue: ObservedTLS['issue']; problems: string[] } {
  const { cluster } = i;
  const name = cluster.metadata.name!;
  const plan = withRotation(
    tlsSecretsToIssue({ cluster: name, namespace: cluster.metadata.namespace!, clusterDomain: i.clusterDomain, members: i.podMembers }, observedSecrets, i.now),
    cluster,
    i.podMembers,
    (secretName) => i.cached(secretName)?.metadata.annotations?.[ROTATE_CERTIFICATES_ANNOTATION],
  );
  const cas = plan.issue.filter((s) => s.kind === 'peerCA' || s.kind === 'clientCA');
  // No member certificates and no pod made with TLS: nothing trusts a CA yet (a new cluster, or a plaintext one
  // turning TLS on in place), so a missing CA is issued. Otherwise a new CA would cut members off.
  const fresh = !i.podsWithTLS && i.memberSecrets.length === 0;
  if (cas.length > 0 && !(fresh && cas.every((s) => s.reason === 'Missing'))) {
    return {
      issue: [],
      problems: cas.map((s) => `the CA Secret ${s.name} is ${s.reason === 'Missing' ? 'missing' : 'unreadable'} while members hold certificates it signed: a new CA would cut every member off from the others (etcd loads its CAs only at start). Restore the Secret (from a copy), or create a new cluster from a backup (docs/tls.md)`),
    };
  }
  return { issue: plan.issue.map((s) => ({ name: s.name, reason: s.reason })), problems: [] };
}

/** The operator's own identity towards the members' client ports. */
function operatorCredentials(sides: ReturnType<typeof tlsSides>, observedSecrets: ObservedTLSSecrets, user: UserSecrets): ClientCredentials | undefined {
  if (sides.client?.mode === 'Operator' && observedSecrets.client) {
    const { [TLS_KEYS.ca]: ca, [TLS_KEYS.certificate]: cert, [TLS_KEYS.key]: key } = observedSecrets.client;
    return ca && cert && key ? { ca, cert, key } : undefined;
  }
  if (sides.client?.mode === 'Secret') {
    const c = user.get('client');
    if (c) return { ca: c[TLS_KEYS.ca]!, cert: c[TLS_KEYS.certificate]!, key: c[TLS_KEYS.key]! };
  }
  return undefined;
}

/** status.tls (each side's mode and when its certificates end) and the CA bundles members should trust now. */
function tlsStatusOf(i: TLSObserveInput, sides: ReturnType<typeof tlsSides>, observedSecrets: ObservedTLSSecrets, user: UserSecrets): { status: TlsStatus; caBundles: CABundles } {
  const name = i.cluster.metadata.name!;
  const memberNotAfter = (file: string): string | undefined => earliest(i.podMembers.map((m) => notAfter(observedSecrets.members[m]?.[file])));
  const sideStatus = (side: 'peer' | 'client'): NonNullable<TlsStatus['peer']> | undefined => {
    const s = sides[side];
    if (!s) return undefined;
    const at = s.mode === 'Secret' ? earliest([notAfter(user.get(side)?.[TLS_KEYS.certificate])]) : memberNotAfter(side === 'peer' ? MEMBER_TLS_FILES.peerCertificate : MEMBER_TLS_FILES.serverCertificate);
    return { mode: s.mode, ...(at ? { notAfter: at } : {}) };
  };
  const bundle = (side: 'peer' | 'client'): string | undefined => {
    const s = sides[side];
    if (!s) return undefined;
    const pem = s.mode === 'Secret' ? user.get(side)?.[TLS_KEYS.ca] : (side === 'peer' ? observedSecrets.peerCA : observedSecrets.clientCA)?.[TLS_KEYS.ca];
    return pem ? caBundleHash(pem) : undefined;
  };
  const peerBundle = bundle('peer');
  const clientBundle = bundle('client');
  const peer = sideStatus('peer');
  const clientSide = sideStatus('client');
  const clientSecret = sides.client?.mode === 'Secret' ? sides.client.secretName : sides.client ? clientTLSSecretName(name) : undefined;
  return {
    status: { ...(peer ? { peer } : {}), ...(clientSide ? { client: clientSide } : {}), ...(clientSecret ? { clientSecret } : {}) },
    caBundles: { ...(peerBundle ? { peer: peerBundle } : {}), ...(clientBundle ? { client: clientBundle } : {}) },
  };
}

/**
 * The Secret that holds the client identity of a cluster with client TLS (ca.crt, tls.crt, tls.key): the
 * operator's `<cluster>-client-tls`, or the user's spec.tls.client Secret. Backup Jobs mount it; undefined
 * without client TLS.
 */
export function clientIdentitySecret(spec: Pick<DefaultedSpec, 'tls'>, cluster: string): string | undefined {
  const side = tlsSides(spec).client;
  if (!side) return undefined;
  return side.mode === 'Secret' ? side.secretName : clientTLSSecretName(cluster);
}

/**
 * The operator's credentials for a cluster's client port, read from that Secret (the cache for its own, a GET for a
 * user's), unchecked: for callers that only dial (the backup reconciler); the cluster reconciler checks them.
 */
export async function clientCredentials(
  spec: Pick<DefaultedSpec, 'tls'>,
  cluster: string,
  namespace: string,
  cached: (name: string) => SecretObject | undefined,
  client: Pick<Client, 'find'>,
): Promise<ClientCredentials | undefined> {
  const name = clientIdentitySecret(spec, cluster);
  if (!name) return undefined;
  const side = tlsSides(spec).client!;
  const contents = secretContents(side.mode === 'Operator' ? cached(name) : await client.find(Secrets, { namespace, name }));
  const ca = contents?.[TLS_KEYS.ca];
  const cert = contents?.[TLS_KEYS.certificate];
  const key = contents?.[TLS_KEYS.key];
  return ca && cert && key ? { ca, cert, key } : undefined;
}

/** Members that have an operator-managed Secret in the cache, from its member label. */
export function membersWithSecrets(secrets: readonly KubeObject[], cluster: string): string[] {
  return secrets
    .flatMap((s) => {
      const member = s.metadata.labels?.[LABELS.member];
      return s.metadata.labels?.[LABELS.instance] === cluster && member && s.metadata.name === memberTLSSecretName(member) ? [member] : [];
    });
}

export interface TLSWriteContext {
  client: Client;
  cluster: EtcdCluster;
  clusterDomain: string;
  now: Date;
  signal: AbortSignal;
  /** Whether a missing CA may be issued: only while no member certificate and no pod made with TLS exists (see the header). */
  mayIssueCA: boolean;
}

/**
 * Issues what `members` (and the cluster-wide Secrets) need now, reading every Secret involved from the API
 * server rather than the cache: a Secret written by the previous reconcile may not be in the cache yet, and a
 * decision on a stale read would replace a certificate (or a CA) that was just made. CAs are created, never
 * replaced; leaf Secrets are replaced with their resourceVersion, so a concurrent write fails instead of being
 * lost. Returns the Secrets written, with why.
 */
export async function writeTLSSecrets(c: TLSWriteContext, members: string[]): Promise<{ name: string; reason: string }[]> {
  const name = c.cluster.metadata.name!;
  const namespace = c.cluster.metadata.namespace!;
  const secretNames = [peerCASecretName(name), clientCASecretName(name), clientTLSSecretName(name), ...members.map(memberTLSSecretName)];
  const objects = await readManagedSecrets(c.client, namespace, secretNames, clusterSecretOwner(c.cluster));
  const contents = (n: string): SecretContents | undefined => secretContents(objects.get(n));
  const observed: ObservedTLSSecrets = {
    peerCA: contents(peerCASecretName(name)),
    clientCA: contents(clientCASecretName(name)),
    client: contents(clientTLSSecretName(name)),
    members: Object.fromEntries(members.map((m) => [m, contents(memberTLSSecretName(m))])),
  };
  const subject: TLSSubject = { cluster: name, namespace, clusterDomain: c.clusterDomain, members };
  const plan: TLSIssuePlan = withRotation(tlsSecretsToIssue(subject, observed, c.now), c.cluster, members, (n) => objects.get(n)?.metadata.annotations?.[ROTATE_CERTIFICATES_ANNOTATION]);
  const cas = plan.issue.filter((s) => s.kind === 'peerCA' || s.kind === 'clientCA');
  if (cas.length > 0 && !(c.mayIssueCA && cas.every((s) => s.reason === 'Missing'))) {
    throw new TLSNotReadyError(`the CA Secret(s) ${cas.map((s) => `${s.name} (${s.reason})`).join(', ')} cannot be used, and a CA is issued only for a cluster without member certificates`);
  }
  if (plan.issue.length === 0) return [];
  const issued = await issueTLSSecrets(subject, observed, plan, c.now);
  const owner = ownerRef(c.cluster);
  const written: { name: string; reason: string }[] = [];
  // CAs first: a leaf is written only once the CA that signed it is stored.
  const ordered = [...plan.issue].sort((a, b) => Number(b.kind === 'peerCA' || b.kind === 'clientCA') - Number(a.kind === 'peerCA' || a.kind === 'clientCA'));
  for (const todo of ordered) {
    const data = issued.get(todo.name);
    if (!data) continue;
    const made: V1Secret = tlsSecret(name, namespace, todo.name, data, owner, todo.kind === 'member' ? todo.member : undefined);
    // A leaf records the rotation request it was issued under; a CA has nothing to record.
    const token = c.cluster.metadata.annotations?.[ROTATE_CERTIFICATES_ANNOTATION];
    const object: V1Secret = token !== undefined && todo.kind !== 'peerCA' && todo.kind !== 'clientCA' ? { ...made, metadata: { ...made.metadata, annotations: { [ROTATE_CERTIFICATES_ANNOTATION]: token } } } : made;
    // A CA is only ever created; another reconcile's create between the read and now stands, and is read next time.
    await writeIssuedSecret(c.client, object as Secret, objects.get(todo.name), { isCA: todo.kind === 'peerCA' || todo.kind === 'clientCA', fieldManager: FIELD_MANAGER, signal: c.signal });
    written.push({ name: todo.name, reason: todo.reason });
  }
  return written;
}

/**
 * The CA rotation to plan for, if any: one already under way (its phase is in the CA Secret's keys), else one
 * asked for by a new etcd.quorum.dev/rotate-ca value or due because the CA nears its end; peer before client.
 */
function caRotationOf(cluster: EtcdCluster, observed: ObservedTLSSecrets, now: Date): NonNullable<ObservedTLS['caRotation']> | undefined {
  const sides = [
    { ca: 'peer' as const, contents: observed.peerCA },
    { ca: 'client' as const, contents: observed.clientCA },
  ];
  for (const { ca, contents } of sides) {
    const phase = caRotationPhase(contents);
    if (phase === 'TrustNew') return { ca, phase, why: 'under way' };
    if (phase === 'Reissue') {
      const at = Date.parse(contents?.[CA_ROTATION_KEYS.rotatedAt] ?? '');
      return { ca, phase, why: 'under way', ...(Number.isNaN(at) ? {} : { rotatedAt: at }) };
    }
  }
  const token = cluster.metadata.annotations?.[ROTATE_CA_ANNOTATION];
  for (const { ca, contents } of sides) {
    const signing = contents?.[TLS_KEYS.certificate];
    if (!contents || !signing) continue;
    if (token !== undefined && contents[CA_ROTATION_KEYS.token] !== token) return { ca, phase: 'Start', why: `${ROTATE_CA_ANNOTATION} is ${token}` };
    let notAfter: Date;
    try {
      notAfter = new X509Certificate(signing).validToDate;
    } catch {
      continue;
    }
    if (needsRotation(signing, now)) return { ca, phase: 'Start', why: `the CA expires on ${notAfter.toISOString()}` };
  }
  return undefined;
}

/**
 * One step of a CA rotation, written to the CA Secret (read fresh; replaced with its resourceVersion, so a
 * concurrent write fails instead of being lost). A step already taken (the operator died after writing it) is
 * left as it is: the Secret's phase says what was done.
 */
export async function rotateCA(client: Pick<Client, 'find' | 'replace'>, cluster: EtcdCluster, ca: 'peer' | 'client', step: 'TrustNew' | 'Reissue' | 'DropOld', now: Date, signal: AbortSignal): Promise<boolean> {
  const name = cluster.metadata.name!;
  const namespace = cluster.metadata.namespace!;
  const secretName = ca === 'peer' ? peerCASecretName(name) : clientCASecretName(name);
  const existing = await client.find(Secrets, { namespace, name: secretName });
  const contents = secretContents(existing);
  if (!existing || !contents) throw new TLSNotReadyError(`the CA Secret ${secretName} is missing`);
  if (secretOwner(existing, cluster) === 'foreign') throw new ForeignSecretError(foreignSecretProblem(existing, cluster));
  const phase = caRotationPhase(contents);
  const before = { TrustNew: 'None', Reissue: 'TrustNew', DropOld: 'Reissue' } as const;
  if (phase !== before[step]) return false;
  const profile = ca === 'peer' ? peerCAProfile(name, namespace) : clientCAProfile(name, namespace);
  const next = await rotatedCAContents(contents, step, profile, now, step === 'TrustNew' ? cluster.metadata.annotations?.[ROTATE_CA_ANNOTATION] : undefined);
  const made = tlsSecret(name, namespace, secretName, next, ownerRef(cluster));
  await client.replace(Secrets, { ...made, metadata: { ...made.metadata, resourceVersion: existing.metadata.resourceVersion } } as KubeObject, { fieldManager: FIELD_MANAGER, signal });
  return true;
}

/**
 * The members whose listener on this side does not serve a certificate signed by `caPem` now, by a TLS handshake
 * with each (its pod IP, its host name as server name). The peer port asks for a certificate the operator does not
 * have: TLS 1.3 completes the handshake (and shows the server's certificate) before the server refuses it.
 */
export async function membersNotServedBy(pods: readonly KubeObject[], cluster: string, namespace: string, side: 'peer' | 'client', caPem: string, credentials: ClientCredentials | undefined): Promise<string[]> {
  const ca = new X509Certificate(caPem);
  const port = side === 'peer' ? PEER_PORT : CLIENT_PORT;
  const checks = pods.map(async (p): Promise<string | undefined> => {
    const member = p.metadata.labels?.[LABELS.member] ?? '';
    const ip = (p as { status?: { podIP?: string } }).status?.podIP;
    if (!ip || p.metadata.deletionTimestamp) return member;
    const raw = await new Promise<Buffer | undefined>((resolve) => {
      const socket = connect({
        host: ip, port, servername: memberHost(cluster, namespace, member), rejectUnauthorized: false, timeout: 3000,
        ...(side === 'client' && credentials ? { cert: credentials.cert, key: credentials.key } : {}),
      }, () => {
        const cert = socket.getPeerCertificate();
        socket.destroy();
        resolve(cert.raw);
      });
      socket.on('timeout', () => socket.destroy());
      socket.on('error', () => resolve(undefined));
      socket.on('close', () => resolve(undefined));
    });
    try {
      return raw && new X509Certificate(raw).verify(ca.publicKey) ? undefined : member;
    } catch {
      return member;
    }
  });
  return (await Promise.all(checks)).filter((m): m is string => m !== undefined).sort();
}

/**
 * `plan` plus the leaf Secrets not yet issued under the cluster's rotate-certificates value (those `plan` does not
 * issue already). Its CAs are left alone: rotating a CA takes rolling restarts, which this does not do.
 */
export function withRotation(plan: TLSIssuePlan, cluster: EtcdCluster, members: readonly string[], recorded: (secretName: string) => string | undefined): TLSIssuePlan {
  const token = cluster.metadata.annotations?.[ROTATE_CERTIFICATES_ANNOTATION];
  if (token === undefined) return plan;
  const name = cluster.metadata.name!;
  const leaves = [
    ...members.map((member) => ({ kind: 'member' as const, member, name: memberTLSSecretName(member) })),
    { kind: 'client' as const, name: clientTLSSecretName(name) },
  ];
  const extra = leaves.filter((l) => !plan.issue.some((i) => i.name === l.name) && recorded(l.name) !== token).map((l) => ({ ...l, reason: 'RotationRequested' as const }));
  return extra.length ? { ...plan, issue: [...plan.issue, ...extra] } : plan;
}

/**
 * The `<member>-tls` Secret of a member that is gone for good, if it is ours; deleted with its uid as precondition,
 * so a Secret that replaced it meanwhile is not. A foreign one is left, and reported by observeTLS while it matters.
 */
export async function deleteMemberSecret(client: Pick<Client, 'find' | 'delete'>, cluster: EtcdCluster, member: string, signal: AbortSignal): Promise<void> {
  const key = { namespace: cluster.metadata.namespace!, name: memberTLSSecretName(member) };
  const existing = await client.find(Secrets, key);
  if (!existing || secretOwner(existing, cluster) === 'foreign') return;
  await client.delete(Secrets, key, { signal, preconditions: { uid: existing.metadata.uid! } }).catch((err: unknown) => {
    if (!(err instanceof NotFoundError)) throw err;
  });
}
