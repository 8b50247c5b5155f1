// Self-signed serving certificates for webhooks, made in process: operator images carry no openssl.
// A CA plus a leaf it signs (rather than one self-signed leaf) so the CA can go in a caBundle while the
// leaf is rotated underneath it.
import { KeyObject, X509Certificate as NodeX509Certificate, type webcrypto } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type * as X509 from '@peculiar/x509';

export interface CertificateOptions {
  /** DNS subject alternative names, e.g. `my-webhook.my-ns.svc`. */
  dnsNames?: string[];
  /** IP subject alternative names (v4 or v6). */
  ipAddresses?: string[];
  /** Default: the first DNS name, else the first IP address. */
  commonName?: string;
  /** Default 365; both certificates get the same validity. */
  validityDays?: number;
}

/** PEM strings; keys are PKCS#8. */
export interface GeneratedCertificates {
  caCert: string;
  caKey: string;
  cert: string;
  key: string;
}

const ECDSA_P256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
/** Tolerates clocks that run a little behind ours (the API server's, a peer's). */
const BACKDATE_MS = 5 * 60_000;

let x509Module: Promise<typeof X509> | undefined;

// Loaded on first use: @peculiar/x509 needs a global Reflect metadata polyfill, which processes that never
// generate certificates should not have to carry. The polyfill must be evaluated before the library.
function loadX509(): Promise<typeof X509> {
  x509Module ??= import('reflect-metadata').then(() => import('@peculiar/x509'));
  return x509Module;
}

export async function generateCertificates(options: CertificateOptions): Promise<GeneratedCertificates> {
  const dnsNames = options.dnsNames ?? [];
  const ipAddresses = options.ipAddresses ?? [];
  for (const ip of ipAddresses) if (!isIP(ip)) throw new Error(`not an IP address: ${ip}`);
  const commonName = options.commonName ?? dnsNames[0] ?? ipAddresses[0];
  if (!commonName) throw new Error('a certificate needs at least one DNS name or IP address');

  const x509 = await loadX509();
  const webcrypto = globalThis.crypto;
  const notBefore = new Date(Date.now() - BACKDATE_MS);
  const notAfter = new Date(Date.now() + (options.validityDays ?? 365) * 86_400_000);

  const caKeys = await webcrypto.subtle.generateKey(ECDSA_P256, true, ['sign', 'verify']);
  const caCert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name: [{ CN: [`${commonName} CA`] }],
      keys: caKeys,
      notBefore,
      notAfter,
      signingAlgorithm: ECDSA_P256,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
        await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey, false, webcrypto),
      ],
    },
    webcrypto,
  );

  const keys = await webcrypto.subtle.generateKey(ECDSA_P256, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.create(
    {
      subject: [{ CN: [commonName] }],
      issuer: caCert.subject,
      publicKey: keys.publicKey,
      signingKey: caKeys.privateKey,
      notBefore,
      notAfter,
      signingAlgorithm: ECDSA_P256,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
        new x509.SubjectAlternativeNameExtension([...dnsNames.map((value) => ({ type: 'dns' as const, value })), ...ipAddresses.map((value) => ({ type: 'ip' as const, value }))], false),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, webcrypto),
        await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey, false, webcrypto),
      ],
    },
    webcrypto,
  );

  const result = { caCert: caCert.toString('pem'), caKey: pkcs8Pem(caKeys.privateKey), cert: cert.toString('pem'), key: pkcs8Pem(keys.privateKey) };
  // Cheap self-check with Node's own parser, so a library regression fails here rather than in a TLS handshake.
  if (!new NodeX509Certificate(result.cert).verify(new NodeX509Certificate(result.caCert).publicKey)) throw new Error('generated certificate does not verify against its CA');
  return result;
}

function pkcs8Pem(key: webcrypto.CryptoKey): string {
  return KeyObject.from(key).export({ format: 'pem', type: 'pkcs8' }).toString();
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
