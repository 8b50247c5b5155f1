// Connection settings from a kubeconfig file, $KUBECONFIG, ~/.kube/config or the in-cluster ServiceAccount,
// read by our own loader (kubeconfig.ts, credentials.ts): client certificates, tokens, token files, exec
// credential plugins, impersonation. @kubernetes/client-node is used for types only (issue 24: it cost 86 MB).
import { readFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { join } from 'node:path';
import type { ParseArgsOptionsConfig } from 'node:util';
import { bearerTokenSource, runExecPlugin, type ExecCredential } from './credentials.ts';
import { defaultKubeconfigFiles, readKubeconfig, type ResolvedKubeconfig } from './kubeconfig.ts';

export interface ConnectionOptions {
  /** A kubeconfig file; default: $KUBECONFIG, ~/.kube/config, or in-cluster. */
  kubeconfig?: string;
  context?: string;
  /** Force the in-cluster ServiceAccount (token re-read from its file). */
  inCluster?: boolean;
  /** Where the in-cluster ServiceAccount's token, ca.crt and namespace are; default: Kubernetes' mount point. */
  serviceAccountDir?: string;
  /** How often a token file (in-cluster, or a kubeconfig's tokenFile) is read again; default 60 s, as client-go. */
  tokenFileRefreshMs?: number;
}

export interface Connection {
  server: string;
  /** TLS material for the agent: read once. */
  tls: Pick<RequestOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'>;
  /** Authorization and impersonation headers: fetched again as tokens rotate or expire. */
  headers: () => Promise<Record<string, string>>;
}

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
const TOKEN_FILE_REFRESH_MS = 60_000;

/**
 * What a connection is made of, as kubectl would choose it: the kubeconfig named, else $KUBECONFIG's files or
 * ~/.kube/config, else the in-cluster ServiceAccount.
 */
export function loadKubeConfig(options: ConnectionOptions = {}): ResolvedKubeconfig {
  if (options.inCluster) return inClusterConfig(options.serviceAccountDir);
  const files = options.kubeconfig ? [options.kubeconfig] : defaultKubeconfigFiles();
  if (files) return readKubeconfig(files, options.context);
  if (process.env.KUBERNETES_SERVICE_HOST) return inClusterConfig(options.serviceAccountDir);
  throw new Error('no kubeconfig: $KUBECONFIG and ~/.kube/config name no file, and this is not a pod (no KUBERNETES_SERVICE_HOST)');
}

/** The pod's ServiceAccount: the API server's Service address from the environment, the mounted token and CA. */
export function inClusterConfig(dir: string = SERVICE_ACCOUNT_DIR): ResolvedKubeconfig {
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new Error('in-cluster configuration: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (not running in a pod?)');
  let namespace: string | undefined;
  try {
    namespace = readFileSync(join(dir, 'namespace'), 'utf8').trim() || undefined;
  } catch {
    namespace = undefined;
  }
  return {
    context: 'in-cluster',
    ...(namespace ? { namespace } : {}),
    cluster: { server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`, ca: readFileSync(join(dir, 'ca.crt'), 'utf8') },
    user: { tokenFile: join(dir, 'token') },
    files: [],
  };
}

/**
 * The namespace the kubeconfig's current (or given) context names, as kubectl defaults to it; undefined when it
 * names none. A `context` the kubeconfig does not have is an error that says so.
 */
export function kubeconfigNamespace(options: ConnectionOptions = {}): string | undefined {
  return loadKubeConfig(options).namespace;
}

/**
 * kubectl's own flags for where to connect and which namespace, as `parseArgs` options, for a command that
 * users run beside kubectl (a kubectl plugin, which kubectl hands these flags unread, or a CLI of its own):
 * spread into the command's options, then read with connectionFlags.
 */
export const CONNECTION_FLAGS = {
  namespace: { type: 'string', short: 'n' },
  'all-namespaces': { type: 'boolean', short: 'A', default: false },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
} as const satisfies ParseArgsOptionsConfig;

export interface ConnectionFlags {
  kubeconfig?: string;
  context?: string;
  /** -n as given; unset means the kubeconfig context's (kubeconfigNamespace). */
  namespace?: string;
  /** -A */
  allNamespaces: boolean;
}

/** The values `parseArgs` gave for CONNECTION_FLAGS, with the flags not given left out. */
export function connectionFlags(values: { namespace?: string; 'all-namespaces'?: boolean; kubeconfig?: string; context?: string }): ConnectionFlags {
  return {
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context !== undefined ? { context: values.context } : {}),
    ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
    allNamespaces: values['all-namespaces'] ?? false,
  };
}

export async function connect(options: ConnectionOptions = {}): Promise<Connection> {
  const config = loadKubeConfig(options);
  const { cluster, user } = config;
  // A plugin's client certificate has to be on the TLS connection, so the plugin runs once before it exists.
  const firstExec: ExecCredential | undefined = user.exec ? await runExecPlugin(user.exec, cluster) : undefined;
  const token = bearerTokenSource(user, cluster, options.tokenFileRefreshMs ?? TOKEN_FILE_REFRESH_MS, firstExec);
  if (token) await token(); // an unreadable token file or a failing plugin fails here, not at the first request
  const impersonation = impersonationHeaders(config);
  const cert = user.cert ?? firstExec?.clientCertificateData;
  const key = user.key ?? firstExec?.clientKeyData;
  return {
    server: cluster.server,
    tls: {
      ...(cluster.ca ? { ca: cluster.ca } : {}),
      ...(cert ? { cert } : {}),
      ...(key ? { key } : {}),
      rejectUnauthorized: !cluster.insecureSkipTLSVerify,
      ...(cluster.tlsServerName ? { servername: cluster.tlsServerName } : {}),
    },
    headers: async () => {
      const bearer = token ? await token() : undefined;
      return { ...(bearer ? { Authorization: `Bearer ${bearer}` } : {}), ...impersonation };
    },
  };
}

function impersonationHeaders(config: ResolvedKubeconfig): Record<string, string> {
  const as = config.user.impersonate;
  if (!as) return {};
  // One header per group is what the API server reads; a header record carries one value per name.
  if (as.groups && as.groups.length > 0) throw new Error(`kubeconfig ${config.files.join(':')}: context "${config.context}": as-groups is not supported; impersonate a user (as, as-uid)`);
  return { ...(as.user ? { 'Impersonate-User': as.user } : {}), ...(as.uid ? { 'Impersonate-Uid': as.uid } : {}) };
}
