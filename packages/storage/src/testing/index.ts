// @quorum/storage/testing: what tests need to run the drivers against real servers (MinIO, fake-gcs-server,
// Azurite as child processes, credentials folders as Kubernetes mounts them). Test tooling: production code
// never imports it. The servers' executables are the caller's (on PATH by default); in this repository
// @quorum/localkube/testing/storage starts them with the ones localkube builds.
export { freePorts } from './ports.ts';
export {
  AZURITE_ACCOUNT,
  AZURITE_KEY,
  MINIO_PASSWORD,
  MINIO_USER,
  azuriteConnectionString,
  createAzuriteContainer,
  createGcsBucket,
  createMinioBucket,
  credentialsDir,
  startAzurite,
  startFakeGcs,
  startMinio,
  type StorageServer,
  type StorageServerOptions,
} from './servers.ts';
