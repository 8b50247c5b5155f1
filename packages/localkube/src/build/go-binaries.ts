// Upstream binaries built from the Go wrapper modules in tools/, cached by exact version outside the clone
// (binCache/<project>-<version>/). A second run finds them and builds nothing.
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hostCommand, pathExists } from '@quorum/images';
import { run } from '../exec.ts';
import { binCache, toolsDir } from '../paths.ts';
import { progress } from '../progress.ts';
import {
  COREDNS_VERSION,
  COREOS_ETCD_OPERATOR_VERSION,
  ETCD_VERSIONS,
  type EtcdVersion,
  FAKE_GCS_SERVER_VERSION,
  HELM_VERSION,
  KUBE_ROUTER_VERSION,
  KUBERNETES_VERSION,
  MINIO_VERSION,
  PROMETHEUS_VERSION,
} from '../versions.ts';

// Not a Debian package here: bookworm's golang is 1.19, so the machine brings its own Go.
const GO = hostCommand('go', null, 'building Kubernetes, etcd and CoreDNS from the Go module proxy (Go ≥ 1.24)');

export interface GoProject {
  /** Cache key, e.g. `kubernetes-v1.34.4`. */
  key: string;
  /** Wrapper module under tools/. */
  module: string;
  packages: string[];
  /** Binaries the build must produce. */
  binaries: string[];
  ldflags?: string;
  /** Go build tags; part of what is built, so a project with tags names them in its key. */
  tags?: string[];
}

function kubernetesLdflags(version: string): string {
  const [, major = '', minor = ''] = /^v(\d+)\.(\d+)/.exec(version) ?? [];
  const stamp = (pkg: string): string[] => [
    `-X ${pkg}.gitVersion=${version}`,
    `-X ${pkg}.gitMajor=${major}`,
    `-X ${pkg}.gitMinor=${minor}`,
    `-X ${pkg}.gitTreeState=clean`,
    `-X ${pkg}.buildDate=1970-01-01T00:00:00Z`,
  ];
  return ['-s -w', ...stamp('k8s.io/component-base/version'), ...stamp('k8s.io/client-go/pkg/version')].join(' ');
}

const KUBERNETES_COMMANDS = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubelet', 'kube-proxy', 'kubectl'];

export const kubernetes: GoProject = {
  key: `kubernetes-${KUBERNETES_VERSION}`,
  module: 'kubernetes',
  packages: KUBERNETES_COMMANDS.map((c) => `k8s.io/kubernetes/cmd/${c}`),
  binaries: KUBERNETES_COMMANDS,
  ldflags: kubernetesLdflags(KUBERNETES_VERSION),
};

export const etcd = Object.fromEntries(
  ETCD_VERSIONS.map((v): [string, GoProject] => [
    v,
    {
      key: `etcd-${v}`,
      module: `etcd-${v.split('.').slice(0, 2).join('.')}`,
      packages: ['./cmd/etcd', 'go.etcd.io/etcd/etcdctl/v3', 'go.etcd.io/etcd/etcdutl/v3'],
      binaries: ['etcd', 'etcdctl', 'etcdutl'],
      ldflags: '-s -w',
    },
  ]),
);

export const coredns: GoProject = {
  key: `coredns-${COREDNS_VERSION}`,
  module: 'coredns',
  packages: ['github.com/coredns/coredns'],
  binaries: ['coredns'],
  ldflags: '-s -w',
};

/**
 * kube-router's network policy controller, run by tools/kube-router's main.go (localkube's NetworkPolicy agent).
 * Keyed by the kube-router version its go.mod pins and the hash of its files: the program is ours, the
 * controller upstream's.
 */
export async function kubeRouterProject(): Promise<GoProject> {
  const dir = join(toolsDir, 'kube-router');
  const goMod = await readFile(join(dir, 'go.mod'), 'utf8');
  const pinned = /^\s*github\.com\/cloudnativelabs\/kube-router\/v2 (v\S+)/m.exec(goMod)?.[1];
  if (pinned !== KUBE_ROUTER_VERSION) throw new Error(`localkube: tools/kube-router/go.mod pins kube-router ${pinned ?? '(none)'}, versions.ts says ${KUBE_ROUTER_VERSION}`);
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum', 'main.go']) hash.update(`${file}\0`).update(await readFile(join(dir, file))).update('\0');
  return { key: `kube-router-${KUBE_ROUTER_VERSION}-${hash.digest('hex').slice(0, 12)}`, module: 'kube-router', packages: ['.'], binaries: ['kube-router'], ldflags: '-s -w' };
}

// MinIO's own release builds stamp these (buildscripts/gen-ldflags.go); a pseudo-version carries the commit's
// time and short hash, so `minio --version` names the exact source instead of DEVELOPMENT.GOGET.
function minioLdflags(pseudoVersion: string): string {
  const [, stamp = '', commit = ''] = /-(\d{14})-([0-9a-f]{12})$/.exec(pseudoVersion) ?? [];
  const [year, month, day, hour, minute, second] = [0, 4, 6, 8, 10, 12].map((i, n) => stamp.slice(i, n === 0 ? 4 : i + 2));
  const pkg = 'github.com/minio/minio/cmd';
  return [
    '-s -w',
    `-X ${pkg}.Version=${year}-${month}-${day}T${hour}:${minute}:${second}Z`,
    `-X ${pkg}.ReleaseTag=DEVELOPMENT.${year}-${month}-${day}T${hour}-${minute}-${second}Z`,
    `-X ${pkg}.CommitID=${commit}`,
    `-X ${pkg}.ShortCommitID=${commit}`,
    `-X ${pkg}.CopyrightYear=${year}`,
  ].join(' ');
}

/** MinIO, the S3 addon's server: large (about 1,000 packages), so built only when the addon is first enabled. */
export const minio: GoProject = {
  key: `minio-${MINIO_VERSION}`,
  module: 'minio',
  packages: ['github.com/minio/minio'],
  binaries: ['minio'],
  ldflags: minioLdflags(MINIO_VERSION),
};

/** fake-gcs-server, the GCS addon's server. */
export const fakeGcsServer: GoProject = {
  key: `fake-gcs-server-${FAKE_GCS_SERVER_VERSION}`,
  module: 'fake-gcs-server',
  packages: ['github.com/fsouza/fake-gcs-server'],
  binaries: ['fake-gcs-server'],
  ldflags: '-s -w',
};

// helm's Makefile stamps its version (unstamped, `helm version` says v3.22) and the Kubernetes version of its
// client-go: `helm template` and `helm lint` use that as .Capabilities.KubeVersion when no cluster is asked,
// and unstamped it would be v1.20.0. The client-go version is read from tools/helm/go.mod, as the Makefile
// reads it from helm's own, so the stamp cannot drift from what the module pins.
async function helmProject(): Promise<GoProject> {
  const goMod = await readFile(join(toolsDir, 'helm', 'go.mod'), 'utf8');
  const minor = /^\s*k8s\.io\/client-go v0\.(\d+)\./m.exec(goMod)?.[1];
  if (!minor) throw new Error('localkube: tools/helm/go.mod pins no k8s.io/client-go');
  const stamp = (pkg: string): string[] => [`-X ${pkg}.k8sVersionMajor=1`, `-X ${pkg}.k8sVersionMinor=${minor}`];
  const ldflags = [
    '-s -w',
    `-X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}`,
    '-X helm.sh/helm/v3/internal/version.gitTreeState=clean',
    ...stamp('helm.sh/helm/v3/pkg/lint/rules'),
    ...stamp('helm.sh/helm/v3/pkg/chartutil'),
  ].join(' ');
  return { key: `helm-${HELM_VERSION}`, module: 'helm', packages: ['helm.sh/helm/v3/cmd/helm'], binaries: ['helm'], ldflags };
}

/** Builds helm (for the operator chart's tests) unless cached; returns the binary's path. Cold: about 940 packages, 105 s on 2 cores. */
export async function helmBinary(): Promise<string> {
  return join(await buildGoProject(await helmProject()), 'helm');
}

// Prometheus's release build (.promu.yml) uses the tags netgo and builtinassets. builtinassets embeds the web
// UI, whose assets are built by npm from web/ui and are not in the module zip, so it is left out: the UI
// pages answer 404 and the HTTP API (all our tests and the addon use) is whole. remove_all_sd with
// enable_kubernetes_sd is upstream's documented way to keep only the service discoveries used (the addon
// finds its targets through the Kubernetes API; file, static and http SD stay): it skips the cloud SDKs,
// which are most of the build. promtool is built from the same module and tags.
const PROMETHEUS_TAGS = ['netgo', 'remove_all_sd', 'enable_kubernetes_sd'];

/** Prometheus and promtool, for the prometheus addon and the alert rules' tests; built on first use. */
export const prometheus: GoProject = {
  key: `prometheus-${PROMETHEUS_VERSION}-kubernetes-sd`,
  module: 'prometheus',
  packages: ['github.com/prometheus/prometheus/cmd/prometheus', 'github.com/prometheus/prometheus/cmd/promtool'],
  binaries: ['prometheus', 'promtool'],
  tags: PROMETHEUS_TAGS,
  // The version `prometheus --version` and prometheus_build_info report, as promu stamps it (the module's
  // v0.3MM.P is release 3.MM.P). The module proxy gives no commit, so the revision stays empty.
  ldflags: `-s -w -X github.com/prometheus/common/version.Version=${prometheusReleaseVersion(PROMETHEUS_VERSION)}`,
};

/** Prometheus 3's Go module versions are v0.<3MM>.<P> for release 3.MM.P (its VERSION file). */
export function prometheusReleaseVersion(moduleVersion: string): string {
  const match = /^v0\.3(\d\d)\.(\d+)$/.exec(moduleVersion);
  if (!match) throw new Error(`localkube: ${moduleVersion} is not a Prometheus 3 module version (v0.3MM.P)`);
  return `3.${Number(match[1])}.${match[2]}`;
}

/** Builds Prometheus and promtool unless cached; returns the directory holding both. Cold: see docs/localkube.md. */
export async function prometheusBinaries(): Promise<{ prometheus: string; promtool: string }> {
  const dir = await buildGoProject(prometheus);
  return { prometheus: join(dir, 'prometheus'), promtool: join(dir, 'promtool') };
}

/**
 * coreos/etcd-operator v0.9.4 for the peers benchmark. It predates Go modules: tools/coreos-etcd-operator pins
 * every dependency to its Gopkg.lock (see the go.mod's comment). Built as released (`-s -w` only shrinks it);
 * its version.Version is a constant in the source, so there is nothing to stamp.
 */
export const coreosEtcdOperator: GoProject = {
  key: `coreos-etcd-operator-${COREOS_ETCD_OPERATOR_VERSION}`,
  module: 'coreos-etcd-operator',
  packages: ['github.com/coreos/etcd-operator/cmd/operator'],
  binaries: ['operator'],
  ldflags: '-s -w',
};

/** Builds coreos/etcd-operator unless cached; returns the binary's path. Cold: about 440 packages (the standard library included), 145 s on 2 cores. */
export async function coreosEtcdOperatorBinary(): Promise<string> {
  return join(await buildGoProject(coreosEtcdOperator), 'operator');
}

/**
 * tools/nslookup, the glibc-like nslookup of the peers benchmark's etcd image (see its main.go), keyed by the
 * hash of its source as it has no upstream version.
 */
async function nslookupProject(): Promise<GoProject> {
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'main.go']) hash.update(`${file}\0`).update(await readFile(join(toolsDir, 'nslookup', file))).update('\0');
  return { key: `nslookup-${hash.digest('hex').slice(0, 12)}`, module: 'nslookup', packages: ['.'], binaries: ['nslookup'], ldflags: '-s -w' };
}

/** Builds tools/nslookup unless cached; returns the binary's path. */
export async function nslookupBinary(): Promise<string> {
  return join(await buildGoProject(await nslookupProject()), 'nslookup');
}

/**
 * tools/controller-runtime-compare, the controller-runtime side of the runtime's compare benchmark
 * (packages/runtime/bench/compare.bench.ts). Keyed by the controller-runtime version its go.mod pins and the hash
 * of its files, so a changed program or dependency is built again.
 */
async function controllerRuntimeCompareProject(): Promise<GoProject> {
  const dir = join(toolsDir, 'controller-runtime-compare');
  const goMod = await readFile(join(dir, 'go.mod'), 'utf8');
  const version = /^\s*sigs\.k8s\.io\/controller-runtime (v\S+)/m.exec(goMod)?.[1];
  if (!version) throw new Error('localkube: tools/controller-runtime-compare/go.mod pins no sigs.k8s.io/controller-runtime');
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum', 'main.go']) hash.update(`${file}\0`).update(await readFile(join(dir, file))).update('\0');
  const key = `controller-runtime-compare-${version}-${hash.digest('hex').slice(0, 12)}`;
  return { key, module: 'controller-runtime-compare', packages: ['.'], binaries: ['controller-runtime-compare'], ldflags: '-s -w' };
}

/** Builds tools/controller-runtime-compare unless cached; returns the binary's path. Cold: about 400 packages, minutes on 2 cores. */
export async function controllerRuntimeCompareBinary(): Promise<string> {
  return join(await buildGoProject(await controllerRuntimeCompareProject()), 'controller-runtime-compare');
}

/** The directory holding etcd, etcdctl and etcdutl of `version` (built unless cached), as the etcd images use them. */
export async function etcdBinaryDir(version: EtcdVersion): Promise<string> {
  const project = etcd[version];
  if (!project) throw new Error(`localkube: etcd ${version} is not one of ETCD_VERSIONS`);
  return buildGoProject(project);
}

/** Our pause binary is keyed by the hash of its source, since it has no upstream version. */
async function pauseProject(): Promise<GoProject> {
  const source = await readFile(join(toolsDir, 'pause', 'main.go'));
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 12);
  return { key: `pause-${hash}`, module: 'pause', packages: ['.'], binaries: ['pause'], ldflags: '-s -w' };
}

export function projectDir(project: GoProject): string {
  return join(binCache, project.key);
}

async function built(project: GoProject): Promise<boolean> {
  return (await Promise.all(project.binaries.map((b) => pathExists(join(projectDir(project), b))))).every(Boolean);
}

/** A process's identity that survives PID reuse: its PID and its start time (field 22 of /proc/PID/stat). */
async function processIdentity(pid: number): Promise<string | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  const afterName = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  return afterName ? `${pid}:${afterName[19]}` : undefined;
}

/** Whether the lock's holder is gone: its process has ended, or its PID is someone else's now. */
async function holderGone(holder: string, lockAgeMs: number): Promise<boolean> {
  // Written right after the lock file is created; empty for longer means its creator died in between.
  if (holder === '') return lockAgeMs > 10_000;
  const pid = Number(holder.split(':')[0]);
  return !(pid > 0) || (await processIdentity(pid)) !== holder;
}

/**
 * Holds `<dir>.lock` (the holder's PID and start time) while `work` runs: the test harness builds ahead in
 * the background while tests may ask for the same project, and two builds into one `.partial` would clobber
 * each other. A waiter says every 30 s whom it waits for. A lock whose holder is gone is taken over by
 * renaming it away first, which only one waiter can do.
 */
export async function withBuildLock<T>(project: GoProject, work: () => Promise<T>): Promise<T> {
  const lock = `${projectDir(project)}.lock`;
  const me = await processIdentity(process.pid);
  await mkdir(binCache, { recursive: true });
  const t0 = Date.now();
  let lastReport = t0;
  for (;;) {
    try {
      await writeFile(lock, me ?? String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = (await readFile(lock, 'utf8').catch(() => undefined))?.trim();
    const age = Date.now() - ((await stat(lock).catch(() => undefined))?.mtimeMs ?? Date.now());
    if (holder !== undefined && (await holderGone(holder, age))) {
      const away = `${lock}.stale-${process.pid}`;
      if (await rename(lock, away).then(() => true, () => false)) await rm(away, { force: true });
      continue;
    }
    if (Date.now() - lastReport > 30_000) {
      lastReport = Date.now();
      progress(`waiting for process ${holder?.split(':')[0] || '?'} to finish building ${project.key} (${Math.round((Date.now() - t0) / 1000)}s)`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  try {
    return await work();
  } finally {
    await rm(lock, { force: true });
  }
}

/** Builds `project` unless its cached binaries exist; returns the directory holding them. */
export async function buildGoProject(project: GoProject): Promise<string> {
  const dir = projectDir(project);
  if (await built(project)) return dir;
  return withBuildLock(project, async () => (await built(project)) ? dir : compile(project));
}

async function compile(project: GoProject): Promise<string> {
  const dir = projectDir(project);
  const partial = `${dir}.partial`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  progress(`building ${project.key} from the Go module proxy (tools/${project.module}); this takes minutes on a cold cache`);
  let compiled = 0;
  let lastReport = Date.now();
  const t0 = Date.now();
  try {
    await run(
      GO,
      [
        'build',
        '-v',
        '-trimpath',
        ...(project.tags?.length ? ['-tags', project.tags.join(',')] : []),
        ...(project.ldflags ? ['-ldflags', project.ldflags] : []),
        '-o',
        `${partial}/`,
        ...project.packages,
      ],
      {
        cwd: join(toolsDir, project.module),
        env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=mod', GOTOOLCHAIN: process.env['GOTOOLCHAIN'] ?? 'auto' },
        onLine: () => {
          compiled++;
          if (Date.now() - lastReport > 15_000) {
            lastReport = Date.now();
            progress(`building ${project.key}: ${compiled} packages compiled (${Math.round((Date.now() - t0) / 1000)}s)`);
          }
        },
      },
    );
  } catch (err) {
    throw new Error(`localkube: building ${project.key} (tools/${project.module}) failed: ${(err as Error).message}`, { cause: err });
  }
  const built = new Set(await readdir(partial));
  const absent = project.binaries.filter((b) => !built.has(b));
  if (absent.length > 0) throw new Error(`localkube: building ${project.key} produced no ${absent.join(', ')}`);
  await rm(dir, { recursive: true, force: true });
  await rename(partial, dir);
  progress(`built ${project.key} in ${Math.round((Date.now() - t0) / 1000)}s`);
  return dir;
}

export interface Binaries {
  kubernetes: string;
  etcd: Record<string, string>;
  coredns: string;
  pause: string;
  /** Directory of tools/kube-router's `kube-router` (the NetworkPolicy agent). */
  kubeRouter: string;
}

/** Builds (or finds) every upstream binary localkube needs, one project at a time (2 cores: parallel builds only thrash). */
export async function ensureBinaries(): Promise<Binaries> {
  const kube = await buildGoProject(kubernetes);
  const etcdDirs: Record<string, string> = {};
  for (const v of ETCD_VERSIONS) etcdDirs[v] = await buildGoProject(etcd[v]!);
  return {
    kubernetes: kube,
    etcd: etcdDirs,
    coredns: await buildGoProject(coredns),
    pause: await buildGoProject(await pauseProject()),
    kubeRouter: await buildGoProject(await kubeRouterProject()),
  };
}
