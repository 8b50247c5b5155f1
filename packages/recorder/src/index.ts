// @quorum/recorder: the ChangeRecorder API and the recorder that keeps the previous version of every changed
// or deleted object of the chosen kinds.
export * from './api/changerecorder.ts';
export { applyDefaults, validateSpec, type DefaultedSpec } from './api/defaults.ts';
export { changeRecorderCRD } from './api/crd.ts';
export { ChangeRecorders } from './resources.ts';
export { createRecorder, SessionRegistry, STATUS_REFRESH_MS, type Recorder, type RecorderOptions } from './operator/recorder.ts';
export { RecordStore, type ObjectRef } from './store/record-store.ts';
export { parseRecord, parseLastSeen, type RecordMeta, type RecordReason, type LastSeenMeta } from './record/record-file.ts';
