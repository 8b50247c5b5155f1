// The `local` StorageClass's provisioner: for every claim the scheduler has placed on a node
// (WaitForFirstConsumer), a directory on that node's disk and a `local` PersistentVolume pinned to the node;
// for every released volume whose reclaim policy is Delete, the directory and the volume go.
// Level-based: each pass lists claims and volumes and does what is missing, so a missed event never matters.
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeClient, KubeList, KubeObject } from '../client/kube.ts';
import { nodeDirs } from './components.ts';
import type { Topology } from './topology.ts';

export const PROVISIONER_NAME = 'localkube.quorum.dev/local';
export const STORAGE_CLASS = 'local';

interface Claim extends KubeObject {
  spec: { storageClassName?: string; accessModes?: string[]; resources?: { requests?: { storage?: string } }; volumeName?: string; volumeMode?: string };
  status?: { phase?: string };
}

interface Volume extends KubeObject {
  spec: { persistentVolumeReclaimPolicy?: string; local?: { path: string }; claimRef?: { namespace: string; name: string; uid: string } };
  status?: { phase?: string };
}

export class LocalVolumeProvisioner {
  readonly #client: KubeClient;
  readonly #topo: Topology;

  constructor(client: KubeClient, topo: Topology) {
    this.#client = client;
    this.#topo = topo;
  }

  volumePath(nodeName: string, claimUid: string): string {
    const node = this.#topo.nodes.find((n) => n.name === nodeName);
    if (!node) throw new Error(`no node ${nodeName}`);
    return join(nodeDirs(node).volumes, `pvc-${claimUid}`);
  }

  /** One pass: provision what is pending, delete what is released. */
  async reconcile(): Promise<void> {
    const [claims, volumes, classes] = await Promise.all([
      this.#client.get<KubeList<Claim>>('/api/v1/persistentvolumeclaims'),
      this.#client.get<KubeList<Volume>>('/api/v1/persistentvolumes'),
      this.#client.get<KubeList<KubeObject & { provisioner: string; reclaimPolicy?: string }>>('/apis/storage.k8s.io/v1/storageclasses'),
    ]);
    const ours = new Map(classes.items.filter((c) => c.provisioner === PROVISIONER_NAME).map((c) => [c.metadata.name, c]));
    const volumeNames = new Set(volumes.items.map((v) => v.metadata.name));
    for (const claim of claims.items) {
      const cls = ours.get(claim.spec.storageClassName ?? '');
      const node = claim.metadata.annotations?.['volume.kubernetes.io/selected-node'];
      if (!cls || !node || claim.status?.phase !== 'Pending' || claim.spec.volumeName || claim.metadata.deletionTimestamp) continue;
      const name = `pvc-${claim.metadata.uid}`;
      if (volumeNames.has(name)) continue;
      const path = this.volumePath(node, claim.metadata.uid!);
      await mkdir(path, { recursive: true, mode: 0o777 });
      await this.#client.create('/api/v1/persistentvolumes', {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name, annotations: { 'pv.kubernetes.io/provisioned-by': PROVISIONER_NAME }, labels: { 'localkube.quorum.dev/node': node } },
        spec: {
          capacity: { storage: claim.spec.resources?.requests?.storage ?? '1Gi' },
          accessModes: claim.spec.accessModes ?? ['ReadWriteOnce'],
          volumeMode: claim.spec.volumeMode ?? 'Filesystem',
          persistentVolumeReclaimPolicy: cls.reclaimPolicy ?? 'Delete',
          storageClassName: cls.metadata.name,
          claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: claim.metadata.namespace, name: claim.metadata.name, uid: claim.metadata.uid },
          local: { path },
          nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] } },
        },
      });
    }
    for (const volume of volumes.items) {
      if (volume.metadata.annotations?.['pv.kubernetes.io/provisioned-by'] !== PROVISIONER_NAME) continue;
      if (volume.spec.persistentVolumeReclaimPolicy !== 'Delete' || !['Released', 'Failed'].includes(volume.status?.phase ?? '')) continue;
      if (volume.spec.local?.path) await rm(volume.spec.local.path, { recursive: true, force: true });
      await this.#client.delete(`/api/v1/persistentvolumes/${volume.metadata.name}`);
    }
  }

  /** Runs passes every `intervalMs` until `signal` aborts; errors are logged and retried on the next pass. */
  async run(signal: AbortSignal, intervalMs = 500, log: (msg: string) => void = () => undefined): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.reconcile();
      } catch (err) {
        if (!signal.aborted) log(`provisioner: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }

  /** Fault: deletes the contents of the volume bound to a claim (the claim and volume objects stay). */
  async wipe(namespace: string, claimName: string): Promise<string> {
    const claim = await this.#client.get<Claim>(`/api/v1/namespaces/${namespace}/persistentvolumeclaims/${claimName}`);
    if (!claim.spec.volumeName) throw new Error(`claim ${namespace}/${claimName} is not bound`);
    const volume = await this.#client.get<Volume>(`/api/v1/persistentvolumes/${claim.spec.volumeName}`);
    const path = volume.spec.local?.path;
    if (!path) throw new Error(`volume ${claim.spec.volumeName} is not a localkube volume`);
    for (const entry of await readdir(path)) await rm(join(path, entry), { recursive: true, force: true });
    return path;
  }
}
