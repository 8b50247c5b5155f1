// @quorum/localkube: a real multi-node Kubernetes on one machine, assembled from upstream parts.
export { LocalKube, down, prepare, type StartOptions } from './api.ts';
export { KubeClient, KubeApiError, type KubeObject, type KubeList, type WatchEvent } from './client/kube.ts';
export { buildImageArchive, entriesFromDirectory, type ImageSpec, type ImageConfig } from './images/oci.ts';
export type { TarEntry } from './images/tar.ts';
export { cachedImage, contentDigest, imageFromDirectory, imageFromEntries, sharedLibraries, base as baseImageEntries, etcdImage, corednsImage, pauseImage, type ImageArchive } from './images/catalog.ts';
export * as versions from './versions.ts';
export * as topology from './cluster/topology.ts';
export { eventually, type EventuallyOptions } from './wait.ts';
