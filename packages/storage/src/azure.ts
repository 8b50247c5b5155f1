// Azure Blob Storage through the official SDK. A block blob's staged blocks stay invisible until its block
// list is committed, and uploadStream commits only after the body ended: an interrupted upload leaves no
// blob (the uncommitted blocks are garbage-collected by the service).
import { Readable } from 'node:stream';
import {
  BlobServiceClient,
  RestError,
  StorageSharedKeyCredential,
  type ContainerClient,
  type StoragePipelineOptions,
} from '@azure/storage-blob';
import { CREDENTIAL_KEYS, type AzureLocation } from './location.ts';
import { requireCredential } from './credentials.ts';
import {
  accessDenied,
  bucketNotFound,
  networkCode,
  objectNotFound,
  StorageError,
  storageFailed,
  unreachable,
  type StoreIdentity,
} from './errors.ts';
import { guardedUpload, untilAborted, withErrors, type CallOptions, type ObjectStore, type StoredObject, type StoreOptions, type UploadOptions, type UploadResult } from './store.ts';

const MiB = 1024 * 1024;
/** 4 MiB blocks, four in flight: about 16 MiB of buffers; 50,000 blocks allow a 195 GiB blob. */
const BLOCK_BYTES = 4 * MiB;
const CONCURRENCY = 4;

const ACCESS_CODES = new Set([
  'AuthenticationFailed',
  'AuthorizationFailure',
  'AuthorizationPermissionMismatch',
  'AuthorizationResourceTypeMismatch',
  'InsufficientAccountPermissions',
  'AccountIsDisabled',
  'InvalidAuthenticationInfo',
]);

/** The fields of an Azure Storage connection string (`Key=Value;…`). */
export function parseConnectionString(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const part of text.split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    fields.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  return fields;
}

/** The Blob service URL a connection string names, when it names one. */
function blobEndpoint(fields: Map<string, string>): string | undefined {
  const explicit = fields.get('BlobEndpoint');
  if (explicit) return explicit.replace(/\/+$/, '');
  const account = fields.get('AccountName');
  if (!account) return undefined;
  return `${fields.get('DefaultEndpointsProtocol') ?? 'https'}://${account}.blob.${fields.get('EndpointSuffix') ?? 'core.windows.net'}`;
}

export class AzureStore implements ObjectStore {
  readonly description: string;
  /** The SDK buffers chunks into blocks. */
  readonly chunksDieYoung = false;
  readonly #container: ContainerClient;
  readonly #id: StoreIdentity;

  constructor(destination: AzureLocation, connectionString: string, options: StoreOptions = {}) {
    const secret = destination.credentialsSecret;
    const fields = parseConnectionString(connectionString);
    const endpoint = (destination.endpoint ?? blobEndpoint(fields))?.replace(/\/+$/, '');
    if (!endpoint) throw new StorageError('CredentialsInvalid', `the connectionString in Secret ${secret} names no Blob service (no BlobEndpoint or AccountName), and the destination sets no endpoint`);
    this.#id = { endpoint, bucket: `container ${destination.container}`, secret };
    this.description = `azure://${destination.container} at ${endpoint}`;
    const pipeline: StoragePipelineOptions = {
      // Fewer, shorter waits than the SDK's default (4 tries, up to 2 minutes apart): a Job has a deadline.
      retryOptions: { maxTries: options.maxAttempts ?? 4, retryDelayInMs: 1000, maxRetryDelayInMs: 10_000 },
    };
    const accountName = fields.get('AccountName');
    const accountKey = fields.get('AccountKey');
    const sas = fields.get('SharedAccessSignature');
    let service: BlobServiceClient;
    if (accountName && accountKey) {
      service = new BlobServiceClient(endpoint, new StorageSharedKeyCredential(accountName, accountKey), pipeline);
    } else if (sas) {
      service = new BlobServiceClient(`${endpoint}?${sas.replace(/^\?/, '')}`, undefined, pipeline);
    } else {
      throw new StorageError('CredentialsInvalid', `the connectionString in Secret ${secret} has neither AccountName and AccountKey nor SharedAccessSignature`);
    }
    this.#container = service.getContainerClient(destination.container);
  }

  async upload(key: string, body: Readable, opts: UploadOptions = {}): Promise<UploadResult> {
    const blob = this.#container.getBlockBlobClient(key);
    const stored = await guardedUpload(body, opts, async (stream) => {
      try {
        await blob.uploadStream(stream, BLOCK_BYTES, CONCURRENCY, {
          blobHTTPHeaders: { blobContentType: 'application/octet-stream' },
          ...(opts.signal ? { abortSignal: opts.signal } : {}),
        });
      } catch (err) {
        throw this.#classify(err, 'upload');
      }
    });
    return { key, ...stored };
  }

  async download(key: string, opts: CallOptions = {}): Promise<Readable> {
    try {
      // A dropped connection is resumed from where it stopped, a few times, before the stream errors.
      const response = await untilAborted(this.#container.getBlobClient(key).download(0, undefined, { maxRetryRequests: 5, ...(opts.signal ? { abortSignal: opts.signal } : {}) }), opts.signal);
      const stream = response.readableStreamBody;
      if (!(stream instanceof Readable)) throw storageFailed(this.#id, 'download', new Error('the service returned no body'));
      return withErrors(stream, (err) => this.#classify(err, 'download', key), opts.signal);
    } catch (err) {
      throw this.#classify(err, 'download', key);
    }
  }

  async delete(key: string, opts: CallOptions = {}): Promise<void> {
    try {
      await untilAborted(this.#container.getBlobClient(key).deleteIfExists({ deleteSnapshots: 'include', ...(opts.signal ? { abortSignal: opts.signal } : {}) }), opts.signal);
    } catch (err) {
      throw this.#classify(err, 'delete');
    }
  }

  async list(prefix: string, opts: CallOptions = {}): Promise<StoredObject[]> {
    const objects: StoredObject[] = [];
    const pages = async (): Promise<void> => {
      // Only committed blobs are listed: an upload in progress or abandoned is not a backup.
      for await (const item of this.#container.listBlobsFlat({ prefix, ...(opts.signal ? { abortSignal: opts.signal } : {}) })) {
        objects.push({ key: item.name, sizeBytes: item.properties.contentLength ?? 0, lastModified: item.properties.lastModified });
      }
    };
    try {
      await untilAborted(pages(), opts.signal);
    } catch (err) {
      throw this.#classify(err, 'list');
    }
    return objects;
  }

  close(): void {
    // The SDK's HTTP client keeps no connections that outlive the process's need for them.
  }

  #classify(err: unknown, what: string, key?: string): unknown {
    if (err instanceof StorageError) return err;
    if (err instanceof RestError) {
      const code = typeof err.details === 'object' && err.details !== null && 'errorCode' in err.details && typeof err.details.errorCode === 'string' ? err.details.errorCode : err.code ?? '';
      if (err.statusCode === undefined && (err.code === 'REQUEST_SEND_ERROR' || networkCode(err))) return unreachable(this.#id, err);
      if (ACCESS_CODES.has(code) || err.statusCode === 403 || err.statusCode === 401) return accessDenied(this.#id, `${code || `HTTP ${err.statusCode}`}: ${firstLine(err.message)}`, err);
      if (code === 'ContainerNotFound') return bucketNotFound(this.#id, err);
      if (key !== undefined && (code === 'BlobNotFound' || err.statusCode === 404)) return objectNotFound(this.#id, key, err);
      return storageFailed(this.#id, what, err);
    }
    if (networkCode(err)) return unreachable(this.#id, err);
    return err;
  }
}

/** The service's messages carry a RequestId and Time on further lines: the first says it all. */
function firstLine(text: string): string {
  return text.split('\n')[0]?.trim() ?? text;
}

export async function openAzure(destination: AzureLocation, credentialsDir: string | undefined, options: StoreOptions): Promise<AzureStore> {
  const connectionString = await requireCredential(credentialsDir, 'connectionString', destination.credentialsSecret, CREDENTIAL_KEYS.azure);
  return new AzureStore(destination, connectionString, options);
}
