// Host prerequisites come from one source. Every declared host file or command belongs to the Debian package
// it is declared with (`dpkg -S`), every host path or command that the sources use is declared, and every
// declaration is loaded by what `up` loads, so `up` installs exactly what the code reads. A fresh Debian 12
// machine once failed on /usr/bin/etcdctl, read by the image catalog but missing from a hand-kept list.
import assert from 'node:assert/strict';
import { lstat, readFile, readdir, readlink, realpath } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { hostPrerequisites, run, sharedLibraries } from '@quorum/images';
// What `up` loads before it checks prerequisites (prepare() is in api.ts): every module of localkube and
// @quorum/images, and so every declaration they make.
import '../../src/api.ts';
import { packagesFor } from '../../src/build/prerequisites.ts';

const root = resolve(import.meta.dirname, '../../../..');
const declared = hostPrerequisites();
const declaredNames = new Set(declared.map((p) => `${p.kind}:${p.name}`));

// ---- (a) each declaration against dpkg ----

const dpkgPresent = (await run('sh', ['-c', 'command -v dpkg-query'], { allowFailure: true })).exitCode === 0;

async function installed(pkg: string): Promise<boolean> {
  const r = await run('dpkg-query', ['-W', '-f=${db:Status-Status}', pkg], { allowFailure: true });
  return r.exitCode === 0 && r.stdout.trim() === 'installed';
}

/** The packages dpkg records as shipping exactly `path` (diversion notes are not ownership). */
async function dpkgOwners(path: string): Promise<string[]> {
  const r = await run('dpkg-query', ['-S', path], { allowFailure: true });
  const owners: string[] = [];
  for (const line of r.stdout.split('\n')) {
    if (line.startsWith('diversion by')) continue;
    const sep = line.lastIndexOf(': ');
    if (sep < 0 || line.slice(sep + 2) !== path) continue;
    owners.push(...line.slice(0, sep).split(', ').map((p) => p.replace(/:.*$/, '')));
  }
  return owners;
}

// Debian 12 is merged-/usr: /bin is /usr/bin and so on, but dpkg knows each file under the one name its
// package ships it by (/bin/sh, /lib/x86_64-linux-gnu/libc.so.6, /usr/lib/cni/bridge).
const MERGED: [string, string][] = [['/usr/bin/', '/bin/'], ['/usr/sbin/', '/sbin/'], ['/usr/lib64/', '/lib64/'], ['/usr/lib/', '/lib/']];
const twin = (p: string): string | undefined => {
  for (const [usr, top] of MERGED) {
    if (p.startsWith(usr)) return top + p.slice(usr.length);
    if (p.startsWith(top)) return usr + p.slice(top.length);
  }
  return undefined;
};

/**
 * The names dpkg may know `path` by, nearest first: the path, each hop of its symlink chain (alternatives
 * such as /usr/sbin/iptables → /etc/alternatives/iptables → /usr/sbin/iptables-nft), its real path, and the
 * merged-/usr twin of each.
 */
async function aliases(path: string): Promise<string[]> {
  const chain = [path];
  for (let cur = path; chain.length < 12; ) {
    const stat = await lstat(cur).catch(() => undefined);
    if (!stat?.isSymbolicLink()) break;
    cur = resolve(dirname(cur), await readlink(cur));
    chain.push(cur);
  }
  chain.push(await realpath(path).catch(() => path));
  return [...new Set(chain.flatMap((p) => [p, twin(p)].filter((x): x is string => x !== undefined)))];
}

/** Where `command` is on PATH (root's sbin directories included, as `up` runs as root). */
async function locate(command: string): Promise<string | undefined> {
  const env = { ...process.env, PATH: `${process.env['PATH'] ?? ''}:/usr/local/sbin:/usr/sbin:/sbin` };
  const r = await run('sh', ['-c', 'command -v "$1"', 'sh', command], { env, allowFailure: true });
  return r.exitCode === 0 && r.stdout.trim().startsWith('/') ? r.stdout.trim() : undefined;
}

for (const p of declared.filter((d) => d.debianPackage !== null)) {
  const pkg = p.debianPackage!;
  test(`host ${p.kind} ${p.name} belongs to Debian package ${pkg}`, async (t) => {
    if (!dpkgPresent) return t.skip('environment: dpkg-query is not on this machine (not Debian)');
    if (!(await installed(pkg))) return t.skip(`environment: Debian package ${pkg} is not installed on this machine, so dpkg cannot say what it ships`);
    const path = p.kind === 'file' ? p.name : await locate(p.name);
    assert.ok(path, `${pkg} is installed but ${p.name} is not on PATH: it is declared with the wrong package`);
    const tried: string[] = [];
    for (const alias of await aliases(path)) {
      const owners = await dpkgOwners(alias);
      tried.push(`${alias} → ${owners.join(', ') || 'none'}`);
      if (owners.length === 0) continue;
      assert.ok(owners.includes(pkg), `${p.name} is declared from ${pkg}, but dpkg -S says ${alias} belongs to ${owners.join(', ')}`);
      return;
    }
    assert.fail(`no Debian package ships ${p.name} (tried ${tried.join('; ')})`);
  });
}

test('the only prerequisite that is not a Debian package is Go', () => {
  assert.deepEqual(declared.filter((p) => p.debianPackage === null).map((p) => p.name), ['go']);
});

test('up installs the union of the missing declarations’ packages, each once, and nothing for Go', () => {
  assert.deepEqual(
    packagesFor([
      { kind: 'command', name: 'ctr', debianPackage: 'containerd', why: '' },
      { kind: 'command', name: 'containerd', debianPackage: 'containerd', why: '' },
      { kind: 'file', name: '/usr/bin/etcdctl', debianPackage: 'etcd-client', why: '' },
      { kind: 'command', name: 'go', debianPackage: null, why: '' },
    ]),
    ['containerd', 'etcd-client'],
  );
  // The file that a fresh Debian 12 machine lacked is declared, and so installed.
  assert.ok(packagesFor(declared).includes('etcd-client'));
});

test('every shared library copied into an image is declared (Debian etcd 3.4 and the operator’s Node)', async (t) => {
  // sharedLibraries refuses an undeclared library; this runs it on the binaries the images copy.
  const etcd = declared.find((p) => p.name === '/usr/bin/etcd');
  assert.ok(etcd, '/usr/bin/etcd is declared');
  await sharedLibraries(process.execPath);
  if (dpkgPresent && !(await installed('etcd-server'))) return t.skip('environment: Debian package etcd-server is not installed on this machine');
  await sharedLibraries('/usr/bin/etcd');
});

// ---- (b) the sources against the declarations ----

// Host paths are absolute paths under the directories Debian packages install into. /proc, /sys, /run and
// /var are the kernel's or state, not package contents, and are not checked.
const HOST_PATH = /(['"`])(\/(?:usr|lib|lib64|lib32|bin|sbin|etc|opt)\/[^'"`\s$]*)/g;
// Commands started by name: run/output/commandExists/spawn/execFile('x', …) and a process spec's command: 'x'.
const HOST_COMMAND = /\b(?:run|output|commandExists|spawn|spawnSync|execFile|execFileSync)\(\s*(['"`])([\w.+-]+)\1|\bcommand:\s*(['"`])([\w.+-]+)\3/g;
// The one exclusion: a path on the container side of an image or a pod spec (what runs inside, not what we
// read from the host) sits on a line that sets one of these fields, or says so in a trailing comment
// (`// in the container`) where the path is held in a constant first.
const CONTAINER_SIDE = /\b(?:mountPath|args|Cmd|Entrypoint|Env|WorkingDir)\s*:|\bcommand:\s*\[|\/\/ in the container\b/;
// node, npm and npx are the pinned Node 24 that scripts/node24 installs; they run everything else.
const NODE_ITSELF = new Set(['node', 'npm', 'npx']);
const DECLARATION = /\b(hostFile|hostCommand)\(\s*(['"`])([^'"`$]+)\2/g;

/** The host paths and commands that `source` uses without a declaration in `names` (`kind:name` keys). */
function undeclaredUses(source: string, names: ReadonlySet<string>): string[] {
  const found: string[] = [];
  for (const line of source.split('\n')) {
    const code = line.trim();
    if (code.startsWith('//') || code.startsWith('*') || code.startsWith('/*') || code.startsWith('#')) continue;
    if (!CONTAINER_SIDE.test(line)) {
      for (const m of line.matchAll(HOST_PATH)) if (!names.has(`file:${m[2]!}`)) found.push(m[2]!);
    }
    for (const m of line.matchAll(HOST_COMMAND)) {
      const command = m[2] ?? m[4]!;
      if (!NODE_ITSELF.has(command) && !names.has(`command:${command}`)) found.push(`command ${command}`);
    }
  }
  return found;
}

async function sources(): Promise<string[]> {
  const files: string[] = [];
  const walk = async (dir: string, filter: (name: string) => boolean): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) await walk(full, filter);
      else if (entry.isFile() && filter(entry.name)) files.push(full);
    }
  };
  for (const pkg of await readdir(join(root, 'packages'))) await walk(join(root, 'packages', pkg, 'src'), (n) => n.endsWith('.ts'));
  await walk(join(root, 'scripts'), () => true);
  return files.sort();
}

test('the scan catches an undeclared host read and an undeclared command, and passes declared and container paths', () => {
  const fixture = [
    "const zone = await readFile('/usr/share/zoneinfo/UTC', 'utf8');",
    'await run(`lsof`, [\'-i\']);',
    "await file('usr/local/bin/etcd', '/usr/bin/etcd');",
    "await run('openssl', ['version']);",
    "containers: [{ name: 'coredns', args: ['-conf', '/etc/coredns/Corefile'] }],",
    "// a comment naming '/usr/lib/os-release' reads nothing",
    "const listed = await run('npm', ['ls']);",
  ].join('\n');
  assert.deepEqual(undeclaredUses(fixture, new Set(['file:/usr/bin/etcd', 'command:openssl'])), ['/usr/share/zoneinfo/UTC', 'command lsof']);
});

test('no source under packages/*/src or scripts/ uses a host path or command it does not declare', async () => {
  const problems: string[] = [];
  for (const file of await sources()) {
    for (const use of undeclaredUses(await readFile(file, 'utf8'), declaredNames)) problems.push(`${relative(root, file)}: ${use}`);
  }
  assert.deepEqual(problems, [], 'declare each with hostFile / hostCommand (@quorum/images) next to the code that uses it');
});

test('every declaration in the sources is loaded by `up`, so `up` installs it', async () => {
  const unloaded: string[] = [];
  for (const file of await sources()) {
    for (const m of (await readFile(file, 'utf8')).matchAll(DECLARATION)) {
      const key = `${m[1] === 'hostFile' ? 'file' : 'command'}:${m[3]!}`;
      if (!declaredNames.has(key)) unloaded.push(`${relative(root, file)}: ${key}`);
    }
  }
  assert.deepEqual(unloaded, [], 'declared in a module that localkube/src/api.ts does not load');
});
