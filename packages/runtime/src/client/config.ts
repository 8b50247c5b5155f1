// Connection settings from a kubeconfig file, $KUBECONFIG, or the in-cluster ServiceAccount, loaded by
// @kubernetes/client-node (which also knows exec plugins, token files and auth providers).
import { KubeConfig } from '@kubernetes/client-node';
import type { RequestOptions } from 'node:https';
import type { ParseArgsOptionsConfig } from 'node:util';

export interface ConnectionOptions {
  /** A kubeconfig file; default: $KUBECONFIG, ~/.kube/config, or in-cluster. */
  kubeconfig?: string;
  context?: string;
  /** Force the in-cluster ServiceAccount (token refreshed from its file). */
  inCluster?: boolean;
}

export interface Connection {
  server: string;
  /** TLS material for the agent: read once. */
  tls: Pick<RequestOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'>;
  /** Authorization and impersonation headers: re-read periodically, since tokens rotate. */
  headers: () => Promise<Record<string, string>>;
}

const HEADER_TTL_MS = 30_000;

export function loadKubeConfig(options: ConnectionOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  if (options.inCluster) kc.loadFromCluster();
  else if (options.kubeconfig) kc.loadFromFile(options.kubeconfig);
  else kc.loadFromDefault();
  if (options.context) kc.setCurrentContext(options.context);
  return kc;
}

/**
 * The namespace the kubeconfig's current (or given) context names, as kubectl defaults to it; undefined when it
 * names none. A `context` the kubeconfig does not have is an error that says so.
 */
export function kubeconfigNamespace(options: ConnectionOptions = {}): string | undefined {
  const kc = loadKubeConfig(options);
  const context = kc.getContextObject(kc.getCurrentContext());
  if (options.context !== undefined && !context) throw new Error(`context "${options.context}" is not in the kubeconfig${options.kubeconfig ? ` ${options.kubeconfig}` : ''}`);
  return context?.namespace || undefined;
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
  const kc = loadKubeConfig(options);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error(`kubeconfig: no cluster for context ${kc.getCurrentContext()}`);
  const first: RequestOptions = {};
  await kc.applyToHTTPSOptions(first);
  let cached = { at: Date.now(), headers: headerRecord(first.headers) };
  return {
    server: cluster.server.replace(/\/$/, ''),
    tls: { ca: first.ca, cert: first.cert, key: first.key, rejectUnauthorized: first.rejectUnauthorized, servername: first.servername },
    headers: async () => {
      if (Date.now() - cached.at > HEADER_TTL_MS) {
        const fresh: RequestOptions = {};
        await kc.applyToHTTPSOptions(fresh);
        cached = { at: Date.now(), headers: headerRecord(fresh.headers) };
      }
      return cached.headers;
    },
  };
}

function headerRecord(headers: RequestOptions['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers || Array.isArray(headers)) return out;
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = String(v);
  return out;
}
