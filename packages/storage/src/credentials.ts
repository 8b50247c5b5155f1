// The credentials Secret, as Kubernetes mounts it: one file per key in a directory. Only the process that
// opens the store reads it (the etcd backup agent, the change recorder); values never reach a log or a message.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StorageError } from './errors.ts';

/** A key's value with surrounding whitespace (a trailing newline from `kubectl create secret --from-file`) removed; undefined when absent. */
export async function readCredential(dir: string | undefined, key: string): Promise<string | undefined> {
  if (dir === undefined) return undefined;
  try {
    const value = (await readFile(join(dir, key), 'utf8')).trim();
    return value === '' ? undefined : value;
  } catch (err) {
    if (typeof err === 'object' && err !== null && 'code' in err && err.code === 'ENOENT') return undefined;
    throw new StorageError('CredentialsInvalid', `cannot read key ${key} of the credentials Secret mounted at ${dir}: ${err instanceof Error ? err.message : String(err)}`, err);
  }
}

export async function requireCredential(dir: string | undefined, key: string, secret: string, all: readonly string[]): Promise<string> {
  const value = await readCredential(dir, key);
  if (value === undefined) {
    throw new StorageError('CredentialsInvalid', `the credentials Secret ${secret} has no key ${key} (it must hold ${all.join(' and ')})`);
  }
  return value;
}
