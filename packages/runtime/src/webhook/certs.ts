// Serving certificates for webhooks, made by the issuer of x509.ts (operator images carry no openssl). A CA
// plus a leaf it signs (rather than one self-signed leaf) so the CA can go in a caBundle while the leaf is
// rotated underneath it.
//
// Issued in a short-lived child process: @peculiar/x509 and its Reflect metadata polyfill are about 6.6 MiB of
// RSS once loaded and used (the built runtime, measured), which an operator would otherwise keep for its whole
// life to issue one pair at its first start (issue 24). A worker thread does not do: the memory its isolate
// used stays in the process's allocator after it exits (15 MiB more than never issuing, measured). The child,
// about 150 ms once, returns its memory whole; the PEM strings are all that come back.
import { spawn } from 'node:child_process';
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

/** A new CA (common name `<commonName> CA`) and a server certificate it signs for the names, issued in a child process. */
export async function generateCertificates(options: CertificateOptions): Promise<GeneratedCertificates> {
  commonNameOf(options); // a request without names fails here, before a process is started for it
  const reply = JSON.parse(await inChildProcess(ISSUER_PROGRAM, JSON.stringify({ module: import.meta.url, options }))) as { certs?: GeneratedCertificates; error?: string };
  if (reply.error !== undefined) throw new Error(reply.error);
  return reply.certs!;
}

/** generateCertificates in this process: what the child runs (it imports this module and calls this). */
export async function generateCertificatesHere(options: CertificateOptions): Promise<GeneratedCertificates> {
  const commonName = commonNameOf(options);
  const validityDays = options.validityDays ?? 365;
  const now = options.now ?? new Date();
  // X.509 bounds a common name at 64 characters; a long Service name must not make the certificate unissuable.
  const ca = await createCertificateAuthority({ commonName: `${commonName.slice(0, 61)} CA` }, validityDays, now);
  const leaf = await issueLeafCertificate({ commonName: commonName.slice(0, 64), usage: 'server', dnsNames: options.dnsNames ?? [], ipAddresses: options.ipAddresses ?? [], validityDays }, ca, now);
  return { caCert: ca.certificatePem, caKey: ca.privateKeyPem, cert: leaf.certificatePem, key: leaf.privateKeyPem };
}

function commonNameOf(options: CertificateOptions): string {
  const commonName = options.commonName ?? options.dnsNames?.[0] ?? options.ipAddresses?.[0];
  if (!commonName) throw new Error('a certificate needs at least one DNS name or IP address');
  return commonName;
}

// The child's program, given on its command line so that it needs no file of its own beside this module in the
// sources and in the built dist/. It imports this very module (the .ts the repository runs or the .js an image
// runs, with the process's execArgv: its --conditions too), reads the options as JSON on stdin and writes the
// PEMs or the error's message as JSON on stdout.
const ISSUER_PROGRAM = `
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { module, options } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
if (options.now !== undefined) options.now = new Date(options.now);
const { generateCertificatesHere } = await import(module);
const reply = await generateCertificatesHere(options).then((certs) => ({ certs }), (err) => ({ error: err instanceof Error ? err.message : String(err) }));
process.stdout.write(JSON.stringify(reply));
`;

/** Runs `program` (an ES module) in a new node process with `input` on its stdin; resolves with its stdout once it exits 0. */
function inChildProcess(program: string, input: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const args = [...nodeFlags(process.execArgv), '--input-type=module', '--eval', program];
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else reject(new Error(`the certificate issuer's process exited with code ${code}: ${Buffer.concat(err).toString('utf8').trim()}`));
    });
    child.stdin.end(input);
  });
}

/** The process's node flags without the program it was given inline (`-e`, `--print`) or its input type. */
export function nodeFlags(execArgv: readonly string[]): string[] {
  const flags: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i]!;
    if (['-e', '--eval', '-p', '--print', '--input-type'].includes(arg)) i++; // and its value
    else if (!/^--(eval|print|input-type)=/.test(arg)) flags.push(arg);
  }
  return flags;
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
