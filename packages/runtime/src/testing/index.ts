// Test support on localkube: a real cluster per suite (or the one `npm test` started, named by
// LOCALKUBE_STATE_DIR), a fresh namespace per test, and `eventually` (localkube's) for conditions that take time.
import { LocalKube } from '@quorum/localkube';
import { Client } from '../client/client.ts';
import { Namespaces } from '../client/resources.ts';

export { eventually, type EventuallyOptions } from '@quorum/localkube';

export class TestEnv {
  readonly kube: LocalKube;
  readonly client: Client;
  readonly #owned: boolean;
  readonly #namespaces: string[] = [];

  private constructor(kube: LocalKube, client: Client, owned: boolean) {
    this.kube = kube;
    this.client = client;
    this.#owned = owned;
  }

  /** Attaches to the suite's cluster when LOCALKUBE_STATE_DIR names one; otherwise starts (and later stops) its own. */
  static async start(options: { nodes?: number; stateDir?: string } = {}): Promise<TestEnv> {
    const shared = process.env['LOCALKUBE_STATE_DIR'];
    const kube = shared ? await LocalKube.attach(shared) : await LocalKube.start({ nodes: options.nodes ?? 1, stateDir: options.stateDir });
    return new TestEnv(kube, await Client.connect({ kubeconfig: kube.kubeconfig }), !shared);
  }

  get kubeconfig(): string {
    return this.kube.kubeconfig;
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

  /** A client acting as a ServiceAccount (to test RBAC for real). */
  async clientFor(namespace: string, serviceAccount: string): Promise<Client> {
    return Client.connect({ kubeconfig: await this.kube.serviceAccountKubeconfig(namespace, serviceAccount) });
  }

  async stop(): Promise<void> {
    for (const ns of this.#namespaces) await this.client.delete(Namespaces, ns).catch(() => undefined);
    this.client.close();
    this.kube.client.close();
    if (this.#owned) await this.kube.stop();
  }
}
