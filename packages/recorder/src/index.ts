// @quorum/recorder: the ChangeRecorder API and the recorder that keeps the previous version of every changed
// or deleted object of the chosen kinds.
import type { ImageArchive } from '@quorum/images';
export * from './api/changerecorder.ts';
export * from './api/schema.ts';
export { applyDefaults, validateSpec, type DefaultedSpec } from './api/defaults.ts';
export { changeRecorderCRD } from './api/crd.ts';
export { ChangeRecorders } from './resources.ts';
export { createRecorder, SessionRegistry, STATUS_REFRESH_MS, type Recorder, type RecorderOptions } from './operator/recorder.ts';
export { FileRecordStore, type RecordStore, type StoreStats } from './store/record-store.ts';
export { ObjectRecordStore } from './store/object-record-store.ts';
export { openRecordStore, storeLocationKey, type StoreLocation } from './store/open-store.ts';
export type { ObjectRef } from './store/layout.ts';
export { parseRecord, parseLastSeen, type RecordMeta, type RecordReason, type LastSeenMeta } from './record/record-file.ts';
export { historyCommand } from './cli/history.ts';
export { commands } from './cli/commands.ts';
export { HISTORY_USAGE } from './cli/args.ts';
export { HistoryServer, historyServerRunnable, type HistoryServerOptions } from './history/server.ts';
export { HistoryHandlers } from './history/handlers.ts';
export { StoreReader, type ObjectStoreSource, type StoreReaderOptions } from './history/store-reader.ts';
export { objectStoreSources, storageTarget, type StorageTarget } from './store/target.ts';
export * from './history/protocol.ts';
export { recorderManifests, sampleChangeRecorder, recordedKindRules, storageSecretsOf, RECORDER_IMAGE, type RecorderManifestOptions } from './deploy/manifests.ts';

/** Builds the recorder's image (OCI archive); loaded on demand, since it needs @quorum/images, a build-time package. */
export async function buildRecorderImage(name?: string): Promise<ImageArchive> {
  return (await import('./deploy/image.ts')).buildRecorderImage(name);
}
