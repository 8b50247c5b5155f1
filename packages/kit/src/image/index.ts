// @quorum/kit/image: an operator's container image, assembled as an OCI archive. A separate entry point from
// @quorum/kit, so that an operator process (which imports @quorum/kit) never loads @quorum/images, a build-time package.
export { buildOperatorImage, dedupeEntries, devImageName, OPERATOR_NODE_FLAGS, operatorImageConfig, productionPackagePaths, type OperatorImageOptions } from './operator-image.ts';
export { builtManifest, builtPath, builtWorkspaceEntries, compileModule } from './built-js.ts';
export { unpackImage, untar, type UnpackedImage } from './unpack.ts';
export type { ImageArchive, TarEntry } from '@quorum/images';
