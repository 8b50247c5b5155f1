// @quorum/images: deterministic image assembly (our ustar and OCI layout writers, a cache keyed by inputs),
// shared by localkube's node images and the operator's image build, and the one registry of the host files
// and commands that Quorum's code reads or runs (host.ts).
export { tar, type TarEntry } from './tar.ts';
export { buildImageArchive, entriesFromDirectory, type ImageConfig, type ImageSpec } from './oci.ts';
export { cacheRoot, imageCache, cachedImage, contentDigest, imageFromDirectory, imageFromEntries, type ImageArchive } from './cache.ts';
export { baseImageEntries, fileEntry, textEntry, sharedLibraries } from './base.ts';
export { hostCommand, hostFile, hostPrerequisites, isDeclaredHostFile, type HostPrerequisite } from './host.ts';
export { CommandError, commandExists, output, pathExists, run, type RunOptions, type RunResult } from './exec.ts';
