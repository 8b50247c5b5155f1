// Host prerequisites: exactly what localkube's code declares with hostFile / hostCommand (@quorum/images),
// each declaration next to the code that reads the file or runs the command. `up` installs the Debian
// packages of the missing ones (as root, with apt-get --no-install-recommends) and stops with a message
// naming whatever is still missing. There is no list here to forget an entry in: api.ts imports every
// module of localkube before this runs, so every declaration is registered (host-prerequisites.test.ts checks).
import { access, constants } from 'node:fs/promises';
import { commandExists, hostCommand, hostPrerequisites, run, type HostPrerequisite } from '@quorum/images';
import { progress } from '../progress.ts';

const APT_GET = hostCommand('apt-get', 'apt', 'installing the missing Debian packages');

async function present(p: HostPrerequisite): Promise<boolean> {
  if (p.kind === 'command') return commandExists(p.name);
  try {
    await access(p.name, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

async function missing(): Promise<HostPrerequisite[]> {
  const all = hostPrerequisites();
  const results = await Promise.all(all.map(async (p) => ((await present(p)) ? null : p)));
  return results.filter((p): p is HostPrerequisite => p !== null);
}

/** The Debian packages that provide `absent`, each once: what `up` installs. */
export function packagesFor(absent: readonly HostPrerequisite[]): string[] {
  return [...new Set(absent.map((p) => p.debianPackage).filter((p): p is string => p !== null))].sort();
}

export async function ensurePrerequisites(): Promise<void> {
  let absent = await missing();
  const installable = packagesFor(absent);
  if (installable.length > 0 && process.getuid?.() === 0 && (await commandExists(APT_GET))) {
    progress(`installing Debian packages: ${installable.join(' ')}`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    await run(APT_GET, ['update', '-q'], { env });
    await run(APT_GET, ['install', '-y', '-q', '--no-install-recommends', ...installable], { env });
    absent = await missing();
  }
  if (absent.length > 0) {
    const lines = absent.map((p) => `  - ${p.name}${p.debianPackage ? ` (Debian package ${p.debianPackage})` : ''}: ${p.why}`);
    throw new Error(`localkube: missing build prerequisites:\n${lines.join('\n')}`);
  }
}
