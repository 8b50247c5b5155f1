// @quorum/runtime/testing: tests against a real API server, whichever one a kubeconfig names (a kind or
// localkube cluster, envtest's API server, a shared dev cluster): a fresh namespace per test, removed at the
// end, clients acting as ServiceAccounts, and `eventually` for conditions that take time. It starts no
// cluster: @quorum/localkube's testing entry builds on this one to start (or attach to) a local one.
import { Client } from '../client/client.ts';
import { connect, type Connection } from '../client/config.ts';
import { Namespaces } from '../client/resources.ts';

export { eventually, type EventuallyOptions } from './eventually.ts';

export interface TestEnvOptions {
  /** The cluster's kubeconfig file; default: $KUBECONFIG, then ~/.kube/config. */
  kubeconfig?: string;
  context?: string;
}

export class TestEnv {
  readonly client: Client;
  readonly #connection: Connection;
  readonly #kubeconfig: string | undefined;
  readonly #namespaces: string[] = [];

  /** For subclasses that bring their own cluster; tests call `TestEnv.connect()`. */
  protected constructor(connection: Connection, kubeconfig: string | undefined) {
    this.#connection = connection;
    this.#kubeconfig = kubeconfig;
    this.client = new Client(connection);
  }

  /** Connects to the cluster the kubeconfig names (the option, else $KUBECONFIG, else ~/.kube/config). */
  static async connect(options: TestEnvOptions = {}): Promise<TestEnv> {
    const kubeconfig = options.kubeconfig ?? process.env['KUBECONFIG'];
    return new TestEnv(await connect({ ...options, ...(kubeconfig === undefined ? {} : { kubeconfig }) }), kubeconfig);
  }

  /** The kubeconfig file the environment connected with (for child processes and kubectl). */
  get kubeconfig(): string {
    if (this.#kubeconfig === undefined) throw new Error('TestEnv: connected through ~/.kube/config; pass `kubeconfig` to name the file');
    return this.#kubeconfig;
  }

  /**
   * Creates a namespace that `stop()` deletes, with `labels` (e.g. pod-security.kubernetes.io/enforce, so
   * that the API server itself checks every pod made in it).
   */
  async namespace(prefix = 'test', options: { labels?: Record<string, string> } = {}): Promise<string> {
    const name = `${prefix}-${Date.now().toString(36)}-${Math.floor(Math.random() * 1296).toString(36)}`;
    await this.client.create(Namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...(options.labels ? { labels: options.labels } : {}) } });
    this.#namespaces.push(name);
    return name;
  }

  /**
   * A client acting as a ServiceAccount (to test RBAC for real), with a token from the TokenRequest API
   * (valid `expirationSeconds`) over this environment's connection and TLS trust.
   */
  async clientFor(namespace: string, serviceAccount: string, expirationSeconds = 3600): Promise<Client> {
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(serviceAccount)}/token`;
    const request = await this.client.request<{ status: { token: string } }>('POST', path, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds },
    });
    const authorization = `Bearer ${request.status.token}`;
    const { ca, rejectUnauthorized, servername } = this.#connection.tls;
    return new Client({ server: this.#connection.server, tls: { ca, rejectUnauthorized, servername }, headers: () => Promise.resolve({ authorization }) });
  }

  /** Deletes the namespaces this environment made and closes its client. */
  async stop(): Promise<void> {
    for (const ns of this.#namespaces) await this.client.delete(Namespaces, ns).catch(() => undefined);
    this.client.close();
  }
}
