// What operator-managed TLS reads in certificates that the X.509 issuer (which makes them) does not cover: the
// PEM blocks of a bundle, an X509Certificate's name on one line for messages, the OIDs of the two extended key
// usages a user's certificate is checked for (X509Certificate.keyUsage lists them by OID), and a bundle's identity.
import { X509Certificate } from 'node:crypto';

export const OID = {
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

/** X509Certificate's subject or issuer ("O=x\nCN=y") on one line, for messages. */
export function oneLineName(name: string): string {
  return name.replaceAll('\n', ', ');
}

/** The PEM blocks with this label in a text, e.g. each certificate of a CA bundle. */
export function pemBlocks(text: string, label = 'CERTIFICATE'): string[] {
  const pattern = new RegExp(`-----BEGIN ${label}-----[\\s\\S]*?-----END ${label}-----`, 'g');
  return text.match(pattern) ?? [];
}

/** The certificates of a PEM bundle, in order, each ending with a newline. */
export function pemCertificates(bundle: string): string[] {
  return pemBlocks(bundle).map((b) => `${b}\n`);
}

/** The fingerprints of a bundle's certificates, sorted (a bundle's identity, whatever its order or spacing). */
export function bundleFingerprints(bundle: string): string[] {
  return pemCertificates(bundle).map((pem) => new X509Certificate(pem).fingerprint256).sort();
}
