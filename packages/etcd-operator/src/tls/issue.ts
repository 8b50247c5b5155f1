// What the operator issues for a cluster's TLS, and which user certificates it refuses. Pure: these functions
// decide, the kit's X.509 issuer makes the certificates (and its needsRotation says when to issue them again),
// and the Secrets are written elsewhere.
//
// Two CAs per cluster, never one: etcd's peer listener with --peer-client-cert-auth admits any certificate that its
// --peer-trusted-ca-file signed, so a client certificate from a shared CA could join the raft transport as a peer.
// The peer CA signs member peer certificates only; the client CA signs member server certificates and client ones.
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { EXPIRY_WARNING_DAYS } from '../api/etcdcluster.ts';
import { clientServiceName, memberHost } from '../names.ts';
import { caProfile, type CertificateRequest } from '@quorum/kit';
import { OID, oneLineName, pemBlocks } from './x509.ts';

export const DEFAULT_CLUSTER_DOMAIN = 'cluster.local';
export const CA_VALIDITY_DAYS = 3650;
export const LEAF_VALIDITY_DAYS = 365;
// Declared with the API, whose spec.tls descriptions state them.
export { EXPIRY_WARNING_DAYS };

const DAY_MS = 86_400_000;

export interface SubjectAltNames {
  dnsNames: string[];
  ipAddresses: string[];
}

/** A member's stable host names: `<member>.<cluster>.<ns>.svc` (what peer URLs use) and its fully qualified form. */
export function memberHostNames(member: string, cluster: string, namespace: string, clusterDomain: string): string[] {
  const host = memberHost(cluster, namespace, member);
  return [host, `${host}.${normalizeDomain(clusterDomain)}`];
}

/** Every name a client may reach the client Service by, from the same namespace to fully qualified. */
export function clientServiceHostNames(cluster: string, namespace: string, clusterDomain: string): string[] {
  const service = clientServiceName(cluster);
  return [service, `${service}.${namespace}`, `${service}.${namespace}.svc`, `${service}.${namespace}.svc.${normalizeDomain(clusterDomain)}`];
}

function normalizeDomain(clusterDomain: string): string {
  // CLUSTER_DOMAIN may be written as an absolute name ("cluster.local."); a certificate's DNS names are never absolute.
  return clusterDomain.replace(/\.$/, '');
}

/**
 * The peer certificate's names. Pod IPs are never in a SAN: they change on every restart. Peers dial each other by
 * member host name, and etcd runs with the peer client-SAN check skipped (the peer CA alone vouches for a member).
 */
export function peerCertificateSANs(member: string, cluster: string, namespace: string, clusterDomain: string): SubjectAltNames {
  return { dnsNames: memberHostNames(member, cluster, namespace, clusterDomain), ipAddresses: [] };
}

/**
 * The server certificate's names: the member (the operator dials the pod IP with the member host as TLS server
 * name), the client Service, and loopback for tools run inside the pod.
 */
export function serverCertificateSANs(member: string, cluster: string, namespace: string, clusterDomain: string): SubjectAltNames {
  return {
    dnsNames: [...memberHostNames(member, cluster, namespace, clusterDomain), ...clientServiceHostNames(cluster, namespace, clusterDomain), 'localhost'],
    ipAddresses: ['127.0.0.1', '::1'],
  };
}

/** `<cluster>-peer-ca`: signs the members' peer certificates and nothing else. */
export function peerCAProfile(cluster: string, namespace: string): CertificateRequest {
  return caProfile(`${cluster}-peer-ca`, namespace, CA_VALIDITY_DAYS);
}

/** `<cluster>-client-ca`: signs the members' server certificates and the client certificates. */
export function clientCAProfile(cluster: string, namespace: string): CertificateRequest {
  return caProfile(`${cluster}-client-ca`, namespace, CA_VALIDITY_DAYS);
}

/** A member's leaf certificate with these names: both of a member's certificates are served and presented. */
function memberLeafProfile(member: string, names: SubjectAltNames): CertificateRequest {
  return { subject: { commonName: member }, isCA: false, extendedKeyUsage: ['serverAuth', 'clientAuth'], ...names, validityDays: LEAF_VALIDITY_DAYS };
}

/** A member's peer certificate: serverAuth for its listener, clientAuth for dialing the other members. */
export function peerCertificateProfile(member: string, cluster: string, namespace: string, clusterDomain: string): CertificateRequest {
  return memberLeafProfile(member, peerCertificateSANs(member, cluster, namespace, clusterDomain));
}

/**
 * A member's server certificate, for the client port. It carries clientAuth as well as serverAuth: etcd's gRPC
 * gateway (the HTTP/JSON API on the same port, which the operator's client uses) dials etcd's own gRPC server
 * presenting this certificate as its client certificate, and with --client-cert-auth Go refuses it without clientAuth
 * (etcd-io/etcd#9785, #16590; kubeadm issues its etcd server certificates the same way).
 */
export function serverCertificateProfile(member: string, cluster: string, namespace: string, clusterDomain: string): CertificateRequest {
  return memberLeafProfile(member, serverCertificateSANs(member, cluster, namespace, clusterDomain));
}

/** `<cluster>-client`: the identity of applications and of the operator itself. etcd's auth, when on, takes the CN as the user name. */
export function clientCertificateProfile(cluster: string): CertificateRequest {
  return {
    subject: { commonName: clientServiceName(cluster) },
    isCA: false,
    extendedKeyUsage: ['clientAuth'],
    dnsNames: [],
    ipAddresses: [],
    validityDays: LEAF_VALIDITY_DAYS,
  };
}

/** The contents of a user's TLS Secret. */
export interface UserCertificateSecret {
  /** `ca.crt`: one CA certificate, or a bundle (old and new during a CA rotation). */
  ca: string;
  /** `tls.crt`: the certificate, optionally followed by intermediate CA certificates. */
  cert: string;
  /** `tls.key`: the certificate's private key, unencrypted. */
  key: string;
}

export interface UserCertificateExpectations {
  /** Which of spec.tls the Secret is for; the client side must also cover the client Service's names. */
  side: 'peer' | 'client';
  cluster: string;
  namespace: string;
  clusterDomain: string;
  now: Date;
}

export interface CertificateCheck {
  /** Reasons the Secret cannot be used: the pods are not created or changed (Degraded TLSSecretInvalid). */
  problems: string[];
  /** Usable now, but not for long: the user should rotate (Degraded CertificateExpiring). */
  warnings: string[];
}

function quotedSubject(certificate: X509Certificate): string {
  return `"${oneLineName(certificate.subject)}"`;
}

/** Whether `issuer` signed `certificate`: names (and key identifiers) chain and the signature holds. */
function signedBy(certificate: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return certificate.checkIssued(issuer) && certificate.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

/** Each PEM certificate of a file, in order; undefined where one does not parse (and a problem says so). */
function parseBlocks(text: string, file: string, problems: string[]): (X509Certificate | undefined)[] {
  const blocks = pemBlocks(text);
  if (blocks.length === 0) problems.push(`${file} holds no PEM certificate`);
  return blocks.map((block, index) => {
    try {
      return new X509Certificate(block);
    } catch (err) {
      const which = blocks.length > 1 ? `certificate ${index + 1} of ${file}` : file;
      problems.push(`${which} does not parse: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  });
}

const parsedOnly = (certificates: (X509Certificate | undefined)[]): X509Certificate[] =>
  certificates.filter((certificate): certificate is X509Certificate => certificate !== undefined);

/** The warning for a certificate that ends within EXPIRY_WARNING_DAYS (and has not ended yet). */
function expiryWarning(what: string, certificate: X509Certificate, now: Date): string | undefined {
  const left = certificate.validToDate.getTime() - now.getTime();
  if (left < 0 || left >= EXPIRY_WARNING_DAYS * DAY_MS) return undefined;
  return `${what} ${quotedSubject(certificate)} expires on ${certificate.validToDate.toISOString()}, in ${Math.floor(left / DAY_MS)} days: update the Secret before then`;
}

/**
 * Checks a user-supplied Secret (`ca.crt`, `tls.crt`, `tls.key`) the way etcd and its clients will use it: one
 * Secret serves every member, present and future, so the certificate must cover any member host name (a wildcard
 * `*.<cluster>.<ns>.svc`); etcd presents it as a server and as a client (to peers, and the gRPC gateway to its own
 * server), and the operator presents it as its client identity, so it needs both serverAuth and clientAuth.
 * Messages name the Secret's keys and never quote key material.
 */
export function checkUserCertificate(secret: UserCertificateSecret, expect: UserCertificateExpectations): CertificateCheck {
  const problems: string[] = [];
  const warnings: string[] = [];
  const { now } = expect;

  const authorities = parsedOnly(parseBlocks(secret.ca, 'ca.crt', problems));
  // The first certificate of tls.crt is the one etcd serves; any after it are intermediates.
  const [leaf, ...rest] = parseBlocks(secret.cert, 'tls.crt', problems);
  const intermediates = parsedOnly(rest);

  let key: KeyObject | undefined;
  try {
    key = createPrivateKey(secret.key);
  } catch (err) {
    problems.push(`tls.key does not parse as an unencrypted PEM private key: ${err instanceof Error ? err.message : String(err)}`);
  }

  if (leaf && key && !leaf.checkPrivateKey(key)) problems.push(`tls.key is not the private key of tls.crt ${quotedSubject(leaf)}`);

  if (leaf) {
    const anchor = chainAnchor(leaf, authorities, intermediates, problems);

    problems.push(...hostNameProblems(leaf, expect));

    // No extendedKeyUsage extension means any usage, to Go as to OpenSSL; anyExtendedKeyUsage likewise.
    // Typed string[], but undefined when the certificate has no extendedKeyUsage extension.
    const usages: readonly string[] | undefined = leaf.keyUsage;
    if (usages && !usages.includes('2.5.29.37.0')) {
      for (const [name, oid, why] of [
        ['serverAuth', OID.serverAuth, 'etcd serves with it'],
        ['clientAuth', OID.clientAuth, 'etcd dials its peers and its own gRPC server with it, and the operator uses it as its client identity'],
      ] as const) {
        if (!usages.includes(oid)) problems.push(`tls.crt ${quotedSubject(leaf)} lacks the extended key usage ${name} (${oid}): ${why}`);
      }
    }

    if (now.getTime() >= leaf.validToDate.getTime()) problems.push(`tls.crt ${quotedSubject(leaf)} expired on ${leaf.validToDate.toISOString()}`);
    else if (now.getTime() < leaf.validFromDate.getTime()) problems.push(`tls.crt ${quotedSubject(leaf)} is not valid before ${leaf.validFromDate.toISOString()}`);
    const leafWarning = expiryWarning('tls.crt', leaf, now);
    if (leafWarning) warnings.push(leafWarning);

    if (anchor) {
      if (now.getTime() >= anchor.validToDate.getTime()) problems.push(`ca.crt's ${quotedSubject(anchor)}, which signed tls.crt, expired on ${anchor.validToDate.toISOString()}`);
      const anchorWarning = expiryWarning("ca.crt's", anchor, now);
      if (anchorWarning) warnings.push(anchorWarning);
    }
  }

  return { problems, warnings };
}

/**
 * The ca.crt certificate tls.crt's chain ends at: certificates in tls.crt after the first are intermediates, walked up
 * through until a ca.crt certificate signs. What is wrong on the way is added to `problems`.
 */
function chainAnchor(leaf: X509Certificate, authorities: X509Certificate[], intermediates: X509Certificate[], problems: string[]): X509Certificate | undefined {
  let current = leaf;
  let anchor: X509Certificate | undefined;
  const remaining = [...intermediates];
  for (;;) {
    anchor = authorities.find((authority) => signedBy(current, authority));
    if (anchor) break;
    const nextIndex = remaining.findIndex((candidate) => signedBy(current, candidate));
    if (nextIndex < 0) break;
    const [next] = remaining.splice(nextIndex, 1);
    if (!next!.ca) problems.push(`tls.crt's intermediate ${quotedSubject(next!)} is not a CA (basicConstraints CA:FALSE)`);
    current = next!;
  }
  if (!anchor) {
    const held = authorities.map(quotedSubject).join(', ') || 'nothing usable';
    problems.push(`tls.crt ${quotedSubject(leaf)} is not signed by ca.crt: its chain ends at issuer "${oneLineName(current.issuer)}", and ca.crt holds ${held}`);
  } else if (!anchor.ca) {
    problems.push(`ca.crt's ${quotedSubject(anchor)}, which signed tls.crt, is not a CA (basicConstraints CA:FALSE)`);
  }
  return anchor;
}

/** The host names tls.crt must cover and does not: every member's (a wildcard), and for the client side the client Service's. */
function hostNameProblems(leaf: X509Certificate, expect: UserCertificateExpectations): string[] {
  const problems: string[] = [];
  // Go ignores the CN of a certificate with SANs and since 1.15 of one without: check the SANs only, as etcd will.
  const sans = leaf.subjectAltName ?? 'none';
  // A label no member is ever named: only a wildcard covers it, and a wildcard covers every future member.
  const memberProbe = memberHost(expect.cluster, expect.namespace, 'any-member');
  if (leaf.checkHost(memberProbe, { subject: 'never' }) === undefined) {
    problems.push(
      `tls.crt ${quotedSubject(leaf)} does not cover every member host name: it needs the DNS name *.${expect.cluster}.${expect.namespace}.svc, because ` +
        `members are added under new names (its subjectAltName: ${sans})`,
    );
  }
  if (expect.side === 'client') {
    const missing = clientServiceHostNames(expect.cluster, expect.namespace, expect.clusterDomain).filter(
      (name) => leaf.checkHost(name, { subject: 'never' }) === undefined,
    );
    if (missing.length > 0) problems.push(`tls.crt ${quotedSubject(leaf)} does not cover the client Service name(s) ${missing.join(', ')} (its subjectAltName: ${sans})`);
  }
  return problems;
}
