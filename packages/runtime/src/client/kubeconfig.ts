// Reading kubeconfig files the way kubectl does, without @kubernetes/client-node: that package costs an
// operator process about 86 MB of RSS at start (issue 24) and the runtime needs only this much of it.
// Files named by $KUBECONFIG (':'-separated) are merged, the first to define a name winning; relative paths
// are resolved against the file that names them; `*-data` fields are base64 PEM.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/**
 * A kubeconfig's document. JSON (which is YAML, and what `kubectl config view -o json` and localkube write) is
 * parsed by JSON.parse; anything else by yaml, loaded on the first such file: a pod's in-cluster configuration
 * never reads a kubeconfig, and yaml's modules are about 10 MiB of a fresh process's RSS, 1.7 MiB beside the
 * runtime's own (issue 24). Required, not imported, because reading a kubeconfig is synchronous; yaml's Node
 * entry is CommonJS, the module every `import 'yaml'` gets as well. Text that starts like a JSON object but is
 * not JSON (a flow-style YAML mapping, `{apiVersion: v1}`) is YAML's to read, errors included.
 */
function parseKubeconfigText(text: string): unknown {
  if (text.trimStart().startsWith('{')) {
    try {
      return JSON.parse(text);
    } catch {
      /* not JSON: YAML below */
    }
  }
  return (createRequire(import.meta.url)('yaml') as typeof import('yaml')).parse(text);
}

/** The `exec` stanza of a kubeconfig user: a credential plugin (client.authentication.k8s.io). */
export interface ExecConfig {
  command: string;
  args?: string[];
  env?: { name: string; value: string }[];
  apiVersion: string;
  provideClusterInfo?: boolean;
  /** The directory the command and relative paths are resolved from: the kubeconfig's. */
  baseDir: string;
}

export interface KubeconfigCluster {
  server: string;
  /** PEM, read from `certificate-authority` or `certificate-authority-data`. */
  ca?: string;
  insecureSkipTLSVerify?: boolean;
  tlsServerName?: string;
}

export interface KubeconfigUser {
  /** PEM, read from `client-certificate(-data)` and `client-key(-data)`. */
  cert?: string;
  key?: string;
  token?: string;
  /** Re-read on every refresh: tokens projected into files rotate. */
  tokenFile?: string;
  exec?: ExecConfig;
  impersonate?: { user?: string; uid?: string; groups?: string[] };
}

/** One context of a kubeconfig, with its cluster and user read and every path resolved. */
export interface ResolvedKubeconfig {
  context: string;
  namespace?: string;
  cluster: KubeconfigCluster;
  user: KubeconfigUser;
  /** The files it came from, for messages. */
  files: string[];
}

interface Named<T> {
  name: string;
  value: T;
  file: string;
}

interface KubeconfigFiles {
  currentContext?: string;
  contexts: Named<{ cluster?: string; user?: string; namespace?: string }>[];
  clusters: Named<Record<string, unknown>>[];
  users: Named<Record<string, unknown>>[];
  files: string[];
}

/** $KUBECONFIG's files, or ~/.kube/config; undefined when none exists (then in-cluster is next). */
export function defaultKubeconfigFiles(env: NodeJS.ProcessEnv = process.env): string[] | undefined {
  const listed = (env.KUBECONFIG ?? '').split(':').filter((f) => f.length > 0);
  const candidates = listed.length > 0 ? listed : [join(env.HOME ?? homedir(), '.kube', 'config')];
  const existing = candidates.filter((f) => readable(f));
  return existing.length > 0 ? existing : undefined;
}

function readable(file: string): boolean {
  try {
    readFileSync(file);
    return true;
  } catch {
    return false;
  }
}

/** Reads and resolves one context (the current one unless named) of the merged files. */
export function readKubeconfig(files: string[], contextName?: string): ResolvedKubeconfig {
  const merged = mergeFiles(files);
  const name = contextName ?? merged.currentContext;
  if (!name) throw new Error(`kubeconfig ${files.join(':')}: no current-context, and no context was named`);
  const context = merged.contexts.find((c) => c.name === name);
  if (!context) throw new Error(`context "${name}" is not in the kubeconfig ${files.join(':')}`);
  const cluster = merged.clusters.find((c) => c.name === context.value.cluster);
  if (!cluster) throw new Error(`kubeconfig ${files.join(':')}: context "${name}" names cluster "${context.value.cluster ?? ''}", which is not defined`);
  const user = merged.users.find((u) => u.name === context.value.user);
  if (context.value.user && !user) throw new Error(`kubeconfig ${files.join(':')}: context "${name}" names user "${context.value.user}", which is not defined`);
  return {
    context: name,
    ...(context.value.namespace ? { namespace: context.value.namespace } : {}),
    cluster: readCluster(cluster),
    user: user ? readUser(user) : {},
    files,
  };
}

function mergeFiles(files: string[]): KubeconfigFiles {
  const merged: KubeconfigFiles = { contexts: [], clusters: [], users: [], files };
  for (const file of files) {
    const doc = (parseKubeconfigText(readFileSync(file, 'utf8')) ?? {}) as Record<string, unknown>;
    merged.currentContext ??= typeof doc['current-context'] === 'string' && doc['current-context'] !== '' ? doc['current-context'] : undefined;
    addNamed(merged.contexts, doc.contexts, 'context', file);
    addNamed(merged.clusters, doc.clusters, 'cluster', file);
    addNamed(merged.users, doc.users, 'user', file);
  }
  return merged;
}

/** kubectl's merge rule: the first file to define a name wins. */
function addNamed<T>(into: Named<T>[], list: unknown, field: string, file: string): void {
  if (!Array.isArray(list)) return;
  for (const entry of list as Record<string, unknown>[]) {
    const name = entry.name;
    if (typeof name !== 'string' || into.some((e) => e.name === name)) continue;
    into.push({ name, value: (entry[field] ?? {}) as T, file });
  }
}

function readCluster({ name, value, file }: Named<Record<string, unknown>>): KubeconfigCluster {
  const server = value.server;
  if (typeof server !== 'string' || server === '') throw new Error(`kubeconfig ${file}: cluster "${name}" has no server`);
  const ca = pem(value, 'certificate-authority', file);
  return {
    server: server.replace(/\/$/, ''),
    ...(ca ? { ca } : {}),
    ...(value['insecure-skip-tls-verify'] === true ? { insecureSkipTLSVerify: true } : {}),
    ...(typeof value['tls-server-name'] === 'string' ? { tlsServerName: value['tls-server-name'] } : {}),
  };
}

function readUser({ name, value, file }: Named<Record<string, unknown>>): KubeconfigUser {
  if (value['auth-provider'] !== undefined) throw new Error(`kubeconfig ${file}: user "${name}" uses an auth-provider, which Kubernetes removed in 1.26; use an exec credential plugin`);
  if (value.username !== undefined || value.password !== undefined) throw new Error(`kubeconfig ${file}: user "${name}" has a username and password; the API server has not accepted basic authentication since Kubernetes 1.19`);
  const cert = pem(value, 'client-certificate', file);
  const key = pem(value, 'client-key', file);
  const groups = Array.isArray(value['as-groups']) ? (value['as-groups'] as unknown[]).map(String) : undefined;
  const impersonate = { ...(typeof value.as === 'string' ? { user: value.as } : {}), ...(typeof value['as-uid'] === 'string' ? { uid: value['as-uid'] } : {}), ...(groups ? { groups } : {}) };
  return {
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(typeof value.token === 'string' && value.token !== '' ? { token: value.token } : {}),
    ...(typeof value.tokenFile === 'string' ? { tokenFile: inDirOf(file, value.tokenFile) } : {}),
    ...(value.exec ? { exec: readExec(value.exec as Record<string, unknown>, name, file) } : {}),
    ...(Object.keys(impersonate).length > 0 ? { impersonate } : {}),
  };
}

function readExec(exec: Record<string, unknown>, user: string, file: string): ExecConfig {
  if (typeof exec.command !== 'string' || exec.command === '') throw new Error(`kubeconfig ${file}: user "${user}": exec has no command`);
  if (typeof exec.apiVersion !== 'string' || !exec.apiVersion.startsWith('client.authentication.k8s.io/')) {
    throw new Error(`kubeconfig ${file}: user "${user}": exec apiVersion must be client.authentication.k8s.io/v1 or v1beta1, not "${String(exec.apiVersion)}"`);
  }
  return {
    command: exec.command,
    apiVersion: exec.apiVersion,
    baseDir: dirname(resolve(file)),
    ...(Array.isArray(exec.args) ? { args: (exec.args as unknown[]).map(String) } : {}),
    ...(Array.isArray(exec.env) ? { env: (exec.env as { name: string; value: string }[]).map((e) => ({ name: String(e.name), value: String(e.value) })) } : {}),
    ...(exec.provideClusterInfo === true ? { provideClusterInfo: true } : {}),
  };
}

/** `<field>-data` (base64) or `<field>` (a file, relative to the kubeconfig). */
function pem(value: Record<string, unknown>, field: string, file: string): string | undefined {
  const data = value[`${field}-data`];
  if (typeof data === 'string' && data !== '') return Buffer.from(data, 'base64').toString('utf8');
  const path = value[field];
  if (typeof path !== 'string' || path === '') return undefined;
  return readFileSync(inDirOf(file, path), 'utf8');
}

const inDirOf = (file: string, path: string): string => (isAbsolute(path) ? path : resolve(dirname(resolve(file)), path));
