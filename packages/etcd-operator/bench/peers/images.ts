// The images of the peers benchmark, assembled locally like every other image here (@quorum/images), under
// names of our own so that nobody mistakes them for an upstream build.
//
// etcd-shell: the same etcd, etcdctl and etcdutl binaries as the etcd image Quorum's members run (localkube's
// build of PEER_ETCD_VERSION), plus a shell, `sleep` and an `nslookup`. coreos/etcd-operator v0.9.4 needs
// those, unmodified: its members' liveness and readiness probes are `/bin/sh -ec "ETCDCTL_API=3 etcdctl
// endpoint status"`, and their init container (spec.pod.busyboxImage, this same image) waits in a `/bin/sh`
// loop of `nslookup <member>.<cluster>.<ns>.svc` and `sleep 1`. The plain StatefulSet's start script runs in
// it too. The shell is Debian's dash, not busybox: Debian's busybox-static runs its own applets before
// anything on PATH, and its nslookup applies no search domain to a dotted name, so the wait would never end
// (docs/peers.md). tools/nslookup resolves as glibc does.
import { baseImageEntries, fileEntry, hostFile, imageFromEntries, sharedLibraries, type ImageArchive, type TarEntry } from '@quorum/images';
import { coreosEtcdOperatorBinary, etcdBinaryDir, nslookupBinary, versions } from '@quorum/localkube';
import { join } from 'node:path';
import { DEFAULT_VERSION } from '../../src/api/etcdcluster.ts';

const DASH = hostFile('/bin/dash', 'dash', '/bin/sh of the peers benchmark etcd image (coreos/etcd-operator probes, StatefulSet start script)');
const SLEEP = hostFile('/bin/sleep', 'coreutils', 'sleep in the peers benchmark etcd image (coreos/etcd-operator DNS wait)');

/** The etcd every peer runs: the version Quorum's members run by default, so the etcd binary is the same. */
export const PEER_ETCD_VERSION: versions.EtcdVersion = (() => {
  const v = versions.ETCD_VERSIONS.find((x) => x === DEFAULT_VERSION);
  if (!v) throw new Error(`peers: Quorum's default etcd ${DEFAULT_VERSION} is not one localkube builds (${versions.ETCD_VERSIONS.join(', ')})`);
  return v;
})();
/** coreos/etcd-operator names a member's image `<repository>:v<version>`; this is the repository. */
export const PEER_ETCD_REPOSITORY = 'quorum.local/peers/etcd-shell';
export const PEER_ETCD_IMAGE = `${PEER_ETCD_REPOSITORY}:v${PEER_ETCD_VERSION}`;
export const COREOS_OPERATOR_IMAGE = `quorum.local/peers/coreos-etcd-operator:${versions.COREOS_ETCD_OPERATOR_VERSION}`;

const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The layer entries of etcd-shell (exported for its unit test). */
export async function etcdShellEntries(): Promise<TarEntry[]> {
  const etcd = await etcdBinaryDir(PEER_ETCD_VERSION);
  return [
    ...baseImageEntries,
    ...(await Promise.all(['etcd', 'etcdctl', 'etcdutl'].map((b) => fileEntry(`usr/local/bin/${b}`, join(etcd, b))))),
    await fileEntry('bin/sh', DASH),
    await fileEntry('bin/sleep', SLEEP),
    // dash and sleep need only libc and the loader; sharedLibraries refuses anything undeclared.
    ...(await sharedLibraries(DASH)),
    ...(await sharedLibraries(SLEEP)),
    await fileEntry('usr/bin/nslookup', await nslookupBinary()),
    { type: 'dir', path: 'var/etcd', mode: 0o700 },
    { type: 'dir', path: 'var/lib/etcd', mode: 0o700 },
  ];
}

export async function buildEtcdShellImage(): Promise<ImageArchive> {
  const entries = dedupe(await etcdShellEntries());
  return imageFromEntries(PEER_ETCD_IMAGE, entries, { Cmd: ['/usr/local/bin/etcd'], Env: [PATH_ENV], ExposedPorts: { '2379/tcp': {}, '2380/tcp': {} } });
}

/** The operator: its static binary on the minimal base, as a non-root user (it only talks to the API server). */
export async function buildCoreosOperatorImage(): Promise<ImageArchive> {
  const entries = [...baseImageEntries, await fileEntry('usr/local/bin/etcd-operator', await coreosEtcdOperatorBinary())];
  return imageFromEntries(COREOS_OPERATOR_IMAGE, entries, { Entrypoint: ['/usr/local/bin/etcd-operator'], User: '65532:65532', Env: [PATH_ENV] });
}

/** dash and sleep share their libraries: one entry per path. */
function dedupe(entries: TarEntry[]): TarEntry[] {
  const seen = new Map<string, TarEntry>();
  for (const e of entries) seen.set(e.path, e);
  return [...seen.values()];
}
