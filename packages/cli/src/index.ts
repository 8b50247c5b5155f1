// @quorum/cli: composes the operators' commands under `quorum` and `kubectl quorum`.
export {};
