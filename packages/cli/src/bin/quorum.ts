// The quorum executable's entry point (bin/quorum): `quorum ARGS…`.
import { quorumCli } from '../quorum.ts';

// process.exit, not exitCode: a history command closes its record source and client without waiting, and
// the command is done once it has its code. Writes to stdout and stderr are synchronous for files, pipes
// and terminals on Linux, so nothing written is lost.
process.exit(await quorumCli.run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }));
