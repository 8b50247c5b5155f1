// Where the manager's own kind lives in the API, for the runtime's typed client and informers.
import { resource } from '@quorum/runtime';
import { API_VERSION, KIND, PLURAL, type RBACDefinition } from './api/rbacdefinition.ts';

export const RBACDefinitions = resource<RBACDefinition>(API_VERSION, KIND, PLURAL, false);
