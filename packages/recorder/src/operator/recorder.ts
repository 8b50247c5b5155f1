// The recorder process: a runtime Manager with the ChangeRecorder controller, and the sessions (one per
// ChangeRecorder) that watch the configured kinds and write the records.
import { hostname } from 'node:os';
import { Manager, generationChanged, type Logger, type ManagerOptions } from '@quorum/runtime';
import type { ChangeRecorder } from '../api/changerecorder.ts';
import type { UserSource } from '../attribution/admitted-users.ts';
import { changeRecorderReconciler, type Sessions } from '../recorder/reconcile.ts';
import { RecorderSession } from '../recorder/session.ts';
import { DEFAULT_CREDENTIALS_ROOT } from './config.ts';
import { ChangeRecorders } from '../resources.ts';
import { storeLocationKey, type StoreLocation } from '../store/open-store.ts';
import { SecretRedactionKeys } from '../store/redaction-keys.ts';

/** Under a stream of changes, status is refreshed at most this often. */
export const STATUS_REFRESH_MS = 2_000;

export interface RecorderOptions {
  /** The directory every ChangeRecorder's storage path is relative to: the recorder's volume. */
  storageRoot: string;
  /** The folder the object stores' credentials Secrets are mounted below, one folder per Secret; default DEFAULT_CREDENTIALS_ROOT. */
  credentialsRoot?: string;
  /** The recorder's namespace: where the Secret of the stores' redaction keys is (REDACTION_KEYS_SECRET). */
  namespace: string;
  manager?: Partial<ManagerOptions>;
  logger?: Logger;
  /** Store writes in flight at once, per ChangeRecorder. */
  writeConcurrency?: number;
  /** The reportingInstance of its Events (the pod's name); default the host name. */
  instance?: string;
  /**
   * The admission webhook that tells users (attribution/webhook.ts): the users it saw, and why it is not
   * serving yet. Unset: the recorder runs without it, and records that ask for users say so.
   */
  usersWebhook?: { users: UserSource; problem: () => string | undefined };
}

/** The reportingController of the recorder's Events. */
export const EVENT_CONTROLLER = 'history.quorum.dev/recorder';

/** The running sessions, by ChangeRecorder name; closed for good when the process stops. */
export class SessionRegistry implements Sessions {
  readonly #open: (name: string, location: StoreLocation) => Promise<RecorderSession>;
  readonly #sessions = new Map<string, RecorderSession>();
  #closed = false;

  constructor(open: (name: string, location: StoreLocation) => Promise<RecorderSession>) {
    this.#open = open;
  }

  get(name: string): RecorderSession | undefined {
    return this.#sessions.get(name);
  }

  async open(name: string, location: StoreLocation): Promise<RecorderSession> {
    if (this.#closed) throw new Error('the recorder is stopping');
    const existing = this.#sessions.get(name);
    if (existing && storeLocationKey(existing.location) === storeLocationKey(location)) return existing;
    if (existing) await this.close(name);
    const session = await this.#open(name, location);
    this.#sessions.set(name, session);
    return session;
  }

  async close(name: string): Promise<void> {
    const session = this.#sessions.get(name);
    this.#sessions.delete(name);
    await session?.close();
  }

  async closeAll(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#sessions.keys()].map((name) => this.close(name)));
  }
}

export interface Recorder {
  manager: Manager;
  sessions: SessionRegistry;
}

export async function createRecorder(options: RecorderOptions): Promise<Recorder> {
  const manager = await Manager.create({ ...(options.logger ? { logger: options.logger } : {}), ...options.manager });
  const recorders = manager.informer(ChangeRecorders);
  const key = (name: string): { namespace: string; name: string } => ({ namespace: '', name });
  const redactionKeys = new SecretRedactionKeys(manager.client, options.namespace);
  let refresh: (name: string) => void = () => undefined;
  let wake: (name: string) => void = () => undefined;
  const sessions = new SessionRegistry((name, location) =>
    RecorderSession.open({
      name,
      location,
      client: manager.client,
      redactionKeys,
      log: manager.log.child({ changeRecorder: name }),
      metrics: manager.metrics.retries,
      onActivity: () => refresh(name),
      onNamespacesChanged: () => wake(name),
      writeConcurrency: options.writeConcurrency,
      ...(options.usersWebhook ? { users: options.usersWebhook.users } : {}),
    }),
  );
  const controller = manager
    .controller('changerecorder')
    // Our own status writes do not change the generation, so they do not wake us.
    .for(ChangeRecorders, { predicates: [generationChanged] })
    // A deleted recorder may free a storage path another one waits for.
    .watches(ChangeRecorders, (_deleted: ChangeRecorder) => recorders.store.keys().map(key), { predicates: [(e) => e.type === 'delete'] })
    .complete(
      changeRecorderReconciler({
        client: manager.client,
        recorders,
        sessions,
        storageRoot: options.storageRoot,
        credentialsRoot: options.credentialsRoot ?? DEFAULT_CREDENTIALS_ROOT,
        events: manager.eventRecorder({ controller: EVENT_CONTROLLER, instance: options.instance ?? hostname() }),
        ...(options.usersWebhook ? { usersWebhookProblem: options.usersWebhook.problem } : {}),
      }),
    );
  refresh = (name) => controller.queue.addAfter(name, STATUS_REFRESH_MS);
  wake = (name) => controller.enqueue(key(name));
  manager.add({
    name: 'recorder-sessions',
    // Runs where the controller runs (the leader); stopping it stops every watch and waits for writes in flight.
    start: async (signal) => {
      await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
      await sessions.closeAll();
    },
  });
  return { manager, sessions };
}
