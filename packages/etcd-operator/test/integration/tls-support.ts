// What the TLS files share (tls.test.ts, tls-ca-rotation.test.ts): a TLS cluster's spec, views of its pods, Secrets
// and events, what each listener serves, and the data checker over mutual TLS, for the environment each file sets up.
import { X509Certificate } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { connect, type PeerCertificate } from 'node:tls';
import { Pods, Secrets, Services, type Client } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import { memberHost } from '../../src/names.ts';
import type { EtcdTls } from '../../src/etcd/client.ts';
import { DataChecker } from '../../src/testing/data-checker.ts';
import { clientTLSSecretName, memberTLSSecretName } from '../../src/tls/secrets.ts';
import { eventually, type ClusterState } from './support.ts';

export const TLS_SPEC = { replicas: 3, tls: { peer: {}, client: {} } };

export interface PodObj {
  metadata: { name: string; uid: string; labels?: Record<string, string>; annotations?: Record<string, string>; deletionTimestamp?: string };
  status?: { podIP?: string; containerStatuses?: { name: string; restartCount: number }[] };
}

export interface CoreEvent {
  reason?: string;
  message?: string;
}

/** The views, for the environment `getEnv` returns once the file's before() has set it up; checkers started are pushed to `checkers`. */
export function tlsViews(getEnv: () => TestEnv, checkers: DataChecker[]) {
  const describe = (s: ClusterState): string => JSON.stringify({ conditions: s.cluster.status?.conditions?.map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`), tls: s.cluster.status?.tls, members: s.members }, null, 2);
  const pods = async (ns: string, name: string): Promise<PodObj[]> => ((await getEnv().client.list(Pods, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${name}` })).items as unknown as PodObj[]);
  async function events(ns: string, name: string): Promise<CoreEvent[]> {
    const out = await getEnv().kube.kubectl(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${name}`, '-o', 'json']);
    return (JSON.parse(out) as { items: CoreEvent[] }).items;
  }
  const restarts = (p: PodObj): number => p.status?.containerStatuses?.find((c) => c.name === 'etcd')?.restartCount ?? 0;

  async function secretData(client: Client, ns: string, name: string): Promise<Record<string, string>> {
    const s = await client.get(Secrets, { namespace: ns, name });
    return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
  }

  /** The client identity applications get: <cluster>-client-tls, with the client Service's name to verify the members by. */
  async function clientIdentity(ns: string, name: string): Promise<EtcdTls> {
    const data = await secretData(getEnv().client, ns, clientTLSSecretName(name));
    return { ca: data['ca.crt']!, cert: data['tls.crt']!, key: data['tls.key']!, servername: `${name}-client.${ns}.svc` };
  }

  async function serviceIP(ns: string, name: string): Promise<string> {
    const svc = (await getEnv().client.get(Services, { namespace: ns, name: `${name}-client` })) as unknown as { spec: { clusterIP: string } };
    return svc.spec.clusterIP;
  }

  /** The certificate a TLS listener serves, with the handshake's outcome (a refusal of our certificate, or none). */
  function served(host: string, port: number, options: { servername: string; ca: string; cert?: string; key?: string }): Promise<{ certificate?: PeerCertificate; error?: string }> {
    return new Promise((resolve) => {
      const socket = connect({ host, port, ...options, timeout: 5000 }, () => {
        const certificate = socket.getPeerCertificate();
        // TLS 1.3 sends the server's verdict on our certificate after the handshake: read once to hear it.
        socket.once('data', () => undefined);
        setTimeout(() => {
          socket.destroy();
          resolve({ certificate });
        }, 300);
      });
      socket.on('timeout', () => socket.destroy(new Error('timed out')));
      socket.on('error', (err: Error) => resolve({ error: err.message }));
    });
  }

  /** GET over TLS; resolves with the HTTP status, rejects with the TLS alert. */
  function httpsGet(options: { host: string; port: number; servername: string; ca: string; cert: string; key: string }, path: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest({ ...options, path, timeout: 5000 }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end();
    });
  }

  async function startChecker(ns: string, name: string): Promise<DataChecker> {
    // A client that retries (3 times, like the upgrade tests): a request fails only if every retry did.
    const checker = new DataChecker({ endpoints: [`https://${await serviceIP(ns, name)}:2379`], tls: await clientIdentity(ns, name), ratePerSecond: 20, retries: 3 });
    checkers.push(checker);
    checker.start();
    await eventually('the data checker writing over mutual TLS', () => checker.stats().acknowledged >= 20, { timeoutMs: 60_000 });
    return checker;
  }

  /** Each member's served certificate (fingerprint) on 2379 (with the client identity) and 2380 (with the member's own peer certificate). */
  async function servedCertificates(ns: string, name: string): Promise<Map<string, { client?: string; peer?: string; clientError?: string; peerError?: string }>> {
    const identity = await clientIdentity(ns, name);
    const out = new Map<string, { client?: string; peer?: string; clientError?: string; peerError?: string }>();
    for (const p of await pods(ns, name)) {
      if (!p.status?.podIP || p.metadata.deletionTimestamp) continue;
      const member = p.metadata.name;
      const own = await secretData(getEnv().client, ns, memberTLSSecretName(member));
      const servername = memberHost(name, ns, member);
      const client = await served(p.status.podIP, 2379, { servername, ca: identity.ca!, cert: identity.cert!, key: identity.key! });
      const peer = await served(p.status.podIP, 2380, { servername, ca: own['peer-ca.crt']!, cert: own['peer.crt']!, key: own['peer.key']! });
      out.set(member, {
        ...(client.certificate ? { client: client.certificate.fingerprint256 } : { clientError: client.error }),
        ...(peer.certificate ? { peer: peer.certificate.fingerprint256 } : { peerError: peer.error }),
      });
    }
    return out;
  }

  /** The certificates each member's Secret holds now (server.crt for 2379, peer.crt for 2380), by SHA-256 fingerprint as TLS reports it. */
  async function secretCertificates(ns: string, members: string[]): Promise<Map<string, { client: string; peer: string }>> {
    const out = new Map<string, { client: string; peer: string }>();
    for (const m of members) {
      const d = await secretData(getEnv().client, ns, memberTLSSecretName(m));
      out.set(m, { client: new X509Certificate(d['server.crt']!).fingerprint256, peer: new X509Certificate(d['peer.crt']!).fingerprint256 });
    }
    return out;
  }
  return { describe, pods, events, restarts, secretData, clientIdentity, serviceIP, served, httpsGet, startChecker, servedCertificates, secretCertificates };
}
