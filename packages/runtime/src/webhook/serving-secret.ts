// A webhook's serving certificate shared by every replica of its server: one CA and certificate kept in a
// Secret (the first process to start creates it, the others read it), written to local files for the
// server (WebhookServer reloads them). Every replica must serve a certificate of the one CA that
// patchCaBundle publishes: each making its own would leave all but the last publisher distrusted.
import type { Client } from '../client/client.ts';
import { AlreadyExistsError } from '../client/errors.ts';
import { Secrets } from '../client/resources.ts';
import { generateCertificates, writeCertificates, type GeneratedCertificates } from './certs.ts';

export interface ServingCertificateOptions {
  /** The namespace of the Secret and of the Service the webhook configuration names. */
  namespace: string;
  /** The Secret holding `ca.crt`, `tls.crt` and `tls.key`. */
  secretName: string;
  /** The Service: its in-cluster names are the certificate's. */
  service: string;
  /** Where the server reads `tls.crt` and `tls.key` (writeCertificates). */
  certDir: string;
  /** The Secret's labels, when this process creates it. */
  labels?: Record<string, string>;
}

/**
 * Reads the serving certificate from its Secret, or makes it and stores it there, and writes it to
 * `certDir`. Returns the CA (PEM) for patchCaBundle. A Secret that exists without all three keys is never
 * overwritten (other replicas may serve what it holds): the create fails as AlreadyExists and this throws.
 */
export async function ensureServingCertificate(client: Pick<Client, 'find' | 'create'>, options: ServingCertificateOptions): Promise<string> {
  const { namespace, secretName, service } = options;
  let certs = await readServingSecret(client, namespace, secretName);
  if (!certs) {
    const generated = await generateCertificates({ dnsNames: [`${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`], commonName: `${service}.${namespace}.svc`, validityDays: 3650 });
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    try {
      await client.create(Secrets, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: secretName, namespace, ...(options.labels ? { labels: options.labels } : {}) },
        type: 'Opaque',
        data: { 'ca.crt': b64(generated.caCert), 'tls.crt': b64(generated.cert), 'tls.key': b64(generated.key) },
      });
      certs = generated;
    } catch (err) {
      // Another process made it first: use its certificate, which the CA it publishes names.
      if (!(err instanceof AlreadyExistsError)) throw err;
      certs = await readServingSecret(client, namespace, secretName);
    }
  }
  if (!certs) throw new Error(`webhook certificates: Secret ${namespace}/${secretName} has no ca.crt, tls.crt and tls.key`);
  await writeCertificates(options.certDir, certs);
  return certs.caCert;
}

/** The CA key is not stored: nothing signs with it after the first process. */
async function readServingSecret(client: Pick<Client, 'find'>, namespace: string, name: string): Promise<GeneratedCertificates | undefined> {
  const d = (await client.find(Secrets, { namespace, name }))?.data;
  if (!d?.['ca.crt'] || !d['tls.crt'] || !d['tls.key']) return undefined;
  const text = (k: string): string => Buffer.from(d[k]!, 'base64').toString('utf8');
  return { caCert: text('ca.crt'), caKey: '', cert: text('tls.crt'), key: text('tls.key') };
}
