// The operator's container image (OCI archive), assembled by the kit (@quorum/kit/image): Node 24, the workspace
// packages the operator runs and their production dependencies. The Dockerfile at the repo root builds the same
// layout for users with a registry.
import { buildOperatorImage as buildImage, type ImageArchive } from '@quorum/kit/image';
import { OPERATOR_IMAGE } from './manifests.ts';

/** Tagged `<version>-dev.<content digest>` unless a name is given (the kit's buildOperatorImage). */
export function buildOperatorImage(name?: string): Promise<ImageArchive> {
  return buildImage({
    workspace: '@quorum/etcd-operator',
    entrypoint: 'src/operator/main.ts',
    image: OPERATOR_IMAGE,
    title: 'quorum etcd operator',
    ...(name !== undefined ? { name } : {}),
  });
}
