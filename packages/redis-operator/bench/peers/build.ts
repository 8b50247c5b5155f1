// The peers' operators, built from their public source, never committed: a bare mirror of each repository on
// this machine (QUORUM_PEERS_<PEER>_MIRROR, else /work/.mirror/<owner>+redis-operator/repo) is exported at its
// HEAD into the cache (<cache>/peers/<peer>-<commit>/src) and built there with CGO_ENABLED=0, its Go modules from
// the module proxy (GOFLAGS=-mod=mod). Keyed by the commit: built once per commit, under `nice -n 19`.
import { access, mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheRoot, hostCommand, output, run } from '@quorum/images';

const GIT = hostCommand('git', 'git', 'exporting the Redis peer operators\' sources from their mirrors (peers bench)');
const SH = hostCommand('sh', 'dash', 'piping git archive into tar (peers bench)');
const NICE = hostCommand('nice', 'coreutils', 'building the Redis peer operators at the lowest priority (peers bench)');
hostCommand('tar', 'tar', 'unpacking the Redis peer operators\' sources (peers bench)');
hostCommand('go', null, 'building the Redis peer operators (peers bench; Go from go.dev, as localkube\'s builds use)');

export type OperatorPeer = 'ot' | 'spotahome';

interface PeerSource {
  repository: string;
  /** The package `go build` builds, relative to the source root. */
  main: string;
}

export const PEER_SOURCES: Record<OperatorPeer, PeerSource> = {
  ot: { repository: 'OT-CONTAINER-KIT/redis-operator', main: './cmd/main.go' },
  spotahome: { repository: 'spotahome/redis-operator', main: './cmd/redisoperator' },
};

export interface BuiltPeer {
  commit: string;
  /** The exported source (its CRDs and RBAC are read from there). */
  source: string;
  binary: string;
}

/** Thrown when a peer's source is not on this machine: the bench says so and skips the peer. */
export class PeerSourceMissing extends Error {}

/** Where the peer's bare mirror is (pure): its env override, else the mirror path the search tool's fetch uses. */
export function mirrorPath(peer: OperatorPeer, env: NodeJS.ProcessEnv = process.env): string {
  const override = env[`QUORUM_PEERS_${peer.toUpperCase()}_MIRROR`];
  return override ?? join('/work/.mirror', PEER_SOURCES[peer].repository.replace('/', '+'), 'repo');
}

const exists = (path: string): Promise<boolean> => access(path).then(() => true, () => false);

/** The peer's binary at its mirror's HEAD, built unless cached. */
export async function peerBinary(peer: OperatorPeer, log: (line: string) => void): Promise<BuiltPeer> {
  const mirror = mirrorPath(peer);
  const commit = await output(GIT, ['--git-dir', mirror, 'rev-parse', 'HEAD']).catch((err: Error) => {
    throw new PeerSourceMissing(`${PEER_SOURCES[peer].repository}: no mirror at ${mirror} (set QUORUM_PEERS_${peer.toUpperCase()}_MIRROR to a clone's .git directory): ${err.message.split('\n')[0]}`);
  });
  const dir = join(cacheRoot, 'peers', `${peer}-${commit.slice(0, 12)}`);
  const built: BuiltPeer = { commit, source: join(dir, 'src'), binary: join(dir, 'operator') };
  if (await exists(built.binary)) return built;
  log(`${peer}: building ${PEER_SOURCES[peer].repository} at ${commit.slice(0, 12)} into ${dir} (minutes on a cold module cache)`);
  const partial = `${dir}.${process.pid}.partial`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(join(partial, 'src'), { recursive: true });
  await run(SH, ['-c', 'git --git-dir="$1" archive "$2" | tar -x -C "$3"', 'sh', mirror, commit, join(partial, 'src')]);
  const env = { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=mod' };
  await run(NICE, ['-n', '19', 'go', 'build', '-trimpath', '-ldflags=-s -w', '-o', join(partial, 'operator'), PEER_SOURCES[peer].main], { cwd: join(partial, 'src'), env });
  await rm(dir, { recursive: true, force: true });
  await rename(partial, dir);
  return built;
}
