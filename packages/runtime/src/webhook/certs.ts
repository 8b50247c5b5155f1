// Serving certificates for webhooks, made in process (operator images carry no openssl) by the issuer of x509.ts.
// A CA plus a leaf it signs (rather than one self-signed leaf) so the CA can go in a caBundle while the
// leaf is rotated underneath it.
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createCertificateAuthority, issueLeafCertificate } from './x509.ts';

export interface CertificateOptions {
  /** DNS subject alternative names, e.g. `my-webhook.my-ns.svc`. */
  dnsNames?: string[];
  /** IP subject alternative names (v4 or v6). */
  ipAddresses?: string[];
  /** Default: the first DNS name, else the first IP address (at most 64 characters are kept). */
  commonName?: string;
  /** Default 365; both certificates get the same validity. */
  validityDays?: number;
  /** When they are issued (valid from 5 minutes before it); default now. */
  now?: Date;
}

/** PEM strings; keys are PKCS#8. */
export interface GeneratedCertificates {
  caCert: string;
  caKey: string;
  cert: string;
  key: string;
}

/** A new CA (common name `<commonName> CA`) and a server certificate it signs for the names. */
export async function generateCertificates(options: CertificateOptions): Promise<GeneratedCertificates> {
  const dnsNames = options.dnsNames ?? [];
  const ipAddresses = options.ipAddresses ?? [];
  const commonName = options.commonName ?? dnsNames[0] ?? ipAddresses[0];
  if (!commonName) throw new Error('a certificate needs at least one DNS name or IP address');
  const validityDays = options.validityDays ?? 365;
  const now = options.now ?? new Date();
  // X.509 bounds a common name at 64 characters; a long Service name must not make the certificate unissuable.
  const ca = await createCertificateAuthority({ commonName: `${commonName.slice(0, 61)} CA` }, validityDays, now);
  const leaf = await issueLeafCertificate({ commonName: commonName.slice(0, 64), usage: 'server', dnsNames, ipAddresses, validityDays }, ca, now);
  return { caCert: ca.certificatePem, caKey: ca.privateKeyPem, cert: leaf.certificatePem, key: leaf.privateKeyPem };
}

/**
 * Writes `ca.crt`, `tls.crt` and `tls.key` (the names a kubernetes.io/tls Secret mounts as). Each file is
 * written beside its target and renamed over it, so a server watching the directory never reads half a file.
 * A file that already holds its content is left alone: callers write again on every check of their Secret,
 * and a watching server would otherwise be woken for nothing each time.
 */
export async function writeCertificates(dir: string, certs: GeneratedCertificates): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeAtomically(join(dir, 'ca.crt'), certs.caCert, 0o644);
  // Key before certificate: a reader that sees the new certificate then also finds its key.
  await writeAtomically(join(dir, 'tls.key'), certs.key, 0o600);
  await writeAtomically(join(dir, 'tls.crt'), certs.cert, 0o644);
}

async function writeAtomically(path: string, content: string, mode: number): Promise<void> {
  if ((await readFile(path, 'utf8').catch(() => undefined)) === content) return;
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, content, { mode });
  // writeFile's mode is masked by the umask and ignored for an existing file; a key must end up 0600.
  await chmod(temporary, mode);
  await rename(temporary, path);
}
