// `quorum history`: list, show, diff and restore the records of the change recorder (and install it: install.ts).
// The records are read through the recorder's read-only endpoint (via the API server's service proxy, so a kubeconfig is enough)
// or from a directory (--path); restore writes through the API server with the caller's own credentials.
//
// historyCommand(argv, io) is the whole command: the `quorum` CLI calls it with the arguments after
// `history` and exits with the code it returns (0 done, 1 failed, 2 usage).
import { runCommand, type CommandIO } from '@quorum/kit';
import { Client, DiscoveryClient, kubeconfigNamespace } from '@quorum/runtime';
import { describeObject } from '../history/handlers.ts';
import type { KindInfo, ObjectId } from '../history/protocol.ts';
import { HISTORY_USAGE, parseHistoryArgs, type HistoryArgs } from './args.ts';
import { CliError } from './errors.ts';
import { deniedLines, objectState, objectsTable, recordLine, recordsTable } from './format.ts';
import { imageCommand } from './image.ts';
import { installCommand } from './install.ts';
import { resolveKind } from './kinds.ts';
import { restoreRecord, RESTORE_FIELD_MANAGER } from './restore.ts';
import { chooseRecord, chooseRestore } from './select.ts';
import { localSource, proxySource, type HistorySource } from './source.ts';

/** Runs `quorum history <argv>`; resolves with the exit code. */
export function historyCommand(argv: readonly string[], io: CommandIO = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  // install and image have options of their own, and read no records.
  if (argv[0] === 'install') return installCommand(argv.slice(1), io);
  if (argv[0] === 'image') return imageCommand(argv.slice(1), io);
  const parse = (): { args: HistoryArgs; help: boolean } => {
    const args = parseHistoryArgs(argv, io.env ?? process.env);
    return { args, help: args.verb === 'help' };
  };
  return runCommand({ program: 'quorum history', usage: HISTORY_USAGE, parse, act: ({ args }) => runInSession(args, io) }, io);
}

async function runInSession(args: HistoryArgs, io: CommandIO): Promise<void> {
  const session = new Session(args);
  try {
    await run(args, session, io);
  } finally {
    session.close();
  }
}

/** What a command needs, made on first use: the record source, the kubeconfig's namespace, a client. */
class Session {
  readonly #args: HistoryArgs;
  #source: Promise<HistorySource> | undefined;
  #client: Promise<Client> | undefined;

  constructor(args: HistoryArgs) {
    this.#args = args;
  }

  source(): Promise<HistorySource> {
    const a = this.#args;
    this.#source ??= a.path !== undefined
      ? Promise.resolve(localSource(a.path))
      : proxySource({ kubeconfig: a.kubeconfig, context: a.context, token: a.token, recorderNamespace: a.recorderNamespace, recorderService: a.recorderService });
    return this.#source;
  }

  client(): Promise<Client> {
    this.#client ??= Client.connect({ kubeconfig: this.#args.kubeconfig, context: this.#args.context });
    return this.#client;
  }

  /** The kubeconfig context's namespace, as kubectl defaults to it; none when reading a path or without a kubeconfig. */
  contextNamespace(): string | undefined {
    if (this.#args.path !== undefined && this.#args.kubeconfig === undefined) return undefined;
    try {
      return kubeconfigNamespace({ kubeconfig: this.#args.kubeconfig, context: this.#args.context });
    } catch {
      return undefined;
    }
  }

  close(): void {
    void this.#client?.then((c) => c.close(), () => undefined);
    void this.#source?.then((s) => s.close(), () => undefined);
  }
}

/** The object KIND/NAME names: its kind among those with records, in -n, the context's namespace, or default. */
function objectOf(args: HistoryArgs, kind: KindInfo, session: Session): ObjectId {
  const name = args.target!.name!;
  const namespace = kind.namespaced ? (args.namespace ?? session.contextNamespace() ?? 'default') : '';
  return { group: kind.group, kind: kind.kind, namespace, name };
}

async function run(args: HistoryArgs, session: Session, io: CommandIO): Promise<void> {
  const out = (text: string): void => void io.stdout.write(text);
  const err = (text: string): void => void io.stderr.write(text);
  const source = await session.source();
  const kind = args.target ? resolveKind(args.target.kind, (await source.kinds()).kinds) : undefined;

  if (args.verb === 'list' && (kind === undefined || args.target?.name === undefined)) {
    const namespace = kind && !kind.namespaced ? undefined : args.namespace;
    const response = await source.objects({ namespace, ...(kind ? { group: kind.group, kind: kind.kind } : {}) }, args.recorder);
    if (args.output === 'json') out(`${JSON.stringify(response, null, 2)}\n`);
    else if (response.objects.length > 0) out(objectsTable(response));
    else err(`no records${kind ? ` of ${kind.kind}` : ''}${namespace !== undefined ? ` in namespace ${namespace}` : ''}\n`);
    err(deniedLines(response.denied));
    return;
  }

  const object = objectOf(args, kind!, session);
  if (args.verb === 'list' && args.namespace === undefined && kind!.namespaced) {
    // list KIND/NAME without -n: that name in every namespace it has records in.
    const found = await source.objects({ group: object.group, kind: object.kind, name: object.name }, args.recorder);
    err(deniedLines(found.denied));
    const namespaces = [...new Set(found.objects.map((o) => o.namespace))];
    if (namespaces.length === 0) throw new CliError(`no records of ${object.kind} ${object.name} in any namespace you may list${found.denied.length ? ' (some were not shown, see above)' : ''}`);
    for (const [i, namespace] of namespaces.entries()) {
      const response = await source.records({ ...object, namespace }, args.recorder);
      if (args.output === 'json') out(`${JSON.stringify(response, null, 2)}\n`);
      else out(`${i > 0 ? '\n' : ''}${objectState(response)}\n${recordsTable(response)}`);
    }
    return;
  }

  const records = await source.records(object, args.recorder);
  switch (args.verb) {
    case 'list':
      if (args.output === 'json') out(`${JSON.stringify(records, null, 2)}\n`);
      else out(`${objectState(records)}\n${recordsTable(records)}`);
      return;
    case 'show': {
      const chosen = chooseRecord(records.records, args.record, object);
      const record = await source.record(object, chosen.id, chosen.store);
      if (args.output === 'json') out(`${JSON.stringify(record, null, 2)}\n`);
      else out(`# ${recordLine(object, record.record)}\n${record.yaml}`);
      return;
    }
    case 'diff': {
      const chosen = chooseRecord(records.records, args.record, object);
      const to = args.to === undefined || args.to === 'current' ? args.to : chooseRecord(records.records.filter((r) => r.store === chosen.store), args.to, object).id;
      const diff = await source.diff(object, chosen.id, to, chosen.store);
      if (diff.note) err(`${diff.note}\n`);
      if (diff.diff) out(diff.diff.endsWith('\n') ? diff.diff : `${diff.diff}\n`);
      else if (!diff.note) err(`${diff.from} and ${diff.to} are the same\n`);
      return;
    }
    case 'restore': {
      const client = await session.client();
      const served = await new DiscoveryClient(client).resolveKind({ group: object.group, kind: object.kind });
      if (!served) throw new CliError(`the API server does not serve ${object.kind}${object.group ? `.${object.group}` : ''}: there is nowhere to restore ${describeObject(object)} to`);
      const live = await client.find(served.type, { namespace: object.namespace, name: object.name });
      const choice = chooseRestore(records.records, records.lastSeen, live !== undefined, args.record, object);
      if (choice.note) err(`note: ${choice.note}\n`);
      const record = await source.record(object, choice.record.id, choice.record.store);
      const result = await restoreRecord(client, object, record, { dryRun: args.dryRun });
      for (const w of result.warnings) err(`warning: ${w}\n`);
      const name = describeObject(object);
      const from = `record ${record.record.id} (${record.record.reason}, recorded ${record.record.recordedAt})`;
      switch (result.action) {
        case 'created':
          out(`${name} re-created from ${from}, as field manager ${RESTORE_FIELD_MANAGER}; now at resourceVersion ${result.resourceVersion ?? '?'}\n`);
          break;
        case 'updated':
          out(`${name} restored to ${from} with server-side apply as field manager ${RESTORE_FIELD_MANAGER}; what changed:\n${result.diff}`);
          break;
        case 'unchanged':
          out(`${name} already matches ${from}: nothing changed\n`);
          break;
        case 'would-create':
          out(`dry run: ${name} does not exist and would be re-created from ${from}:\n${result.diff}`);
          break;
        case 'would-update':
          out(`dry run: ${name} would be restored to ${from}; it would change like this:\n${result.diff}`);
          break;
      }
      return;
    }
  }
}
