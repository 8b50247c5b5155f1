// @quorum/localkube: a real multi-node Kubernetes on one machine, assembled from upstream parts.
export { LocalKube, down, prepare, type StartOptions } from './api.ts';
export type { ControlPlaneComponent } from './cluster/cluster.ts';
export { APISERVER_WEBHOOK_CLIENT_NAME } from './cluster/pki.ts';
export { KubeClient, KubeApiError, type KubeObject, type KubeList, type WatchEvent } from './client/kube.ts';
// Image assembly lives in @quorum/images; these re-exports keep localkube's public API for its users.
export {
  buildImageArchive,
  entriesFromDirectory,
  cachedImage,
  contentDigest,
  imageFromDirectory,
  imageFromEntries,
  sharedLibraries,
  baseImageEntries,
  type ImageSpec,
  type ImageConfig,
  type ImageArchive,
  type TarEntry,
} from '@quorum/images';
export { etcdImage, corednsImage, pauseImage } from './images/catalog.ts';
export {
  STORAGE_ADDONS,
  STORAGE_BUCKET,
  STORAGE_NAMESPACE,
  storageEndpoint,
  type EnableStorageAddonOptions,
  type StorageAddon,
  type StorageAddonName,
} from './storage/addons.ts';
export { storageServers, minioImage, fakeGcsServerImage, azuriteImage, type StorageServers } from './storage/servers.ts';
export { controllerRuntimeCompareBinary, coreosEtcdOperatorBinary, etcdBinaryDir, helmBinary, nslookupBinary, prometheusBinaries } from './build/go-binaries.ts';
export {
  DEFAULT_RULE_FILES,
  DEFAULT_SCRAPE_CONFIG_FILES,
  PROMETHEUS_NAMESPACE,
  prometheusConfig,
  prometheusImage,
  readRuleFiles,
  readScrapeConfigFiles,
  type EnablePrometheusOptions,
  type PrometheusAddon,
} from './monitoring/prometheus.ts';
export * as versions from './versions.ts';
export * as topology from './cluster/topology.ts';
export { eventually, type EventuallyOptions } from './wait.ts';
