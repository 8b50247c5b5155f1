// @quorum/localkube/testing/storage: @quorum/storage's testing helpers, with MinIO, fake-gcs-server and
// Azurite started from the executables localkube builds (storageServers(), once per process) instead of
// whatever is on PATH.
import { startAzurite as azuriteWith, startFakeGcs as fakeGcsWith, startMinio as minioWith, type StorageServer } from '@quorum/storage/testing';
import { storageServers, type StorageServers } from '../storage/servers.ts';

export * from '@quorum/storage/testing';

let servers: Promise<StorageServers> | undefined;
/** The servers' executables, built once per process. */
export function serverBinaries(): Promise<StorageServers> {
  servers ??= storageServers();
  return servers;
}

export async function startMinio(): Promise<StorageServer> {
  return minioWith({ command: [(await serverBinaries()).minio] });
}

export async function startFakeGcs(): Promise<StorageServer> {
  return fakeGcsWith({ command: [(await serverBinaries()).fakeGcsServer] });
}

export async function startAzurite(): Promise<StorageServer> {
  return azuriteWith({ command: [process.execPath, (await serverBinaries()).azurite] });
}
