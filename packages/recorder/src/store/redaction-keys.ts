// The keys of Secret hashes (`secrets: redact`), kept apart from the records they protect: one Secret in the
// recorder's namespace, `quorum-recorder-redaction-keys`, with one entry per store, named by the store's id
// (written in the store's marker file, layout.ts). Whoever can read a store (its volume or its bucket) then holds
// hashes without their key, and cannot test guesses of a Secret's value offline; only the recorder's
// ServiceAccount (get and patch by name) and those who may read Secrets in its namespace can read the key.
//
// The recorder creates the Secret when it first needs it (it is not in the manifests, so uninstalling the
// recorder keeps it, and reinstalling finds the same keys). A store written before the keys moved holds its key
// in `.redaction-key`: that key is adopted into the Secret, so old records' hashes stay comparable with new ones,
// and the file is then removed from the store.
import { randomBytes } from 'node:crypto';
import { isAlreadyExists, isConflict, Secrets, type Client } from '@quorum/runtime';

export const REDACTION_KEYS_SECRET = 'quorum-recorder-redaction-keys';
const LABELS = { 'app.kubernetes.io/name': 'quorum', 'app.kubernetes.io/component': 'change-recorder' };
/** How many times a write that lost a race with another is read and tried again. */
const CONFLICT_ATTEMPTS = 5;
export const REDACTION_KEY_BYTES = 32;

/** Where a store's redaction key is kept. */
export interface RedactionKeySource {
  /** Where, for messages. */
  readonly description: string;
  /**
   * The key of store `storeId`: the one kept, else `legacy` (the key the store held itself) adopted, else a
   * new one; kept before it is returned, so a store never hashes with a key that could be lost.
   */
  key(storeId: string, legacy: Uint8Array | undefined): Promise<Uint8Array>;
}

type KeysSecret = { metadata: { resourceVersion?: string }; data?: Record<string, string> };

/** The keys in a Secret of the recorder's namespace, read and written through the API server. */
export class SecretRedactionKeys implements RedactionKeySource {
  readonly description: string;
  readonly #client: Client;
  readonly #namespace: string;

  constructor(client: Client, namespace: string) {
    this.#client = client;
    this.#namespace = namespace;
    this.description = `Secret ${namespace}/${REDACTION_KEYS_SECRET}`;
  }

  async key(storeId: string, legacy: Uint8Array | undefined): Promise<Uint8Array> {
    for (let attempt = 1; ; attempt++) {
      const secret = await this.#secret();
      const kept = secret.data?.[storeId];
      if (kept !== undefined) return checkedKey(Buffer.from(kept, 'base64'), `${this.description}, entry ${storeId}`);
      const key = legacy ?? randomBytes(REDACTION_KEY_BYTES);
      try {
        // Guarded by the resourceVersion read: a concurrent writer's entry is never overwritten.
        const key64 = Buffer.from(key).toString('base64');
        await this.#client.mergePatch(Secrets, { namespace: this.#namespace, name: REDACTION_KEYS_SECRET }, { metadata: { resourceVersion: secret.metadata.resourceVersion }, data: { [storeId]: key64 } });
        return key;
      } catch (err) {
        if (!isConflict(err) || attempt >= CONFLICT_ATTEMPTS) throw err;
      }
    }
  }

  async #secret(): Promise<KeysSecret> {
    const key = { namespace: this.#namespace, name: REDACTION_KEYS_SECRET };
    const found = await this.#client.find(Secrets, key);
    if (found) return found;
    try {
      return await this.#client.create(Secrets, { metadata: { ...key, labels: LABELS }, type: 'Opaque', data: {} });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      return await this.#client.get(Secrets, key);
    }
  }
}

/** A key as kept; `where` names it when it is not one the recorder wrote. */
export function checkedKey(key: Uint8Array, where: string): Uint8Array {
  if (key.length >= REDACTION_KEY_BYTES) return key;
  throw new Error(`${where} holds ${key.length} bytes, not the ${REDACTION_KEY_BYTES} of a redaction key`);
}
