// Where the recorder's own kind lives in the API, for the runtime's typed client and informers.
import { resource } from '@quorum/runtime';
import { API_VERSION, KIND, PLURAL, type ChangeRecorder } from './api/changerecorder.ts';

export const ChangeRecorders = resource<ChangeRecorder>(API_VERSION, KIND, PLURAL, false);
