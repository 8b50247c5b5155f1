// Where a request's credentials come from, kept fresh: a static token, a token file re-read as it rotates (the
// in-cluster ServiceAccount's projected token, kubeconfig `tokenFile`), or an exec credential plugin run again
// when what it gave expires. Client certificates ride on the TLS connection instead (see config.ts).
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import type { ExecConfig, KubeconfigCluster, KubeconfigUser } from './kubeconfig.ts';

/** How long a plugin may take before the request fails with its name in the error. */
const EXEC_TIMEOUT_MS = 60_000;
/** Run the plugin again this long before what it gave expires, so no request carries an expired token. */
const EXPIRY_MARGIN_MS = 10_000;

export interface ExecCredential {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
  /** ms since the epoch; undefined: valid for the process's life. */
  expiresAt?: number;
}

/** Runs an exec credential plugin once and reads its ExecCredential (client.authentication.k8s.io). */
export async function runExecPlugin(exec: ExecConfig, cluster: KubeconfigCluster): Promise<ExecCredential> {
  const command = exec.command.includes('/') && !isAbsolute(exec.command) ? resolve(exec.baseDir, exec.command) : exec.command;
  const info = { apiVersion: exec.apiVersion, kind: 'ExecCredential', spec: { interactive: false, ...(exec.provideClusterInfo ? { cluster: clusterInfo(cluster) } : {}) } };
  const env: NodeJS.ProcessEnv = { ...process.env, KUBERNETES_EXEC_INFO: JSON.stringify(info) };
  for (const e of exec.env ?? []) env[e.name] = e.value;
  const stdout = await new Promise<string>((done, fail) => {
    execFile(command, exec.args ?? [], { env, timeout: EXEC_TIMEOUT_MS, maxBuffer: 1 << 20 }, (err, out, stderr) => {
      if (err) fail(new Error(`exec credential plugin ${exec.command} failed: ${err.message}${stderr ? `: ${stderr.trim()}` : ''}`, { cause: err }));
      else done(out);
    });
  });
  return parseExecCredential(stdout, exec);
}

export function parseExecCredential(stdout: string, exec: Pick<ExecConfig, 'command' | 'apiVersion'>): ExecCredential {
  let doc: { apiVersion?: string; kind?: string; status?: Record<string, unknown> };
  try {
    doc = JSON.parse(stdout) as typeof doc;
  } catch (err) {
    throw new Error(`exec credential plugin ${exec.command} printed no JSON ExecCredential: ${(err as Error).message}`, { cause: err });
  }
  if (doc.kind !== 'ExecCredential' || doc.apiVersion !== exec.apiVersion) {
    throw new Error(`exec credential plugin ${exec.command} printed ${doc.apiVersion ?? '?'}/${doc.kind ?? '?'}; the kubeconfig asks for ${exec.apiVersion} ExecCredential`);
  }
  const status = doc.status ?? {};
  const str = (field: string): string | undefined => (typeof status[field] === 'string' && status[field] !== '' ? status[field] : undefined);
  const token = str('token');
  const cert = str('clientCertificateData');
  const key = str('clientKeyData');
  if (!token && !(cert && key)) throw new Error(`exec credential plugin ${exec.command} gave neither a token nor a client certificate and key`);
  const expiry = str('expirationTimestamp');
  const expiresAt = expiry === undefined ? undefined : Date.parse(expiry);
  if (expiresAt !== undefined && Number.isNaN(expiresAt)) throw new Error(`exec credential plugin ${exec.command}: expirationTimestamp "${expiry}" is not a time`);
  return { ...(token ? { token } : {}), ...(cert ? { clientCertificateData: cert } : {}), ...(key ? { clientKeyData: key } : {}), ...(expiresAt !== undefined ? { expiresAt } : {}) };
}

function clusterInfo(cluster: KubeconfigCluster): Record<string, unknown> {
  return {
    server: cluster.server,
    ...(cluster.ca ? { 'certificate-authority-data': Buffer.from(cluster.ca).toString('base64') } : {}),
    ...(cluster.insecureSkipTLSVerify ? { 'insecure-skip-tls-verify': true } : {}),
    ...(cluster.tlsServerName ? { 'tls-server-name': cluster.tlsServerName } : {}),
  };
}

/** The bearer token of a user, fetched again when it may have changed; undefined when the user has none. */
export function bearerTokenSource(user: KubeconfigUser, cluster: KubeconfigCluster, refreshMs: number, firstExec?: ExecCredential): (() => Promise<string | undefined>) | undefined {
  if (user.exec) return execTokens(user.exec, cluster, firstExec);
  if (user.tokenFile) return fileTokens(user.tokenFile, refreshMs);
  if (user.token) {
    const token = user.token;
    return () => Promise.resolve(token);
  }
  return undefined;
}

/** A token file, re-read once `refreshMs` has passed (kubelet rotates projected tokens well before expiry). */
function fileTokens(file: string, refreshMs: number): () => Promise<string> {
  let cached: { token: string; at: number } | undefined;
  return async () => {
    if (!cached || Date.now() - cached.at >= refreshMs) {
      const token = (await readFile(file, 'utf8')).trim();
      if (token === '') throw new Error(`token file ${file} is empty`);
      cached = { token, at: Date.now() };
    }
    return cached.token;
  };
}

/** The plugin's token, with the plugin run again shortly before it expires (concurrent callers share one run). */
function execTokens(exec: ExecConfig, cluster: KubeconfigCluster, first?: ExecCredential): () => Promise<string | undefined> {
  let current: Promise<ExecCredential> | undefined = first ? Promise.resolve(first) : undefined;
  let expiresAt = first?.expiresAt;
  return async () => {
    if (!current || (expiresAt !== undefined && Date.now() >= expiresAt - EXPIRY_MARGIN_MS)) {
      current = runExecPlugin(exec, cluster);
      current.then((c) => (expiresAt = c.expiresAt), () => (current = undefined));
    }
    return (await current).token;
  };
}
