// Connection settings from a kubeconfig file, $KUBECONFIG, or the in-cluster ServiceAccount, loaded by
// @kubernetes/client-node (which also knows exec plugins, token files and auth providers).
import { KubeConfig } from '@kubernetes/client-node';
import type { RequestOptions } from 'node:https';

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
