// The kubectl-quorum executable's entry point: `kubectl quorum ARGS…` runs it with ARGS.
import { kubectlQuorum } from './plugin.ts';

process.exitCode = await kubectlQuorum(process.argv.slice(2));
