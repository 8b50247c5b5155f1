// `kubectl quorum access [--explain USER]`: who can do what where through the RBAC manager, read from its own
// model (the bindings it made, labelled with their definition and binding; the definitions' status for the
// windows). With --explain, one subject's grants, each cross-checked by a SubjectAccessReview that asks the API
// server whether that subject may really do the first thing its role allows there (what `kubectl auth can-i
// --as` asks), so a grant the API server would not honour shows as such.
import { parseArgs } from 'node:util';
import { runCommand, UsageError, type CommandIO } from '@quorum/kit';
import { Client, ClusterRoleBindings, ClusterRoles, connectionFlags, CONNECTION_FLAGS, RoleBindings, Roles, type OpenObject } from '@quorum/runtime';
import { subjectAccessReviewer } from '../admission/webhook.ts';
import { BINDING_LABEL, DEFINITION_LABEL, MANAGED_BY, MANAGED_BY_LABEL } from '../plan/names.ts';
import { RBACDefinitions } from '../resources.ts';

export const ACCESS_USAGE = `usage: kubectl quorum access [--explain USER] [-n NS]
  Lists every grant the RBAC manager has in place: subject, role, where (a namespace, or cluster-wide),
  through which RBACDefinition and binding, and until when. -n limits it to one namespace (cluster-wide
  grants are shown too). --explain USER (or group:NAME, or system:serviceaccount:NS:NAME) shows that
  subject's grants only, each checked with the API server (a SubjectAccessReview for the first rule of its role).`;

interface AccessArgs {
  help: boolean;
  explain?: string;
  namespace?: string;
  connection: { kubeconfig?: string; context?: string };
}

export interface Grant {
  subject: string;
  role: string;
  where: string;
  via: string;
  until: string;
  roleRef: { kind: string; name: string };
  namespace?: string;
}

type Binding = OpenObject & { roleRef?: { kind: string; name: string }; subjects?: { kind: string; name: string; namespace?: string }[] };
type Rule = { verbs?: string[]; apiGroups?: string[]; resources?: string[] };

export function parseAccessArgs(argv: readonly string[]): AccessArgs {
  let values;
  try {
    values = parseArgs({ args: [...argv], strict: true, allowPositionals: false, options: { ...CONNECTION_FLAGS, explain: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } } }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const flags = connectionFlags(values);
  return {
    help: values.help,
    ...(values.explain !== undefined ? { explain: values.explain } : {}),
    ...(flags.namespace !== undefined ? { namespace: flags.namespace } : {}),
    connection: { ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}), ...(flags.context ? { context: flags.context } : {}) },
  };
}

export function accessCommand(argv: readonly string[], io: CommandIO): Promise<number> {
  return runCommand({ program: 'kubectl quorum access', usage: ACCESS_USAGE, parse: () => parseAccessArgs(argv), act }, io);
}

/** How a subject is named on the command line and in the table. */
export function subjectName(s: { kind: string; name: string; namespace?: string }): string {
  if (s.kind === 'ServiceAccount') return `system:serviceaccount:${s.namespace ?? ''}:${s.name}`;
  return s.kind === 'Group' ? `group:${s.name}` : s.name;
}

/** The grants in place, from the bindings the manager made and the windows in its definitions' status. */
export function grantsOf(bindings: readonly Binding[], untilOf: (definition: string, binding: string) => string | undefined): Grant[] {
  return bindings.flatMap((b) => {
    const definition = b.metadata.labels?.[DEFINITION_LABEL] ?? '?';
    const binding = b.metadata.labels?.[BINDING_LABEL] ?? '?';
    const roleRef = b.roleRef ?? { kind: '?', name: '?' };
    const namespace = b.metadata.namespace;
    return (b.subjects ?? []).map((s) => ({
      subject: subjectName(s),
      role: `${roleRef.kind} ${roleRef.name}`,
      where: namespace ?? '(cluster)',
      via: `${definition}/${binding}`,
      until: untilOf(definition, binding) ?? '-',
      roleRef,
      ...(namespace ? { namespace } : {}),
    }));
  });
}

export function grantTable(grants: readonly Grant[], extra?: (g: Grant) => string): string {
  const rows = [['SUBJECT', 'ROLE', 'WHERE', 'VIA', 'UNTIL', ...(extra ? ['CHECKED'] : [])], ...grants.map((g) => [g.subject, g.role, g.where, g.via, g.until, ...(extra ? [extra(g)] : [])])];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

async function act(args: AccessArgs, io: CommandIO): Promise<void> {
  const client = await Client.connect(args.connection);
  try {
    const labelSelector = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;
    const [rbs, crbs, definitions] = await Promise.all([
      client.list(RoleBindings, { labelSelector, ...(args.namespace ? { namespace: args.namespace } : {}) }),
      client.list(ClusterRoleBindings, { labelSelector }),
      client.list(RBACDefinitions),
    ]);
    const windows = new Map(definitions.items.flatMap((d) => (d.status?.bindings ?? []).map((b) => [`${d.metadata.name}/${b.name}`, b.expiresAt] as const)));
    const grants = grantsOf([...crbs.items, ...rbs.items] as Binding[], (d, b) => windows.get(`${d}/${b}`));
    grants.sort((a, b) => a.subject.localeCompare(b.subject) || a.where.localeCompare(b.where) || a.role.localeCompare(b.role));
    if (args.explain === undefined) {
      io.stdout.write(grants.length ? grantTable(grants) : 'no grants in place\n');
      return;
    }
    const mine = grants.filter((g) => g.subject === args.explain);
    if (mine.length === 0) {
      io.stdout.write(`${args.explain} has no grants through the RBAC manager${args.namespace ? ` in ${args.namespace}` : ''}\n`);
      return;
    }
    const checked = await Promise.all(mine.map((g) => crossCheck(client, args.explain!, g)));
    io.stdout.write(grantTable(mine, (g) => checked[mine.indexOf(g)]!));
  } finally {
    client.close();
  }
}

/** Asks the API server whether the subject may do the first thing its role allows where it is bound. */
async function crossCheck(client: Client, subject: string, grant: Grant): Promise<string> {
  const role = await (grant.roleRef.kind === 'ClusterRole' ? client.find(ClusterRoles, grant.roleRef.name) : client.find(Roles, { namespace: grant.namespace ?? '', name: grant.roleRef.name }));
  const rules = role?.['rules'] as Rule[] | undefined;
  const rule = (rules ?? []).find((r) => r.verbs?.length && r.resources?.length);
  if (!rule) return 'no rule to check';
  const user = subject.startsWith('group:') ? { groups: [subject.slice('group:'.length)] } : { username: subject };
  const check = { group: rule.apiGroups?.[0] ?? '', resource: rule.resources![0]!, verb: rule.verbs![0]!, ...(grant.namespace ? { namespace: grant.namespace } : {}), source: grant.via };
  try {
    const answer = await subjectAccessReviewer(client)(user, check);
    return `${answer.allowed ? 'yes' : 'NO'}: ${check.verb} ${check.resource}${check.group ? `.${check.group}` : ''}`;
  } catch (err) {
    return `cannot check: ${err instanceof Error ? err.message : String(err)}`;
  }
}
