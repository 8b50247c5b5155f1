// The kubectl-quorum executable's entry point (bin/kubectl-quorum): `kubectl quorum ARGS…` runs it with ARGS.
import { kubectlQuorumCli } from '../kubectl-quorum.ts';

process.exitCode = await kubectlQuorumCli.run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
