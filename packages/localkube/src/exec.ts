// Running host commands: one implementation, in @quorum/images (which the operator's image build shares).
export { CommandError, commandExists, output, run, type RunOptions, type RunResult } from '@quorum/images';
