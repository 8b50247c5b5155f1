// The cluster's certificates: one CA signs the API server, every client of it, and the kubelets' serving
// certificates. openssl does the cryptography; keys are ECDSA P-256 (fast to make), the service-account
// signing key RSA (the API server's default algorithm).
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hostCommand } from '@quorum/images';
import { run } from '../exec.ts';
import { CLUSTER_DOMAIN, CONTROL_PLANE_IP, KUBERNETES_SERVICE_IP, type Topology } from './topology.ts';

const OPENSSL = hostCommand('openssl', 'openssl', 'cluster certificates');

/**
 * The common name of the client certificate the API server presents to admission webhooks (components.ts,
 * admission configuration). It is signed by a CA of its own, `webhook-client-ca.crt`, which signs nothing else:
 * a webhook that trusts only that CA is called by the API server and by no pod (LocalKube.webhookClientCA()).
 */
export const APISERVER_WEBHOOK_CLIENT_NAME = 'kube-apiserver-webhook-client';

/** The NetworkPolicy agent's user: its ClusterRole (addons.ts) lets it read what kube-router's controller watches. */
export const NETWORK_POLICY_USER = 'system:localkube:network-policy';

export interface CertPaths {
  cert: string;
  key: string;
}

export interface Pki {
  dir: string;
  ca: CertPaths;
  apiserver: CertPaths;
  /** Signs only apiserverWebhookClient; its certificate is what webhooks verify their caller against. */
  webhookClientCA: CertPaths;
  /** The API server's client certificate for admission webhooks (APISERVER_WEBHOOK_CLIENT_NAME). */
  apiserverWebhookClient: CertPaths;
  apiserverKubeletClient: CertPaths;
  admin: CertPaths;
  controllerManager: CertPaths;
  scheduler: CertPaths;
  kubeProxy: CertPaths;
  networkPolicy: CertPaths;
  nodeClients: Record<string, CertPaths>;
  nodeServing: Record<string, CertPaths>;
  serviceAccountKey: string;
  serviceAccountPub: string;
}

interface CertRequest {
  name: string;
  subject: string;
  usage: 'client' | 'server' | 'both';
  ips?: string[];
  dns?: string[];
}

async function ecKey(path: string): Promise<void> {
  await run(OPENSSL, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', path]);
}

async function signed(dir: string, ca: CertPaths, req: CertRequest): Promise<CertPaths> {
  const paths = { cert: join(dir, `${req.name}.crt`), key: join(dir, `${req.name}.key`) };
  const csr = join(dir, `${req.name}.csr`);
  const ext = join(dir, `${req.name}.ext`);
  const usage = { client: 'clientAuth', server: 'serverAuth', both: 'serverAuth,clientAuth' }[req.usage];
  const sans = [...(req.ips ?? []).map((ip) => `IP:${ip}`), ...(req.dns ?? []).map((d) => `DNS:${d}`)];
  await writeFile(
    ext,
    [
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      `extendedKeyUsage=${usage}`,
      ...(sans.length ? [`subjectAltName=${sans.join(',')}`] : []),
      '',
    ].join('\n'),
  );
  await ecKey(paths.key);
  await run(OPENSSL, ['req', '-new', '-key', paths.key, '-subj', req.subject, '-out', csr]);
  await run(OPENSSL, [
    'x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-set_serial', `0x${randomBytes(8).toString('hex')}`,
    '-days', '3650', '-sha256', '-extfile', ext, '-out', paths.cert,
  ]);
  await rm(csr);
  await rm(ext);
  return paths;
}

async function selfSignedCA(dir: string, name: string, commonName: string): Promise<CertPaths> {
  const ca = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  await ecKey(ca.key);
  await run(OPENSSL, [
    'req', '-x509', '-new', '-key', ca.key, '-subj', `/CN=${commonName}`, '-days', '3650', '-sha256',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,digitalSignature,keyCertSign,cRLSign', '-out', ca.cert,
  ]);
  return ca;
}

export async function createPki(topo: Topology): Promise<Pki> {
  const dir = join(topo.stateDir, 'pki');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const [ca, webhookClientCA] = await Promise.all([selfSignedCA(dir, 'ca', 'localkube-ca'), selfSignedCA(dir, 'webhook-client-ca', 'localkube-webhook-client-ca')]);
  const apiserverWebhookClient = await signed(dir, webhookClientCA, { name: 'apiserver-webhook-client', subject: `/CN=${APISERVER_WEBHOOK_CLIENT_NAME}`, usage: 'client' });
  const sign = (req: CertRequest): Promise<CertPaths> => signed(dir, ca, req);
  const serviceAccountKey = join(dir, 'sa.key');
  const serviceAccountPub = join(dir, 'sa.pub');
  await run(OPENSSL, ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', serviceAccountKey]);
  await run(OPENSSL, ['pkey', '-in', serviceAccountKey, '-pubout', '-out', serviceAccountPub]);

  const svcNames = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', `kubernetes.default.svc.${CLUSTER_DOMAIN}`, 'localhost'];
  const [apiserver, apiserverKubeletClient, admin, controllerManager, scheduler, kubeProxy, networkPolicy] = await Promise.all([
    sign({ name: 'apiserver', subject: '/CN=kube-apiserver', usage: 'server', ips: [CONTROL_PLANE_IP, KUBERNETES_SERVICE_IP, '127.0.0.1'], dns: svcNames }),
    sign({ name: 'apiserver-kubelet-client', subject: '/O=system:masters/CN=kube-apiserver-kubelet-client', usage: 'client' }),
    sign({ name: 'admin', subject: '/O=system:masters/CN=localkube-admin', usage: 'client' }),
    sign({ name: 'controller-manager', subject: '/CN=system:kube-controller-manager', usage: 'client' }),
    sign({ name: 'scheduler', subject: '/CN=system:kube-scheduler', usage: 'client' }),
    sign({ name: 'kube-proxy', subject: '/CN=system:kube-proxy', usage: 'client' }),
    sign({ name: 'network-policy', subject: `/CN=${NETWORK_POLICY_USER}`, usage: 'client' }),
  ]);
  const nodeClients: Record<string, CertPaths> = {};
  const nodeServing: Record<string, CertPaths> = {};
  await Promise.all(
    topo.nodes.map(async (n) => {
      nodeClients[n.name] = await sign({ name: `${n.name}-client`, subject: `/O=system:nodes/CN=system:node:${n.name}`, usage: 'client' });
      nodeServing[n.name] = await sign({ name: `${n.name}-serving`, subject: `/CN=${n.name}`, usage: 'server', ips: [n.ip], dns: [n.name] });
    }),
  );
  return { dir, ca, apiserver, webhookClientCA, apiserverWebhookClient, apiserverKubeletClient, admin, controllerManager, scheduler, kubeProxy, networkPolicy, nodeClients, nodeServing, serviceAccountKey, serviceAccountPub };
}

export interface Credentials {
  cert: string;
  key: string;
}

export async function readCredentials(paths: CertPaths): Promise<Credentials> {
  return { cert: await readFile(paths.cert, 'utf8'), key: await readFile(paths.key, 'utf8') };
}
