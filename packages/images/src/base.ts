// What every image starts from: a minimal distroless-like base, files copied from the host, and the shared
// libraries a dynamically linked binary needs (Debian's etcd 3.4, the operator's Node 24).
import { readFile } from 'node:fs/promises';
import { output } from './exec.ts';
import { hostCommand, hostFile, isDeclaredHostFile } from './host.ts';
import type { TarEntry } from './tar.ts';

/** A layer entry with the contents of host file `from` (declare `from` with hostFile where it is chosen). */
export const fileEntry = async (path: string, from: string, mode = 0o755): Promise<TarEntry> => ({ type: 'file', path, mode, data: await readFile(from) });
export const textEntry = (path: string, content: string, mode = 0o644): TarEntry => ({ type: 'file', path, mode, data: Buffer.from(content) });

/** The files of a minimal distroless-like base: users, name service switch, a writable /tmp. */
export const baseImageEntries: TarEntry[] = [
  textEntry('etc/passwd', 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n'),
  textEntry('etc/group', 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n'),
  textEntry('etc/nsswitch.conf', 'hosts: files dns\n'),
  { type: 'dir', path: 'tmp', mode: 0o1777 },
  { type: 'dir', path: 'root', mode: 0o700 },
  { type: 'dir', path: 'home/nonroot', mode: 0o700 },
];

const LDD = hostCommand('ldd', 'libc-bin', 'listing the shared libraries copied into images');
const READLINK = hostCommand('readlink', 'coreutils', 'resolving shared-library symlinks');

// The shared libraries that `ldd` reports for the binaries we copy into images, by the path ldd prints on
// Debian 12 amd64 (the only platform our images are built for, see oci.ts). They are declared here, one
// by one with the package `dpkg -S` names, rather than resolved with dpkg at build time: that keeps what
// `up` installs knowable before anything runs, and sharedLibraries refuses any library not listed, so a
// binary that starts needing another library fails the build by name instead of shipping an undeclared file.
const LIBC_WHY = 'shared library of Debian etcd 3.4 and Node 24, copied into their images';
hostFile('/lib64/ld-linux-x86-64.so.2', 'libc6', LIBC_WHY);
hostFile('/lib/x86_64-linux-gnu/libc.so.6', 'libc6', LIBC_WHY);
hostFile('/lib/x86_64-linux-gnu/libm.so.6', 'libc6', LIBC_WHY);
hostFile('/lib/x86_64-linux-gnu/libdl.so.2', 'libc6', LIBC_WHY);
hostFile('/lib/x86_64-linux-gnu/libpthread.so.0', 'libc6', LIBC_WHY);
hostFile('/lib/x86_64-linux-gnu/libstdc++.so.6', 'libstdc++6', 'shared library of Node 24, copied into the operator image');
hostFile('/lib/x86_64-linux-gnu/libgcc_s.so.1', 'libgcc-s1', 'shared library of Node 24, copied into the operator image');

/** The shared libraries a dynamically linked binary needs, as layer entries at the paths ldd reports. */
export async function sharedLibraries(binary: string): Promise<TarEntry[]> {
  const ldd = await output(LDD, [binary]);
  const paths = [...ldd.matchAll(/(\/\S+) \(0x/g)].map((m) => m[1]!);
  const undeclared = paths.filter((p) => !isDeclaredHostFile(p));
  if (undeclared.length > 0) {
    throw new Error(
      `${binary} needs shared libraries that no hostFile declaration names, so \`up\` would not install their packages: ` +
        `${undeclared.join(', ')}. Declare each in packages/images/src/base.ts with the package \`dpkg -S <path>\` names.`,
    );
  }
  const entries: TarEntry[] = [];
  for (const path of paths) {
    const real = await output(READLINK, ['-f', path]);
    entries.push(await fileEntry(path.slice(1), real));
  }
  return entries;
}

// Redis 7.0.15 from Debian 12, the Redis operator's server image (packages/redis-operator/src/image/redis.ts): its
// packages are downloaded and unpacked into the cache, never installed; these are what it takes from the host.
const REDIS_WHY = 'shared library of Debian Redis 7.0.15, copied into its image';
hostFile('/lib/x86_64-linux-gnu/libatomic.so.1', 'libatomic1', REDIS_WHY);
hostFile('/lib/x86_64-linux-gnu/libssl.so.3', 'libssl3', REDIS_WHY);
hostFile('/lib/x86_64-linux-gnu/libcrypto.so.3', 'libssl3', REDIS_WHY);
hostFile('/lib/x86_64-linux-gnu/libsystemd.so.0', 'libsystemd0', REDIS_WHY);
hostFile('/lib/x86_64-linux-gnu/libcap.so.2', 'libcap2', REDIS_WHY);
hostFile('/lib/x86_64-linux-gnu/libgcrypt.so.20', 'libgcrypt20', REDIS_WHY);
hostFile('/lib/x86_64-linux-gnu/liblzma.so.5', 'liblzma5', REDIS_WHY);
hostFile('/lib/x86_64-linux-gnu/libzstd.so.1', 'libzstd1', REDIS_WHY);
hostFile('/lib/x86_64-linux-gnu/liblz4.so.1', 'liblz4-1', REDIS_WHY);
hostFile('/lib/x86_64-linux-gnu/libgpg-error.so.0', 'libgpg-error0', REDIS_WHY);
hostCommand('apt-get', 'apt', 'downloading Debian packages (Redis) into the cache for images, without installing them');
hostCommand('apt-cache', 'apt', 'finding the Debian Redis version to download');
hostCommand('dpkg-deb', 'dpkg', 'unpacking downloaded Debian packages for images');
