// The command line of `quorum history`: parsed and checked before anything is read, so a mistake costs no
// request and says what is wrong.
import { parseArgs } from 'node:util';
import { CONNECTION_FLAGS, connectionFlags, type ConnectionFlags } from '@quorum/runtime';
import { HISTORY_SERVICE } from '../history/protocol.ts';
import { UsageError } from './errors.ts';

export const HISTORY_USAGE = `usage: quorum history <command> [options]
  list [KIND[/NAME]]            objects with records (all namespaces unless -n), or one object's records
  show KIND/NAME                a record as YAML, ready for kubectl apply (default: the newest)
  diff KIND/NAME                what a record's change did (default: the newest record); --to current
                                compares it with the newest version seen, --to ID with another record
  restore KIND/NAME             re-create a deleted object from its last record, or apply the previous
                                version of a live one (server-side apply, field manager quorum-history);
                                prints what it changed
  install [-f FILE]...          install or update the recorder, its ClusterRole derived from the
                                ChangeRecorders (quorum history install --help)
  image [--load-with COMMAND]   build the recorder's image (and load it with COMMAND ARCHIVE)
options:
  -n, --namespace NS            the object's namespace (default: the kubeconfig context's, else default)
  -A, --all-namespaces          list: every namespace (the default for list without -n)
  --record ID                   show, diff, restore: this record (an ID from list, or a unique prefix)
  --to ID|current               diff: compare with another record, or with the newest version seen
  --recorder STORE              only the records of this ChangeRecorder's store (its storage path, or
                                its object store's URI, e.g. s3://bucket/prefix)
  --dry-run                     restore: print what would change, change nothing
  -o, --output json             list, show: the endpoint's JSON
  --path DIR                    read records from a directory (a copy of the recorder's volume, or one
                                store) instead of through the API server
  --kubeconfig FILE  --context NAME
  --token TOKEN                 the bearer token to identify with to the recorder (default: the
                                kubeconfig's; needed when the kubeconfig uses a client certificate)
  --recorder-namespace NS       where the recorder runs (default quorum-system)
  --recorder-service NAME       its Service (default ${HISTORY_SERVICE})`;

export type HistoryVerb = 'list' | 'show' | 'diff' | 'restore';

/** `deploy/web` → kind `deploy`, name `web`; `cm` → kind only (list). */
export interface Target {
  kind: string;
  name?: string;
}

/** The connection flags (-n, -A, --kubeconfig, --context) as kubectl reads them, and the command's own. */
export interface HistoryArgs extends ConnectionFlags {
  verb: HistoryVerb | 'help';
  target?: Target;
  record?: string;
  to?: string;
  recorder?: string;
  dryRun: boolean;
  output?: 'json';
  path?: string;
  token?: string;
  recorderNamespace: string;
  recorderService: string;
}

const VERBS: readonly string[] = ['list', 'show', 'diff', 'restore'];

export function parseTarget(text: string): Target {
  const slash = text.indexOf('/');
  if (slash < 0) return { kind: text };
  const kind = text.slice(0, slash);
  const name = text.slice(slash + 1);
  if (!kind || !name || name.includes('/')) throw new UsageError(`${JSON.stringify(text)} is not KIND/NAME`);
  return { kind, name };
}

export function parseHistoryArgs(argv: readonly string[], env: Record<string, string | undefined> = {}): HistoryArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        ...CONNECTION_FLAGS,
        record: { type: 'string' },
        to: { type: 'string' },
        recorder: { type: 'string' },
        'dry-run': { type: 'boolean', default: false },
        output: { type: 'string', short: 'o' },
        path: { type: 'string' },
        token: { type: 'string' },
        'recorder-namespace': { type: 'string' },
        'recorder-service': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  const [verb, targetText, ...extra] = positionals;
  const common = {
    ...connectionFlags(values),
    dryRun: values['dry-run'],
    recorderNamespace: values['recorder-namespace'] ?? env['QUORUM_RECORDER_NAMESPACE'] ?? 'quorum-system',
    recorderService: values['recorder-service'] ?? HISTORY_SERVICE,
  };
  if (values.help || verb === undefined || verb === 'help') return { verb: 'help', ...common };
  if (!VERBS.includes(verb)) throw new UsageError(`unknown command ${JSON.stringify(verb)}: one of ${VERBS.join(', ')}`);
  if (extra.length > 0) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);
  const args: HistoryArgs = { verb: verb as HistoryVerb, ...common };
  if (targetText !== undefined) args.target = parseTarget(targetText);
  if (values.record !== undefined) args.record = values.record;
  if (values.to !== undefined) args.to = values.to;
  if (values.recorder !== undefined) args.recorder = values.recorder;
  if (values.path !== undefined) args.path = values.path;
  const token = values.token ?? env['QUORUM_HISTORY_TOKEN'];
  if (token) args.token = token;
  if (values.output !== undefined) {
    if (values.output !== 'json') throw new UsageError(`-o ${values.output}: only -o json is supported (show prints YAML by default)`);
    args.output = 'json';
  }

  if (args.verb !== 'list' && args.target?.name === undefined) throw new UsageError(`${args.verb} needs KIND/NAME, e.g. quorum history ${args.verb} deployment/web -n default`);
  if (args.allNamespaces && args.verb !== 'list') throw new UsageError(`-A is for list; ${args.verb} needs the object's namespace (-n)`);
  if (args.allNamespaces && args.namespace !== undefined) throw new UsageError('-n and -A exclude each other');
  if (args.verb === 'list' && args.record !== undefined) throw new UsageError('--record is for show, diff and restore; list shows every record of an object');
  if (args.to !== undefined && args.verb !== 'diff') throw new UsageError('--to is for diff');
  if (args.dryRun && args.verb !== 'restore') throw new UsageError('--dry-run is for restore');
  if (args.output && args.verb !== 'list' && args.verb !== 'show') throw new UsageError('-o json is for list and show');
  return args;
}
