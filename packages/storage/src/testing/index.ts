// @quorum/storage/testing: what unit tests need to run the drivers against real servers (MinIO,
// fake-gcs-server, Azurite as child processes, credentials folders as Kubernetes mounts them). Test tooling:
// production code never imports it, and @quorum/localkube, which provides the servers' executables, is only
// a development dependency.
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
  serverBinaries,
  startAzurite,
  startFakeGcs,
  startMinio,
  type StorageServer,
} from './servers.ts';
