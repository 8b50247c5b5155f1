// The webhook's serving certificate: one CA and certificate for every replica, kept in a Secret (the
// first replica to start creates it), written to local files for the server, and the CA patched into the
// webhook configurations so the API server trusts it.
import { AlreadyExistsError, Secrets, generateCertificates, patchCaBundle, writeCertificates, type Client, type GeneratedCertificates, type PatchCaBundleOptions } from '@quorum/runtime';

export const CERT_SECRET = 'quorum-webhook-certs';
export const VALIDATING_WEBHOOK = 'quorum-etcd-validating';
export const MUTATING_WEBHOOK = 'quorum-etcd-defaulting';

type SecretObject = { metadata: { name: string; namespace: string }; type?: string; data?: Record<string, string> };

/** Returns the CA, which `keepCaBundle` keeps published. */
export async function ensureWebhookCertificates(client: Client, namespace: string, service: string, certDir: string, options: PatchCaBundleOptions = {}): Promise<string> {
  let certs = await readSecret(client, namespace);
  if (!certs) {
    const generated = await generateCertificates({ dnsNames: [`${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`], commonName: `${service}.${namespace}.svc`, validityDays: 3650 });
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    try {
      await client.create(Secrets, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: CERT_SECRET, namespace, labels: { 'app.kubernetes.io/name': 'quorum' } },
        type: 'Opaque',
        data: { 'ca.crt': b64(generated.caCert), 'tls.crt': b64(generated.cert), 'tls.key': b64(generated.key) },
      });
      certs = generated;
    } catch (err) {
      if (!(err instanceof AlreadyExistsError)) throw err;
      certs = await readSecret(client, namespace);
    }
  }
  if (!certs) throw new Error(`webhook certificates: Secret ${namespace}/${CERT_SECRET} unreadable`);
  await writeCertificates(certDir, certs);
  await publishCaBundle(client, certs.caCert, options);
  return certs.caCert;
}

/** Sets the CA on both webhook configurations; reads only when it is already there. */
export function publishCaBundle(client: Client, caCert: string, options: PatchCaBundleOptions = {}): Promise<void> {
  return patchCaBundle(client, { validating: [VALIDATING_WEBHOOK], mutating: [MUTATING_WEBHOOK] }, caCert, options);
}

async function readSecret(client: Client, namespace: string): Promise<GeneratedCertificates | undefined> {
  const secret = (await client.find(Secrets, { namespace, name: CERT_SECRET })) as SecretObject | undefined;
  const d = secret?.data;
  if (!d?.['ca.crt'] || !d['tls.crt'] || !d['tls.key']) return undefined;
  const text = (k: string): string => Buffer.from(d[k]!, 'base64').toString('utf8');
  return { caCert: text('ca.crt'), caKey: '', cert: text('tls.crt'), key: text('tls.key') };
}
