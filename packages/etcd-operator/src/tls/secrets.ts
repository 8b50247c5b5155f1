// The Secrets that hold an operator-managed cluster's certificates: their names and keys, which of them must be
// issued again (pure: tlsSecretsToIssue), their new contents (issueTLSSecrets, which makes keys), and the
// Secret objects themselves. Nothing here writes to the API server: cluster-secrets.ts does, for the reconciler.
//
//   <cluster>-peer-ca     kubernetes.io/tls  ca.crt, tls.crt, tls.key    signs member peer certificates only
//   <cluster>-client-ca   kubernetes.io/tls  ca.crt, tls.crt, tls.key    signs member server and client certificates
//   <member>-tls          Opaque             peer.crt, peer.key, peer-ca.crt, server.crt, server.key, client-ca.crt
//   <cluster>-client-tls  kubernetes.io/tls  ca.crt, tls.crt, tls.key    for applications and the operator itself
//
// A CA is rotated without downtime in three steps recorded in the CA Secret itself (caRotationPhase), because
// etcd loads its trusted CAs only at start: TrustNew (a new CA beside the old one in every bundle: members roll),
// Reissue (leaves signed by the new CA: read live), DropOld (the old CA leaves the bundles: members roll again).
import type { V1Secret } from '@kubernetes/client-node';
import type { OwnerReference } from '@quorum/runtime';
import { clusterLabels, memberLabels } from '../names.ts';
import {
  bundleProblem,
  issueCertificate,
  leafProblem,
  loadCA,
  needsRotation,
  TLS_KEYS,
  tlsSecretObject,
  type CertificateAuthority,
  type IssueReason,
  type SecretContents,
} from '@quorum/kit';
import { clientCAProfile, clientCertificateProfile, peerCAProfile, peerCertificateProfile, serverCertificateProfile } from './issue.ts';

// The kit's generic parts, where the etcd code has always taken them: a CA rotation's keys, its phase and the
// contents of each step are the kit's (tls/ca-rotation.ts), shared with the Redis operator.
export { CA_ROTATION_KEYS, caRotationPhase, pemCertificates, rotatedCAContents, type CARotationPhase } from '@quorum/kit';
export { TLS_KEYS, type IssueReason, type SecretContents };

/** The files of a member's Secret, as etcd's flags name them under the mount. */
export const MEMBER_TLS_FILES = {
  peerCertificate: 'peer.crt',
  peerKey: 'peer.key',
  peerCA: 'peer-ca.crt',
  serverCertificate: 'server.crt',
  serverKey: 'server.key',
  clientCA: 'client-ca.crt',
} as const;

export const peerCASecretName = (cluster: string): string => `${cluster}-peer-ca`;
export const clientCASecretName = (cluster: string): string => `${cluster}-client-ca`;
export const clientTLSSecretName = (cluster: string): string => `${cluster}-client-tls`;
export const memberTLSSecretName = (member: string): string => `${member}-tls`;

export interface ObservedTLSSecrets {
  peerCA?: SecretContents;
  clientCA?: SecretContents;
  client?: SecretContents;
  /** By member name; a member without its Secret is absent or undefined. */
  members: Readonly<Record<string, SecretContents | undefined>>;
}

export interface TLSSubject {
  cluster: string;
  namespace: string;
  clusterDomain: string;
  /** The members that must have certificates: every member the cluster has or is about to create. */
  members: readonly string[];
}

export type TLSSecretToIssue =
  | { kind: 'peerCA' | 'clientCA' | 'client'; name: string; reason: IssueReason }
  | { kind: 'member'; member: string; name: string; reason: IssueReason };

export interface TLSIssuePlan {
  issue: TLSSecretToIssue[];
  /** CAs with less than a third of their validity left: the operator rotates them (a rotation starts for each). */
  expiringCAs: { kind: 'peerCA' | 'clientCA'; name: string; notAfter: Date }[];
}

/** Which Secrets must be issued (again), and why. Pure but for parsing certificates. */
export function tlsSecretsToIssue(subject: TLSSubject, observed: ObservedTLSSecrets, now: Date): TLSIssuePlan {
  const { cluster, namespace, clusterDomain } = subject;
  const issue: TLSSecretToIssue[] = [];
  const expiringCAs: TLSIssuePlan['expiringCAs'] = [];

  const ca = (kind: 'peerCA' | 'clientCA', name: string, contents: SecretContents | undefined): CertificateAuthority | undefined => {
    const loaded = loadCA(contents);
    if (typeof loaded === 'string') {
      issue.push({ kind, name, reason: loaded });
      return undefined;
    }
    if (needsRotation(loaded.certificate, now)) expiringCAs.push({ kind, name, notAfter: loaded.certificate.validToDate });
    return loaded;
  };
  const peerCA = ca('peerCA', peerCASecretName(cluster), observed.peerCA);
  const clientCA = ca('clientCA', clientCASecretName(cluster), observed.clientCA);
  // What every holder must trust: the CA Secret's bundle (the signing CA, and during a rotation the other one).
  const peerBundle = peerCA ? observed.peerCA?.[TLS_KEYS.ca] : undefined;
  const clientBundle = clientCA ? observed.clientCA?.[TLS_KEYS.ca] : undefined;

  for (const member of subject.members) {
    const contents = observed.members[member];
    const name = memberTLSSecretName(member);
    const reason =
      leafProblem(contents, MEMBER_TLS_FILES.peerCertificate, MEMBER_TLS_FILES.peerKey, peerCA, peerCertificateProfile(member, cluster, namespace, clusterDomain), now) ??
      leafProblem(contents, MEMBER_TLS_FILES.serverCertificate, MEMBER_TLS_FILES.serverKey, clientCA, serverCertificateProfile(member, cluster, namespace, clusterDomain), now) ??
      bundleProblem(contents, MEMBER_TLS_FILES.peerCA, peerBundle) ??
      bundleProblem(contents, MEMBER_TLS_FILES.clientCA, clientBundle);
    if (reason) issue.push({ kind: 'member', member, name, reason });
  }
  const clientReason =
    leafProblem(observed.client, TLS_KEYS.certificate, TLS_KEYS.key, clientCA, clientCertificateProfile(cluster), now) ?? bundleProblem(observed.client, TLS_KEYS.ca, clientBundle);
  if (clientReason) issue.push({ kind: 'client', name: clientTLSSecretName(cluster), reason: clientReason });
  return { issue, expiringCAs };
}

/** New contents for each Secret in `plan.issue`, by Secret name. Makes keys: not pure. */
export async function issueTLSSecrets(subject: TLSSubject, observed: ObservedTLSSecrets, plan: TLSIssuePlan, now: Date): Promise<Map<string, SecretContents>> {
  const { cluster, namespace, clusterDomain } = subject;
  const out = new Map<string, SecretContents>();
  const authority = async (kind: 'peerCA' | 'clientCA', current: SecretContents | undefined): Promise<CertificateAuthority> => {
    const todo = plan.issue.find((i) => i.kind === kind);
    if (!todo) {
      const loaded = loadCA(current);
      if (typeof loaded === 'string') throw new Error(`the ${kind === 'peerCA' ? 'peer' : 'client'} CA of ${cluster} is ${loaded}, but the plan does not issue it`);
      return loaded;
    }
    const issued = await issueCertificate(kind === 'peerCA' ? peerCAProfile(cluster, namespace) : clientCAProfile(cluster, namespace), now);
    out.set(todo.name, { [TLS_KEYS.ca]: issued.certificatePem, [TLS_KEYS.certificate]: issued.certificatePem, [TLS_KEYS.key]: issued.privateKeyPem });
    return { certificate: issued.certificate, privateKey: issued.privateKey };
  };
  const peerCA = await authority('peerCA', observed.peerCA);
  const clientCA = await authority('clientCA', observed.clientCA);
  // Holders get the CA Secret's bundle (during a rotation, both CAs); a CA issued just now is its own bundle.
  const bundle = (kind: 'peerCA' | 'clientCA', ca: CertificateAuthority, current: SecretContents | undefined): string =>
    (plan.issue.some((i) => i.kind === kind) ? undefined : current?.[TLS_KEYS.ca]) ?? ca.certificate.toString();
  const peerBundle = bundle('peerCA', peerCA, observed.peerCA);
  const clientBundle = bundle('clientCA', clientCA, observed.clientCA);
  for (const todo of plan.issue) {
    if (todo.kind === 'member') {
      const peer = await issueCertificate(peerCertificateProfile(todo.member, cluster, namespace, clusterDomain), now, peerCA);
      const server = await issueCertificate(serverCertificateProfile(todo.member, cluster, namespace, clusterDomain), now, clientCA);
      out.set(todo.name, {
        [MEMBER_TLS_FILES.peerCertificate]: peer.certificatePem,
        [MEMBER_TLS_FILES.peerKey]: peer.privateKeyPem,
        [MEMBER_TLS_FILES.peerCA]: peerBundle,
        [MEMBER_TLS_FILES.serverCertificate]: server.certificatePem,
        [MEMBER_TLS_FILES.serverKey]: server.privateKeyPem,
        [MEMBER_TLS_FILES.clientCA]: clientBundle,
      });
    } else if (todo.kind === 'client') {
      const client = await issueCertificate(clientCertificateProfile(cluster), now, clientCA);
      out.set(todo.name, { [TLS_KEYS.ca]: clientBundle, [TLS_KEYS.certificate]: client.certificatePem, [TLS_KEYS.key]: client.privateKeyPem });
    }
  }
  return out;
}

/** The Secret object for `name`, owned by the cluster (deleted with it), labelled as the operator's. */
export function tlsSecret(cluster: string, namespace: string, name: string, contents: SecretContents, owner: OwnerReference, member?: string): V1Secret {
  return tlsSecretObject(name, namespace, contents, member ? memberLabels(cluster, member) : clusterLabels(cluster), owner) as V1Secret;
}
