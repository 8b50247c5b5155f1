// The RBAC manager's container image (OCI archive), assembled by the kit (@quorum/kit/image) as every
// operator's is: Node 24, the workspace packages the manager runs and their production dependencies.
import { buildOperatorImage, type ImageArchive } from '@quorum/kit/image';
import { RBAC_MANAGER_IMAGE } from './manifests.ts';

/** Tagged `<version>-dev.<content digest>` unless a name is given (the kit's buildOperatorImage). */
export function buildRbacManagerImage(name?: string): Promise<ImageArchive> {
  return buildOperatorImage({ workspace: '@quorum/rbac-manager', entrypoint: 'src/operator/main.ts', image: RBAC_MANAGER_IMAGE, title: 'quorum rbac manager', ...(name !== undefined ? { name } : {}) });
}
