// The change recorder's container image (OCI archive), assembled by the kit (@quorum/kit/image) as every
// operator's is: Node 24, the workspace packages the recorder runs and their production dependencies.
import { buildOperatorImage, type ImageArchive } from '@quorum/kit/image';
import { RECORDER_IMAGE } from './manifests.ts';

/** Tagged `<version>-dev.<content digest>` unless a name is given (the kit's buildOperatorImage). */
export function buildRecorderImage(name?: string): Promise<ImageArchive> {
  return buildOperatorImage({
    workspace: '@quorum/recorder',
    entrypoint: 'src/operator/main.ts',
    image: RECORDER_IMAGE,
    title: 'quorum change recorder',
    ...(name !== undefined ? { name } : {}),
  });
}
