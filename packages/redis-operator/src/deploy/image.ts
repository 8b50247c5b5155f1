// The operator's container image (OCI archive), assembled by the kit (@quorum/kit/image) as every operator's is.
import { buildOperatorImage as buildImage, type ImageArchive } from '@quorum/kit/image';
import { OPERATOR_IMAGE } from './manifests.ts';

/** Tagged `<version>-dev.<content digest>` unless a name is given. */
export function buildOperatorImage(name?: string): Promise<ImageArchive> {
  return buildImage({ workspace: '@quorum/redis-operator', entrypoint: 'src/operator/main.ts', image: OPERATOR_IMAGE, title: 'quorum redis operator', ...(name !== undefined ? { name } : {}) });
}
