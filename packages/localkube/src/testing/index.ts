// @quorum/localkube/testing: @quorum/runtime's TestEnv on a localkube cluster, the one `npm test` started
// (named by LOCALKUBE_STATE_DIR) or one of its own, started here and stopped by stop(). `kube` is the cluster
// itself, for faults (stop a node, kill a container) and its kubectl.
import { connect, type Connection } from '@quorum/runtime';
import { TestEnv as ClusterTestEnv } from '@quorum/runtime/testing';
import { LocalKube } from '../api.ts';

export { eventually, type EventuallyOptions } from '@quorum/runtime/testing';

export class TestEnv extends ClusterTestEnv {
  readonly kube: LocalKube;
  readonly #owned: boolean;

  private constructor(kube: LocalKube, connection: Connection, owned: boolean) {
    super(connection, kube.kubeconfig);
    this.kube = kube;
    this.#owned = owned;
  }

  /** Attaches to the suite's cluster when LOCALKUBE_STATE_DIR names one; otherwise starts (and later stops) its own. */
  static async start(options: { nodes?: number; stateDir?: string } = {}): Promise<TestEnv> {
    const shared = process.env['LOCALKUBE_STATE_DIR'];
    const kube = shared ? await LocalKube.attach(shared) : await LocalKube.start({ nodes: options.nodes ?? 1, stateDir: options.stateDir });
    return new TestEnv(kube, await connect({ kubeconfig: kube.kubeconfig }), !shared);
  }

  override async stop(): Promise<void> {
    await super.stop();
    this.kube.client.close();
    if (this.#owned) await this.kube.stop();
  }
}
