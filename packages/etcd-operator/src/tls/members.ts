// TLS as a member pod and the operator's own client use it: which Secret each side's files come from, where
// they are mounted, etcd's flags, and the scheme and credentials of each member's client endpoint. Pure: the
// Secrets are read and written in cluster-secrets.ts, for the step handlers (cluster/act/).
//
// A new cluster with TLS starts with https peer and client URLs. A plaintext cluster that gets spec.tls moves
// there member by member, through stages (TLSStage, desiredTLSStage; docs/tls.md "Plaintext to TLS in place").
import { createHash } from 'node:crypto';
import type { V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import type { EtcdTls } from '../etcd/client.ts';
import { MEMBER_TLS_FILES, memberTLSSecretName, TLS_KEYS } from './secrets.ts';
import { CLIENT_PORT, LABELS, memberHost, PEER_PORT, type Scheme } from '../names.ts';
import type { DefaultedSpec } from '../api/defaults.ts';

/** The etcd container's mounts of its TLS Secrets (paths inside the pod), each Secret mounted whole and read-only. */
const TLS_MOUNTS = {
  /** A member's operator-managed Secret `<member>-tls` (peer and server files side by side). */
  tls: { name: 'tls', mountPath: '/etc/etcd/tls', readOnly: true },
  /** A user's peer Secret (ca.crt, tls.crt, tls.key). */
  'peer-tls': { name: 'peer-tls', mountPath: '/etc/etcd/peer-tls', readOnly: true },
  /** A user's client Secret. */
  'client-tls': { name: 'client-tls', mountPath: '/etc/etcd/client-tls', readOnly: true },
} as const satisfies Record<string, V1VolumeMount>;
export const MEMBER_TLS_DIR = TLS_MOUNTS.tls.mountPath;
export const PEER_SECRET_DIR = TLS_MOUNTS['peer-tls'].mountPath;
export const CLIENT_SECRET_DIR = TLS_MOUNTS['client-tls'].mountPath;

/**
 * A member pod's annotation: the client scheme its etcd serves ("on" for https only). The operator dials each
 * member by what its pod says it serves, not by the spec, so the address it uses is always the pod's own.
 */
export const CLIENT_TLS_ANNOTATION = 'etcd.quorum.dev/client-tls';

/**
 * A member pod's annotation: its peer TLS stage (`trust` or `on`; absent: off, or a pod made before stages were
 * recorded, whose member list peer URL says which).
 */
export const PEER_TLS_ANNOTATION = 'etcd.quorum.dev/peer-tls';

/**
 * Peer TLS of one member: `off`; `trust`: it has the peer certificate, key and CA and presents them when it dials
 * an https peer, but still listens on http because its peer URL in etcd's member list is http; `on`: https.
 * etcd's dialer trusts the peer CA only when started with it, so every member goes through `trust` before the
 * first one switches: a plaintext member could not reach a switched one.
 */
export type PeerStage = 'off' | 'trust' | 'on';
/** Client TLS of one member: `off`; `both`: http and https on port 2379 (etcd splits them on one port); `on`: https only. */
export type ClientStage = 'off' | 'both' | 'on';
export interface TLSStage {
  peer: PeerStage;
  client: ClientStage;
}

/** Where a cluster with this spec ends: what a new cluster starts with. */
export function finalTLSStage(spec: Pick<DefaultedSpec, 'tls'>): TLSStage {
  return { peer: spec.tls?.peer ? 'on' : 'off', client: spec.tls?.client ? 'on' : 'off' };
}

/**
 * The stage a member's pod should be made at now: a pure function of the spec, the member's peer URL scheme in
 * etcd's member list (undefined for a member not in it yet, which starts at the end), the client stage its own pod
 * serves, and the client stages the live pods serve.
 * - Peer: `trust` while its peer URL is http, `on` once etcd's member list says https (the operator changes the
 *   URL with a member update, then restarts the member: etcd's order for advertised peer URLs).
 * - Client: `both` while any pod serves plain http only, so that clients keep working while they move to https;
 *   `on` once every pod serves https. A member whose peer URL is still http waits at `both`, so that its last
 *   restart (for the peer switch) also drops http: two rolling passes in all, not three.
 */
export function desiredTLSStage(spec: Pick<DefaultedSpec, 'tls'>, member: { peerScheme?: Scheme; servedClient?: ClientStage }, servedClientStages: readonly ClientStage[]): TLSStage {
  const peer: PeerStage = !spec.tls?.peer ? 'off' : member.peerScheme === 'http' ? 'trust' : 'on';
  // A member that serves https only already never goes back to http (peer TLS added to a client-TLS cluster).
  const client: ClientStage =
    !spec.tls?.client ? 'off' : member.servedClient === 'on' ? 'on' : servedClientStages.includes('off') || peer === 'trust' ? 'both' : 'on';
  return { peer, client };
}

/** The client stage a pod serves, by its annotation (absent: plain http). */
export function servedClientStage(pod: { metadata: { annotations?: Record<string, string> } }): ClientStage {
  const v = pod.metadata.annotations?.[CLIENT_TLS_ANNOTATION];
  return v === 'on' || v === 'both' ? v : 'off';
}

/**
 * Every member's stage (desiredTLSStage) from what is observed: the live pods' served client stages, and each
 * member's peer URL scheme (from etcd's member list, or, without a quorum, from the peer URLs status last recorded).
 */
export function memberTLSStages(
  spec: Pick<DefaultedSpec, 'tls'>,
  pods: readonly { member: string; servedClient: ClientStage; deleting: boolean }[],
  peerSchemes: ReadonlyMap<string, Scheme>,
): (member: string) => TLSStage {
  const live = pods.filter((p) => !p.deleting);
  const served = live.map((p) => p.servedClient);
  return (member) => {
    const own = live.find((p) => p.member === member)?.servedClient;
    const scheme = peerSchemes.get(member);
    return desiredTLSStage(spec, { ...(scheme ? { peerScheme: scheme } : {}), ...(own ? { servedClient: own } : {}) }, served);
  };
}

/**
 * The peer scheme of a member added now: https only when every member already has the peer certificates (its
 * pod is at `trust` or `on`), so that each can dial it; otherwise http, and it is switched with the rest.
 */
export function newMemberPeerScheme(spec: Pick<DefaultedSpec, 'tls'>, podPeerStages: readonly PeerStage[]): Scheme {
  return spec.tls?.peer && podPeerStages.every((s) => s !== 'off') ? 'https' : 'http';
}

/** The peer stage a pod was made at: its annotation, or, for a pod made before stages were recorded, its member's peer URL scheme. */
export function servedPeerStage(pod: { metadata: { annotations?: Record<string, string> } }, memberPeerScheme: Scheme | undefined): PeerStage {
  const v = pod.metadata.annotations?.[PEER_TLS_ANNOTATION];
  return v === 'trust' || v === 'on' ? v : memberPeerScheme === 'https' ? 'on' : 'off';
}

/** The scheme of a URL (`https://…` or anything else: http). */
export const schemeOf = (url: string | undefined): Scheme => (url?.startsWith('https:') ? 'https' : 'http');

export type TLSSide = { mode: 'Operator' } | { mode: 'Secret'; secretName: string };
export interface TLSSides {
  peer?: TLSSide;
  client?: TLSSide;
}

const sideOf = (s: { secretName?: string } | undefined): TLSSide | undefined =>
  s === undefined ? undefined : s.secretName ? { mode: 'Secret', secretName: s.secretName } : { mode: 'Operator' };

export function tlsSides(spec: Pick<DefaultedSpec, 'tls'>): TLSSides {
  const peer = sideOf(spec.tls?.peer);
  const client = sideOf(spec.tls?.client);
  return { ...(peer ? { peer } : {}), ...(client ? { client } : {}) };
}

/** Whether the operator issues any of the cluster's certificates (both CAs, `<member>-tls`, `<cluster>-client-tls`). */
export function operatorManaged(sides: TLSSides): boolean {
  return sides.peer?.mode === 'Operator' || sides.client?.mode === 'Operator';
}

/** The peer scheme a new cluster with this spec starts with. */
export const peerScheme = (spec: Pick<DefaultedSpec, 'tls'>): Scheme => (spec.tls?.peer ? 'https' : 'http');
/** The client scheme a new cluster with this spec starts with. */
export const clientScheme = (spec: Pick<DefaultedSpec, 'tls'>): Scheme => (spec.tls?.client ? 'https' : 'http');

/**
 * The flag that skips etcd's check of a *dialing* peer's certificate names against its source address: pod IPs
 * change on every restart and DNS can be stale for a cache TTL, so a restarted member could be refused by its
 * peers. The peer CA (or the user's) vouches for a member; dialers still verify the server's name. etcd 3.6
 * renamed the flag and deprecated the experimental one; 3.4 and 3.5 know only the experimental one.
 */
export function peerSkipSANFlag(version: string): string {
  const minor = Number(version.split('.')[1]);
  return minor >= 6 ? '--peer-skip-client-san-verification' : '--experimental-peer-skip-client-san-verification';
}

export interface MemberTLSRender {
  volumes: V1Volume[];
  mounts: V1VolumeMount[];
  /** Replaces the plaintext listen/advertise flags where TLS is on, and adds the certificate flags. */
  listenPeer: string;
  listenClient: string;
  /** The schemes the member advertises: its peer URL (a new member's) and its client URL. */
  advertisePeer: Scheme;
  advertiseClient: Scheme;
  args: string[];
  /** The pod's stage annotations. */
  annotations: Record<string, string>;
}

/**
 * A member pod's TLS: Secret volumes mounted whole (never with subPath: the kubelet does not update subPath
 * mounts, and renewed certificates must reach the running etcd, which reads them on every handshake), and etcd's
 * flags. Files are 0440: readable by the pod's group (fsGroup), which etcd runs in.
 */
export function memberTLS(spec: Pick<DefaultedSpec, 'tls' | 'version'>, member: string, stage: TLSStage = finalTLSStage(spec)): MemberTLSRender {
  const sides = tlsSides(spec);
  const volumes: V1Volume[] = [];
  const mounts: V1VolumeMount[] = [];
  const args: string[] = [];
  const mount = (name: keyof typeof TLS_MOUNTS, secretName: string): void => {
    if (volumes.some((v) => v.name === name)) return;
    volumes.push({ name, secret: { secretName, defaultMode: 0o440 } });
    mounts.push({ ...TLS_MOUNTS[name] });
  };
  const files = (side: TLSSide, kind: 'peer' | 'client'): { cert: string; key: string; ca: string } => {
    if (side.mode === 'Operator') {
      mount('tls', memberTLSSecretName(member));
      const f = MEMBER_TLS_FILES;
      return kind === 'peer'
        ? { cert: `${MEMBER_TLS_DIR}/${f.peerCertificate}`, key: `${MEMBER_TLS_DIR}/${f.peerKey}`, ca: `${MEMBER_TLS_DIR}/${f.peerCA}` }
        : { cert: `${MEMBER_TLS_DIR}/${f.serverCertificate}`, key: `${MEMBER_TLS_DIR}/${f.serverKey}`, ca: `${MEMBER_TLS_DIR}/${f.clientCA}` };
    }
    const dir = kind === 'peer' ? PEER_SECRET_DIR : CLIENT_SECRET_DIR;
    mount(`${kind}-tls`, side.secretName);
    return { cert: `${dir}/${TLS_KEYS.certificate}`, key: `${dir}/${TLS_KEYS.key}`, ca: `${dir}/${TLS_KEYS.ca}` };
  };
  // --client-cert-auth applies to the https side only while both are served (etcd says it ignores it for http).
  if (sides.client && stage.client !== 'off') {
    const f = files(sides.client, 'client');
    args.push(`--cert-file=${f.cert}`, `--key-file=${f.key}`, `--trusted-ca-file=${f.ca}`, '--client-cert-auth=true');
  }
  // At `trust` etcd ignores the certificate for its http listener, but its dialer uses it towards https peers.
  if (sides.peer && stage.peer !== 'off') {
    const f = files(sides.peer, 'peer');
    args.push(`--peer-cert-file=${f.cert}`, `--peer-key-file=${f.key}`, `--peer-trusted-ca-file=${f.ca}`, '--peer-client-cert-auth=true', peerSkipSANFlag(spec.version));
  }
  const listenClient =
    stage.client === 'both' ? `http://0.0.0.0:${CLIENT_PORT},https://0.0.0.0:${CLIENT_PORT}` : `${stage.client === 'on' ? 'https' : 'http'}://0.0.0.0:${CLIENT_PORT}`;
  return {
    volumes,
    mounts,
    listenPeer: `${stage.peer === 'on' ? 'https' : 'http'}://0.0.0.0:${PEER_PORT}`,
    listenClient,
    advertisePeer: stage.peer === 'on' ? 'https' : 'http',
    advertiseClient: stage.client === 'off' ? 'http' : 'https',
    args,
    annotations: {
      ...(stage.client !== 'off' ? { [CLIENT_TLS_ANNOTATION]: stage.client } : {}),
      ...(stage.peer !== 'off' ? { [PEER_TLS_ANNOTATION]: stage.peer } : {}),
    },
  };
}

/**
 * The CA bundles members trust, each as a short hash of its PEM text (caBundleHash): etcd loads its trusted CAs only
 * at start, so a new bundle (a user's ca.crt with a second CA added) must restart members, one at a time.
 */
export interface CABundles {
  peer?: string;
  client?: string;
}

export function caBundleHash(pem: string): string {
  return createHash('sha256').update(pem.trim()).digest('hex').slice(0, 12);
}

/**
 * The TLS part of a member pod's template fingerprint: spec.tls and the CA bundles, never the leaf certificates
 * (etcd reads those on every handshake, so renewing one needs no restart). Present only for clusters with TLS, so
 * others keep their hash.
 */
export function tlsFingerprint(spec: Pick<DefaultedSpec, 'tls'>, ca: CABundles = {}, stage: TLSStage = finalTLSStage(spec)): Record<string, string> {
  if (!spec.tls) return {};
  // The stage counts only on the way: pods at the final stage keep the hash they had before stages existed.
  const final = finalTLSStage(spec);
  const transitional = stage.peer !== final.peer || stage.client !== final.client ? { stage } : {};
  return { tls: createHash('sha256').update(JSON.stringify({ tls: spec.tls, peerCA: ca.peer ?? null, clientCA: ca.client ?? null, ...transitional })).digest('hex').slice(0, 12) };
}

/** The certificate and key the operator presents to members, and the CA bundle it trusts them by. */
export interface ClientCredentials {
  ca: string;
  cert: string;
  key: string;
}

/** How the operator reaches one member's client port. */
export interface MemberEndpoint {
  url: string;
  /** Set for https: the credentials, and the member's host name as TLS server name (its pod IP is in no SAN). */
  tls?: EtcdTls;
}

interface PodLike {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string>; deletionTimestamp?: string };
  status?: { podIP?: string };
}

/**
 * A member pod's client endpoint, by the scheme the pod says it serves (CLIENT_TLS_ANNOTATION). Every dial of a
 * member's client port goes through here. Without credentials for an https member the endpoint is still https,
 * without a client certificate: it fails its handshake, which reads as "no answer", never as "gone".
 */
export function clientEndpoint(pod: PodLike, cluster: string, namespace: string, credentials: ClientCredentials | undefined): MemberEndpoint | undefined {
  const ip = pod.status?.podIP;
  if (!ip) return undefined;
  const host = ip.includes(':') ? `[${ip}]` : ip;
  if (pod.metadata.annotations?.[CLIENT_TLS_ANNOTATION] !== 'on') return { url: `http://${host}:${CLIENT_PORT}` };
  const member = pod.metadata.labels?.[LABELS.member] ?? '';
  return {
    url: `https://${host}:${CLIENT_PORT}`,
    tls: { ...(credentials ? { ca: credentials.ca, cert: credentials.cert, key: credentials.key } : {}), servername: memberHost(cluster, namespace, member) },
  };
}

/**
 * etcdctl's flags for a client inside a member pod, where the pod's own Secret is mounted: the member's server
 * certificate carries clientAuth (etcd's gateway presents it to etcd's own gRPC server), so it is a valid client
 * identity there; a user's client Secret is the client identity by definition. Empty without client TLS.
 */
export function inPodEtcdctlFlags(spec: Pick<DefaultedSpec, 'tls'>): string[] {
  const side = tlsSides(spec).client;
  if (!side) return [];
  if (side.mode === 'Operator') {
    const f = MEMBER_TLS_FILES;
    return [`--cacert=${MEMBER_TLS_DIR}/${f.clientCA}`, `--cert=${MEMBER_TLS_DIR}/${f.serverCertificate}`, `--key=${MEMBER_TLS_DIR}/${f.serverKey}`];
  }
  return [`--cacert=${CLIENT_SECRET_DIR}/${TLS_KEYS.ca}`, `--cert=${CLIENT_SECRET_DIR}/${TLS_KEYS.certificate}`, `--key=${CLIENT_SECRET_DIR}/${TLS_KEYS.key}`];
}
