// A fake API server for `kubectl quorum`, over HTTPS like the real one, with a kubeconfig that points at it:
// the plugin connects through the runtime's Client exactly as it does against a cluster. It serves GET,
// list (one namespace or all) and POST (generateName included) of the etcd.quorum.dev kinds, records every
// request, and can move an object's status along on each read, as the operator would between polls.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { generateCertificates, type KubeObject } from '@quorum/runtime';

export interface SeenRequest {
  method: string;
  path: string;
  body?: Record<string, unknown>;
}

type Stored = KubeObject & { spec?: unknown; status?: unknown };

const PREFIX = '/apis/etcd.quorum.dev/v1alpha1/';

export class FakeQuorumApi {
  readonly requests: SeenRequest[] = [];
  /** False: the CRDs are not installed, and every path answers a 404 that names no object. */
  served = true;
  /** Statuses applied one per GET of an object (key `plural/namespace/name`), oldest first. */
  readonly #progress = new Map<string, unknown[]>();
  readonly #objects = new Map<string, Stored>();
  #suffix = 0;
  #server: Server | undefined;
  #dir = '';
  kubeconfig = '';

  static async start(): Promise<FakeQuorumApi> {
    const api = new FakeQuorumApi();
    const certs = await generateCertificates({ ipAddresses: ['127.0.0.1'] });
    api.#server = createServer({ cert: certs.cert, key: certs.key }, (req, res) => {
      let text = '';
      req.setEncoding('utf8').on('data', (d: string) => (text += d)).on('end', () => {
        const url = new URL(req.url ?? '/', 'https://x');
        const body = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
        api.requests.push({ method: req.method ?? 'GET', path: url.pathname, ...(body ? { body } : {}) });
        const { code, answer } = api.#answer(req.method ?? 'GET', url.pathname, body);
        res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((resolve) => api.#server!.listen(0, '127.0.0.1', resolve));
    const { port } = api.#server.address() as AddressInfo;
    api.#dir = await mkdtemp(join(tmpdir(), 'kubectl-quorum-'));
    api.kubeconfig = join(api.#dir, 'kubeconfig');
    const cluster = { server: `https://127.0.0.1:${port}`, 'certificate-authority-data': Buffer.from(certs.caCert).toString('base64') };
    await writeFile(api.kubeconfig, stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'fake', cluster }],
      users: [{ name: 'me', user: { token: 'fake-token' } }],
      contexts: [
        { name: 'team-a', context: { cluster: 'fake', user: 'me', namespace: 'team-a' } },
        { name: 'no-namespace', context: { cluster: 'fake', user: 'me' } },
      ],
      'current-context': 'team-a',
    }));
    return api;
  }

  put(plural: string, obj: Stored): void {
    this.#objects.set(`${plural}/${obj.metadata.namespace}/${obj.metadata.name}`, structuredClone(obj));
  }

  get(plural: string, namespace: string, name: string): Stored | undefined {
    return this.#objects.get(`${plural}/${namespace}/${name}`);
  }

  /** Each later GET of the object replaces its status with the next of these. */
  progress(plural: string, namespace: string, name: string, statuses: unknown[]): void {
    this.#progress.set(`${plural}/${namespace}/${name}`, [...statuses]);
  }

  /** The requests other than reads: what the plugin changed. */
  writes(): SeenRequest[] {
    return this.requests.filter((r) => r.method !== 'GET');
  }

  async stop(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
    await rm(this.#dir, { recursive: true, force: true });
  }

  #answer(method: string, path: string, body: Record<string, unknown> | undefined): { code: number; answer: unknown } {
    const notFound = (name?: string, plural?: string): { code: number; answer: unknown } => ({
      code: 404,
      answer: { kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404, message: name ? `${plural}.etcd.quorum.dev "${name}" not found` : 'the server could not find the requested resource', details: name ? { name, group: 'etcd.quorum.dev', kind: plural } : {} },
    });
    if (!this.served || !path.startsWith(PREFIX)) return notFound();
    const parts = path.slice(PREFIX.length).split('/');
    // [plural] | [namespaces, ns, plural] | [namespaces, ns, plural, name]
    const namespaced = parts[0] === 'namespaces';
    const namespace = namespaced ? parts[1] : undefined;
    const plural = namespaced ? parts[2]! : parts[0]!;
    const name = namespaced ? parts[3] : undefined;
    if (method === 'GET' && name === undefined) {
      const items = [...this.#objects.entries()].filter(([k, o]) => k.startsWith(`${plural}/`) && (namespace === undefined || o.metadata.namespace === namespace)).map(([, o]) => o);
      return { code: 200, answer: { metadata: { resourceVersion: '1' }, items } };
    }
    if (method === 'GET' && namespace !== undefined && name !== undefined) {
      const key = `${plural}/${namespace}/${name}`;
      const obj = this.#objects.get(key);
      if (!obj) return notFound(name, plural);
      const next = this.#progress.get(key)?.shift();
      if (next !== undefined) obj.status = next;
      return { code: 200, answer: obj };
    }
    if (method === 'POST' && namespace !== undefined && body) {
      const obj = structuredClone(body) as unknown as Stored;
      if (!obj.metadata.name && obj.metadata.generateName) obj.metadata.name = `${obj.metadata.generateName}x${++this.#suffix}`;
      delete obj.metadata.generateName;
      const key = `${plural}/${namespace}/${obj.metadata.name}`;
      if (this.#objects.has(key)) return { code: 409, answer: { kind: 'Status', reason: 'AlreadyExists', code: 409, message: `${plural}.etcd.quorum.dev "${obj.metadata.name}" already exists`, details: { name: obj.metadata.name } } };
      obj.metadata.creationTimestamp = new Date().toISOString();
      this.#objects.set(key, obj);
      return { code: 201, answer: obj };
    }
    return { code: 405, answer: { kind: 'Status', reason: 'MethodNotAllowed', code: 405, message: `${method} ${path}` } };
  }
}
