// The RBAC an operator installs, as the docs print it (issue 23 asks for each operator's generated RBAC of each
// scope, line by line): one table row per rule of every Role and ClusterRole the manifests bind, with why the
// operator needs it; a rule without a reason, or a role bound to nothing, stops the generator. Each operator's
// deploy/rbac-doc.ts gives its manifests and reasons; its scripts/generate.ts writes the tables between markers.

export interface DocRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

interface Subject {
  kind: string;
  name: string;
}

/** What the table reads of the manifests' objects. */
export interface DocRbacObject {
  kind?: string;
  metadata: { name?: string; namespace?: string };
  rules?: DocRule[];
  roleRef?: { kind: string; name: string };
  subjects?: Subject[];
}

export interface RolesTableOptions {
  /** Why a rule is there; undefined: none given (the generator stops, naming the role and the rule). */
  why(rule: DocRule): string | undefined;
  /** Roles installed but not the operator's (a metrics reader bound to nothing), left out of the table. */
  skip?: readonly string[];
  /** A column naming whom each role is bound to. */
  boundTo?: boolean;
}

/** The key a rule's reason is found by: its groups, resources, names and verbs. */
export const ruleKey = (r: DocRule): string => JSON.stringify([r.apiGroups ?? [], r.resources ?? [], r.resourceNames ?? [], r.verbs]);

const subjectText = (s: Subject): string => `${s.kind} \`${s.name}\``;

/** The table's lines: object, (bound to,) API group, resource, verbs, only names, why. */
export function rbacRolesTable(objects: readonly DocRbacObject[], options: RolesTableOptions): string[] {
  const bindings = objects.filter((o) => o.roleRef !== undefined);
  const lines = options.boundTo
    ? ['| object | bound to | API group | resource | verbs | only names | why |', '|---|---|---|---|---|---|---|']
    : ['| object | API group | resource | verbs | only names | why |', '|---|---|---|---|---|---|'];
  const roles = objects.filter((o) => (o.kind === 'Role' || o.kind === 'ClusterRole') && !(options.skip ?? []).includes(o.metadata.name ?? ''));
  for (const o of roles) {
    const name = o.metadata.name ?? '';
    const where = o.metadata.namespace ? `${o.kind} \`${name}\` in \`${o.metadata.namespace}\`` : `${o.kind} \`${name}\``;
    const binding = bindings.find((b) => b.roleRef!.kind === o.kind && b.roleRef!.name === name && (b.metadata.namespace ?? '') === (o.metadata.namespace ?? ''));
    if (binding === undefined) throw new Error(`${where} has no binding`);
    const subjects = (binding.subjects ?? []).map(subjectText).join(', ');
    (o.rules ?? []).forEach((r, i) => {
      const why = options.why(r);
      if (why === undefined) throw new Error(`${where}: a rule with no reason: ${JSON.stringify(r)}`);
      const group = (r.apiGroups ?? [])[0] === '' ? 'core' : (r.apiGroups ?? []).join(', ');
      const cells = [i === 0 ? where : '', ...(options.boundTo ? [i === 0 ? subjects : ''] : []), group, `\`${(r.resources ?? []).join(', ')}\``, r.verbs.join(', '), r.resourceNames?.map((n) => `\`${n}\``).join(', ') ?? '', why];
      lines.push(`| ${cells.join(' | ')} |`);
    });
  }
  return lines;
}

/** `doc` with the text between `begin` and `end` replaced by `markdown`; the markers must be there. */
export function withGeneratedSection(doc: string, markers: { begin: string; end: string; file: string }, markdown: string): string {
  const start = doc.indexOf(markers.begin);
  const end = doc.indexOf(markers.end);
  if (start < 0 || end < start) throw new Error(`${markers.file}: the markers ${markers.begin} … ${markers.end} are missing`);
  return `${doc.slice(0, start + markers.begin.length)}\n\n${markdown}\n${doc.slice(end)}`;
}
