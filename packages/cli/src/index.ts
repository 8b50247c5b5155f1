// @quorum/cli: composes the operators' commands under `quorum` and `kubectl quorum`.
export { Cli, commandWordIndex, type CliSpec } from './compose.ts';
export type { Command, CommandGroup, CommandIO } from './command.ts';
export { quorumCli } from './quorum.ts';
export { kubectlQuorumCli } from './kubectl-quorum.ts';
