// The webhook's serving certificate: one CA and certificate for every replica, kept in a Secret (the
// first replica to start creates it), written to local files for the server, and the CA patched into the
// webhook configurations so the API server trusts it.
import { ensureServingCertificate, patchCaBundle, type Client, type PatchCaBundleOptions } from '@quorum/runtime';

export const CERT_SECRET = 'quorum-webhook-certs';
export const VALIDATING_WEBHOOK = 'quorum-etcd-validating';
export const MUTATING_WEBHOOK = 'quorum-etcd-defaulting';

/** Returns the CA, which `keepCaBundle` keeps published. */
export async function ensureWebhookCertificates(client: Client, namespace: string, service: string, certDir: string, options: PatchCaBundleOptions = {}): Promise<string> {
  const ca = await ensureServingCertificate(client, { namespace, secretName: CERT_SECRET, service, certDir, labels: { 'app.kubernetes.io/name': 'quorum' } });
  await publishCaBundle(client, ca, options);
  return ca;
}

/** Sets the CA on both webhook configurations; reads only when it is already there. */
export function publishCaBundle(client: Client, caCert: string, options: PatchCaBundleOptions = {}): Promise<void> {
  return patchCaBundle(client, { validating: [VALIDATING_WEBHOOK], mutating: [MUTATING_WEBHOOK] }, caCert, options);
}
