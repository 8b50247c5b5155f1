// Real object-store servers for unit tests, as child processes on 127.0.0.1 with their data in a temp dir:
// MinIO (S3), fake-gcs-server (GCS) and Azurite (Azure Blob). Each is started by the command a caller names
// (default: the server's own executable on PATH); @quorum/localkube/testing/storage passes the ones it
// builds. Killed by stop(), and by a process-exit backstop.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import { freePorts } from './ports.ts';

/** Azurite's fixed development account (documented, not a secret). */
export const AZURITE_ACCOUNT = 'devstoreaccount1';
export const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';
export const MINIO_USER = 'quorum-test';
export const MINIO_PASSWORD = 'quorum-test-password';

export interface StorageServer {
  /** The server's URL (for Azurite, with the account: http://127.0.0.1:PORT/devstoreaccount1). */
  endpoint: string;
  dir: string;
  /** The server's log, for failure messages. */
  logTail(lines?: number): string;
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
let backstop = false;
function installBackstop(): void {
  if (backstop) return;
  backstop = true;
  process.on('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}

export interface StorageServerOptions {
  /**
   * The command that runs the server, before its arguments: an executable and any arguments of its own
   * (e.g. `[process.execPath, '/path/to/azurite-blob.js']`). Default: the server's executable on PATH
   * (`minio`, `fake-gcs-server`, `azurite-blob`).
   */
  command?: readonly string[];
}

function commandOf(options: StorageServerOptions, onPath: string): [string, string[]] {
  const [executable, ...args] = options.command ?? [onPath];
  if (executable === undefined) throw new Error('StorageServerOptions.command: empty');
  return [executable, args];
}

async function launch(name: string, command: string, args: string[], env: NodeJS.ProcessEnv, ready: (endpoint: string) => Promise<boolean>, endpoint: string): Promise<StorageServer> {
  const dir = await mkdtemp(join(tmpdir(), `quorum-${name}-`));
  const logFile = join(dir, 'server.log');
  const fd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    // The test's own PATH is passed on as it is (none when unset): a command named without a path is found on it.
    const path = process.env.PATH === undefined ? {} : { PATH: process.env.PATH };
    child = spawn(command, args.map((a) => a.replaceAll('{dir}', join(dir, 'data'))), { stdio: ['ignore', fd, fd], env: { ...path, HOME: dir, ...env }, cwd: dir });
  } finally {
    closeSync(fd);
  }
  installBackstop();
  live.add(child);
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      live.delete(child);
      resolve();
    });
  });
  const logTail = (lines = 30): string => {
    try {
      return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  };
  const stop = async (): Promise<void> => {
    if (!exited) {
      child.kill('SIGKILL');
      await exit;
    }
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) {
      const log = logTail();
      await stop();
      throw new Error(`${name} exited while starting:\n${log}`);
    }
    if (await ready(endpoint).catch(() => false)) break;
    if (Date.now() > deadline) {
      const log = logTail();
      await stop();
      throw new Error(`${name} not ready after 60 s:\n${log}`);
    }
    await sleep(200);
  }
  return { endpoint, dir, logTail, stop };
}

async function answers(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  await res.body?.cancel();
  return res.status < 500;
}

export async function startAzurite(options: StorageServerOptions = {}): Promise<StorageServer> {
  const [command, prefix] = commandOf(options, 'azurite-blob');
  const [port] = await freePorts(1);
  const endpoint = `http://127.0.0.1:${port}/${AZURITE_ACCOUNT}`;
  return launch(
    'azurite',
    command,
    [...prefix, '--blobHost', '127.0.0.1', '--blobPort', String(port), '--location', '{dir}', '--silent', '--skipApiVersionCheck', '--disableTelemetry'],
    {},
    (e) => answers(`${e}?comp=list`),
    endpoint,
  );
}

export function azuriteConnectionString(endpoint: string, key = AZURITE_KEY): string {
  return `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${key};BlobEndpoint=${endpoint};`;
}

export async function createAzuriteContainer(endpoint: string, container: string): Promise<void> {
  await new BlobServiceClient(endpoint, new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY)).getContainerClient(container).create();
}

export async function startMinio(options: StorageServerOptions = {}): Promise<StorageServer> {
  const [command, prefix] = commandOf(options, 'minio');
  const [port, console] = await freePorts(2);
  const endpoint = `http://127.0.0.1:${port}`;
  return launch(
    'minio',
    command,
    [...prefix, 'server', '{dir}', '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${console}`, '--quiet'],
    { MINIO_ROOT_USER: MINIO_USER, MINIO_ROOT_PASSWORD: MINIO_PASSWORD, MINIO_BROWSER: 'off' },
    async (e) => (await fetch(`${e}/minio/health/ready`, { signal: AbortSignal.timeout(2000) })).status === 200,
    endpoint,
  );
}

export async function createMinioBucket(endpoint: string, bucket: string): Promise<void> {
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: MINIO_USER, secretAccessKey: MINIO_PASSWORD } });
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } finally {
    client.destroy();
  }
}

export async function startFakeGcs(options: StorageServerOptions = {}): Promise<StorageServer> {
  const [command, prefix] = commandOf(options, 'fake-gcs-server');
  const [port] = await freePorts(1);
  const endpoint = `http://127.0.0.1:${port}`;
  return launch(
    'fake-gcs-server',
    command,
    [...prefix, '-scheme', 'http', '-host', '127.0.0.1', '-port', String(port), '-backend', 'filesystem', '-filesystem-root', '{dir}', '-external-url', endpoint, '-public-host', `127.0.0.1:${port}`, '-log-level', 'warn'],
    {},
    (e) => answers(`${e}/storage/v1/b`),
    endpoint,
  );
}

export async function createGcsBucket(endpoint: string, bucket: string): Promise<void> {
  const res = await fetch(`${endpoint}/storage/v1/b?project=quorum-test`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: bucket }), signal: AbortSignal.timeout(5000) });
  if (res.status !== 200) throw new Error(`creating bucket ${bucket}: HTTP ${res.status}: ${await res.text()}`);
}

/** A credentials Secret as Kubernetes mounts it: a folder with one file per key. */
export async function credentialsDir(parent: string, name: string, keys: Record<string, string>): Promise<string> {
  const dir = join(parent, name);
  await mkdir(dir, { recursive: true });
  for (const [key, value] of Object.entries(keys)) await writeFile(join(dir, key), `${value}\n`);
  return dir;
}
