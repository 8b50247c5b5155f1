// The CRD's CEL rules and their TypeScript mirrors in defaults.ts must agree. With no API server in unit tests,
// a small evaluator of the CEL subset the rules use runs each rule as the API server would (on the defaulted
// object, at its node, transition rules only on update, unchanged values ratcheted) and the failures it
// finds are compared with validateSpec's on a table of specs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { etcdClusterCRD } from '../../src/api/crd.ts';
import { errorsOf, validateSpec } from '../../src/api/defaults.ts';
import { ALLOWED_FLAGS, NOT_ALLOWED_TEXT, RULES } from '../../src/api/etcdcluster.ts';
import { applySchemaDefaults, deepEqual, isPlainObject, type SchemaNode } from '@quorum/runtime/crd';

// ---- a CEL subset: literals, self/oldSelf and macro variables, field selection, has(), ! - * + == != < <= >
// >= && || ?:, startsWith/endsWith/contains/matches/size, and the all/exists macros ----

type Token = { kind: 'num' | 'str' | 'id' | 'op'; text: string; value?: string | number };

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src.charAt(i);
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const raw = (c === 'r' || c === 'R') && (src[i + 1] === "'" || src[i + 1] === '"');
    if (c === "'" || c === '"' || raw) {
      const quote = raw ? src.charAt(i + 1) : c;
      let j = raw ? i + 2 : i + 1;
      let value = '';
      while (src[j] !== quote) {
        if (j >= src.length) throw new Error(`unterminated string at ${i}`);
        if (src[j] === '\\' && !raw) {
          const next = src.charAt(j + 1);
          const escapes: Record<string, string> = { '\\': '\\', "'": "'", '"': '"', n: '\n', t: '\t', r: '\r' };
          const escaped = escapes[next];
          if (escaped === undefined) throw new Error(`invalid escape \\${next} at ${j} (use a raw string r'...')`);
          value += escaped;
          j += 2;
        } else {
          value += src[j];
          j++;
        }
      }
      tokens.push({ kind: 'str', text: src.slice(i, j + 1), value });
      i = j + 1;
      continue;
    }
    const num = /^\d+/.exec(src.slice(i));
    if (num) {
      tokens.push({ kind: 'num', text: num[0], value: Number(num[0]) });
      i += num[0].length;
      continue;
    }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
    if (id) {
      tokens.push({ kind: 'id', text: id[0] });
      i += id[0].length;
      continue;
    }
    const op = ['||', '&&', '==', '!=', '>=', '<=', '>', '<', '!', '?', ':', '(', ')', '.', ',', '*', '+', '-', '[', ']'].find((o) => src.startsWith(o, i));
    if (!op) throw new Error(`unexpected ${c} at ${i}`);
    tokens.push({ kind: 'op', text: op });
    i += op.length;
  }
  return tokens;
}

type Node =
  | { t: 'lit'; value: unknown }
  | { t: 'var'; name: string }
  | { t: 'select'; operand: Node; field: string }
  | { t: 'call'; target?: Node; fn: string; args: Node[] }
  | { t: 'unary'; op: string; operand: Node }
  | { t: 'binary'; op: string; left: Node; right: Node }
  | { t: 'cond'; test: Node; then: Node; else: Node }
  | { t: 'index'; operand: Node; index: Node };

function parse(src: string): Node {
  const tokens = tokenize(src);
  let pos = 0;
  const peek = (): Token | undefined => tokens[pos];
  const take = (text?: string): Token => {
    const token = tokens[pos];
    if (!token || (text !== undefined && token.text !== text)) throw new Error(`expected ${text ?? 'a token'} at token ${pos} of ${src}`);
    pos++;
    return token;
  };
  const isOp = (...ops: string[]): boolean => peek()?.kind === 'op' && ops.includes(peek()?.text ?? '');

  const expr = (): Node => {
    const test = or();
    if (!isOp('?')) return test;
    take('?');
    const then = expr();
    take(':');
    return { t: 'cond', test, then, else: expr() };
  };
  const binaryLevel = (next: () => Node, ops: string[]) => (): Node => {
    let left = next();
    while (isOp(...ops)) {
      const op = take().text;
      left = { t: 'binary', op, left, right: next() };
    }
    return left;
  };
  const unary = (): Node => {
    if (isOp('!', '-')) {
      const op = take().text;
      return { t: 'unary', op, operand: unary() };
    }
    return member();
  };
  const mul = binaryLevel(unary, ['*']);
  const add = binaryLevel(mul, ['+', '-']);
  const rel = binaryLevel(add, ['==', '!=', '<', '<=', '>', '>=']);
  const and = binaryLevel(rel, ['&&']);
  const or = binaryLevel(and, ['||']);
  const args = (): Node[] => {
    take('(');
    const list: Node[] = [];
    while (!isOp(')')) {
      list.push(expr());
      if (!isOp(')')) take(',');
    }
    take(')');
    return list;
  };
  const member = (): Node => {
    let node = primary();
    while (isOp('.', '[')) {
      if (take().text === '[') {
        node = { t: 'index', operand: node, index: expr() };
        take(']');
        continue;
      }
      const name = take().text;
      node = isOp('(') ? { t: 'call', target: node, fn: name, args: args() } : { t: 'select', operand: node, field: name };
    }
    return node;
  };
  const primary = (): Node => {
    const token = take();
    if (token.kind === 'num' || token.kind === 'str') return { t: 'lit', value: token.value };
    if (token.kind === 'id') {
      if (token.text === 'true' || token.text === 'false') return { t: 'lit', value: token.text === 'true' };
      if (isOp('(')) return { t: 'call', fn: token.text, args: args() };
      return { t: 'var', name: token.text };
    }
    if (token.text === '(') {
      const inner = expr();
      take(')');
      return inner;
    }
    throw new Error(`unexpected ${token.text} in ${src}`);
  };
  const tree = expr();
  if (pos !== tokens.length) throw new Error(`trailing input at token ${pos} of ${src}`);
  return tree;
}

class CelError extends Error {}

function evaluate(node: Node, vars: Record<string, unknown>): unknown {
  const ev = (n: Node): unknown => evaluate(n, vars);
  switch (node.t) {
    case 'lit':
      return node.value;
    case 'var':
      if (!(node.name in vars)) throw new CelError(`undeclared ${node.name}`);
      return vars[node.name];
    case 'select': {
      const obj = ev(node.operand);
      if (!isPlainObject(obj) || obj[node.field] === undefined) throw new CelError(`no such key: ${node.field}`);
      return obj[node.field];
    }
    case 'unary': {
      const v = ev(node.operand);
      if (node.op === '!') return !bool(v);
      return -num(v);
    }
    case 'cond':
      return bool(ev(node.test)) ? ev(node.then) : ev(node.else);
    case 'index': {
      const list = ev(node.operand);
      const i = num(ev(node.index));
      if (!Array.isArray(list) || i < 0 || i >= list.length) throw new CelError(`index ${i} out of range`);
      return list[i] as unknown;
    }
    case 'binary': {
      if (node.op === '&&' || node.op === '||') {
        // CEL's logical operators are commutative over errors: a decisive side wins.
        const decisive = node.op === '||';
        let error: Error | undefined;
        for (const side of [node.left, node.right]) {
          try {
            if (bool(ev(side)) === decisive) return decisive;
          } catch (e) {
            error = e instanceof Error ? e : new Error(String(e));
          }
        }
        if (error) throw error;
        return !decisive;
      }
      const l = ev(node.left);
      const r = ev(node.right);
      switch (node.op) {
        case '==': return deepEqual(l, r);
        case '!=': return !deepEqual(l, r);
        case '<': return num(l) < num(r);
        case '<=': return num(l) <= num(r);
        case '>': return num(l) > num(r);
        case '>=': return num(l) >= num(r);
        case '*': return num(l) * num(r);
        case '+': return typeof l === 'string' && typeof r === 'string' ? l + r : num(l) + num(r);
        case '-': return num(l) - num(r);
      }
      throw new CelError(`operator ${node.op}`);
    }
    case 'call':
      return call(node, vars);
  }
}

function call(node: Extract<Node, { t: 'call' }>, vars: Record<string, unknown>): unknown {
  if (!node.target) {
    const [arg] = node.args;
    if (node.fn === 'has') {
      if (arg?.t !== 'select') throw new CelError('has() needs a field selection');
      const obj = evaluate(arg.operand, vars);
      return isPlainObject(obj) && obj[arg.field] !== undefined;
    }
    if (node.fn === 'size' && arg) return size(evaluate(arg, vars));
    throw new CelError(`unknown function ${node.fn}`);
  }
  const target = evaluate(node.target, vars);
  if (node.fn === 'all' || node.fn === 'exists' || node.fn === 'filter') {
    const [variable, body] = node.args;
    if (variable?.t !== 'var' || !body) throw new CelError(`${node.fn}() needs a variable and an expression`);
    const items = Array.isArray(target) ? target : isPlainObject(target) ? Object.keys(target) : undefined;
    if (!items) throw new CelError(`${node.fn}() on a non-collection`);
    const results = items.map((item: unknown) => bool(evaluate(body, { ...vars, [variable.name]: item })));
    if (node.fn === 'filter') return items.filter((_item: unknown, i: number) => results[i]);
    return node.fn === 'all' ? results.every(Boolean) : results.some(Boolean);
  }
  const args = node.args.map((a) => evaluate(a, vars));
  if (typeof target !== 'string') throw new CelError(`${node.fn}() on a non-string`);
  const s = String(args[0]);
  switch (node.fn) {
    case 'startsWith': return target.startsWith(s);
    case 'endsWith': return target.endsWith(s);
    case 'contains': return target.includes(s);
    case 'matches': return new RegExp(s).test(target); // RE2 and ECMAScript agree on the patterns used
    case 'size': return [...target].length;
  }
  throw new CelError(`unknown method ${node.fn}`);
}

function bool(v: unknown): boolean {
  if (typeof v !== 'boolean') throw new CelError(`not a bool: ${JSON.stringify(v)}`);
  return v;
}
function num(v: unknown): number {
  if (typeof v !== 'number') throw new CelError(`not a number: ${JSON.stringify(v)}`);
  return v;
}
function size(v: unknown): number {
  if (typeof v === 'string') return [...v].length;
  if (Array.isArray(v)) return v.length;
  if (isPlainObject(v)) return Object.keys(v).length;
  throw new CelError('size() of a scalar');
}

// ---- the API server's side: run every rule of the CRD on an object ----

const root = etcdClusterCRD().spec.versions[0]?.schema.openAPIV3Schema;
assert.ok(root?.properties?.spec);
const specNode: SchemaNode = root.properties.spec;

/** Messages of the CEL rules that fail for `value` (and `old` on update), at every node where a value is present. */
function celFailures(node: SchemaNode, value: unknown, old: unknown, failures: string[]): void {
  if (value === undefined) return;
  for (const { rule, message, messageExpression } of node['x-kubernetes-validations'] ?? []) {
    const transition = /\boldSelf\b/.test(rule);
    if (transition && old === undefined) continue;
    if (!transition && old !== undefined && deepEqual(value, old)) continue; // ratcheting
    let ok: boolean;
    try {
      ok = bool(evaluate(parse(rule), { self: value, oldSelf: old }));
    } catch (error) {
      if (!(error instanceof CelError)) throw error;
      ok = false; // a runtime error fails the rule
    }
    if (!ok) failures.push(messageExpression ? messageOf(messageExpression, value, message) : message);
  }
  if (isPlainObject(value)) {
    for (const [name, child] of Object.entries(node.properties ?? {})) {
      celFailures(child, value[name], isPlainObject(old) ? old[name] : undefined, failures);
    }
  }
  if (Array.isArray(value) && node.items) {
    // Only map lists correlate items with the old object; the rules here sit on no list items anyway.
    for (const item of value as unknown[]) celFailures(node.items, item, undefined, failures);
  }
}

/** A failed rule's messageExpression, as the API server evaluates it: its string, or the static message if it fails. */
function messageOf(expression: string, self: unknown, fallback: string): string {
  try {
    const text = evaluate(parse(expression), { self });
    return typeof text === 'string' ? text : fallback;
  } catch (error) {
    if (!(error instanceof CelError)) throw error;
    return fallback;
  }
}

function apiServerCelMessages(spec: unknown, old?: unknown): string[] {
  const failures: string[] = [];
  const value = applySchemaDefaults(specNode, spec);
  celFailures(specNode, value, old === undefined ? undefined : applySchemaDefaults(specNode, old), failures);
  return failures.sort();
}

const ruleMessages = new Set<string>(Object.values(RULES).map((r) => r.message));

function mirroredCelMessages(spec: unknown, old?: unknown): string[] {
  return errorsOf(validateSpec(spec, old))
    .map((e) => e.message)
    .filter((m) => ruleMessages.has(m))
    .sort();
}

test('every CEL rule parses (no invalid escapes, balanced)', () => {
  for (const { rule } of Object.values(RULES)) assert.doesNotThrow(() => parse(rule), rule);
  assert.throws(() => parse(String.raw`self.matches('^\d+$')`), /invalid escape/);
});

const PVC = { volumeClaimTemplate: { resources: { requests: { storage: '4Gi' } } } };
const S3 = { bucket: 'quorum', credentialsSecret: 's3-credentials' };
const SHA = 'a'.repeat(64);
const CASES: { name: string; spec: unknown; old?: unknown; fails: (keyof typeof RULES)[] }[] = [
  { name: 'empty spec', spec: {}, fails: [] },
  { name: 'image only', spec: { image: 'x/etcd:v3.6.16' }, fails: [] },
  { name: 'image and repository', spec: { image: 'x/etcd:v3.6.16', repository: 'x/etcd' }, fails: ['imageOrRepository'] },
  { name: 'both storage kinds', spec: { storage: { ...PVC, emptyDir: {} } }, fails: ['storageExactlyOne'] },
  { name: 'no storage kind', spec: { storage: { reclaimPolicy: 'Delete' } }, fails: ['storageExactlyOne'] },
  { name: 'emptyDir', spec: { storage: { emptyDir: { medium: 'Memory' } } }, fails: [] },
  { name: 'storage size change', spec: { storage: { volumeClaimTemplate: { resources: { requests: { storage: '8Gi' } } } } }, old: { storage: PVC }, fails: ['storageImmutable'] },
  { name: 'storage kind change', spec: { storage: { emptyDir: {} } }, old: { storage: PVC }, fails: ['storageImmutable'] },
  { name: 'storage dropped on update', spec: {}, old: { storage: PVC }, fails: ['storageImmutable'] },
  { name: 'storage class added', spec: { storage: { volumeClaimTemplate: { ...PVC.volumeClaimTemplate, storageClassName: 'fast' } } }, old: { storage: PVC }, fails: ['storageImmutable'] },
  { name: 'reclaimPolicy change', spec: { storage: { ...PVC, reclaimPolicy: 'Delete' } }, old: { storage: PVC }, fails: [] },
  { name: 'invalid storage kept unchanged (ratcheted)', spec: { replicas: 5, storage: { ...PVC, emptyDir: {} } }, old: { storage: { ...PVC, emptyDir: {} } }, fails: [] },
  { name: 'defrag by threshold', spec: { maintenance: { defrag: { thresholdPercent: 40 } } }, fails: [] },
  { name: 'defrag by schedule only', spec: { maintenance: { defrag: { schedule: '0 3 * * *' } } }, fails: [] },
  { name: 'defrag with neither trigger', spec: { maintenance: { defrag: {} } }, fails: ['defragTrigger'] },
  { name: 'maintenance without defrag', spec: { maintenance: {} }, fails: [] },
  { name: 'patch upgrade', spec: { version: '3.6.16' }, old: { version: '3.6.0' }, fails: [] },
  { name: 'patch downgrade', spec: { version: '3.5.1' }, old: { version: '3.5.35' }, fails: [] },
  { name: 'minor upgrade', spec: { version: '3.5.35' }, old: { version: '3.4.37' }, fails: [] },
  { name: 'minor skip', spec: { version: '3.6.16' }, old: { version: '3.4.37' }, fails: ['versionChange'] },
  { name: 'one minor back (a rollback; etcd decides whether it still can)', spec: { version: '3.5.35' }, old: { version: '3.6.16' }, fails: [] },
  { name: 'two minors back', spec: { version: '3.4.37' }, old: { version: '3.6.16' }, fails: ['versionChange'] },
  { name: 'unset version on a 3.4 cluster', spec: {}, old: { version: '3.4.37' }, fails: ['versionChange'] },
  { name: 'heartbeat alone too slow', spec: { etcd: { heartbeatIntervalMs: 300 } }, fails: ['electionTimeout'] },
  { name: 'election alone too fast', spec: { etcd: { electionTimeoutMs: 499 } }, fails: ['electionTimeout'] },
  { name: 'timeouts consistent', spec: { etcd: { heartbeatIntervalMs: 300, electionTimeoutMs: 1500 } }, fails: [] },
  { name: 'revision retention as duration', spec: { etcd: { autoCompactionMode: 'revision', autoCompactionRetention: '1h' } }, fails: ['revisionRetention'] },
  { name: 'revision retention as count', spec: { etcd: { autoCompactionMode: 'revision', autoCompactionRetention: '1000' } }, fails: [] },
  { name: 'periodic retention as duration', spec: { etcd: { autoCompactionMode: 'periodic', autoCompactionRetention: '5m' } }, fails: [] },
  { name: 'managed flag', spec: { etcd: { extraArgs: ['--log-level=info', '--initial-cluster-token=x'] } }, fails: ['managedFlags'] },
  { name: 'peer TLS flag', spec: { etcd: { extraArgs: ['--peer-auto-tls'] } }, fails: ['managedFlags'] },
  { name: 'structured flag', spec: { etcd: { extraArgs: ['--snapshot-count=5'] } }, fails: ['structuredFlags'] },
  { name: 'both kinds of flag', spec: { etcd: { extraArgs: ['--name=a', '--election-timeout=5000'] } }, fails: ['managedFlags', 'structuredFlags'] },
  { name: 'allowed flags', spec: { etcd: { extraArgs: ['--log-level=warn', '--experimental-compact-hash-check-enabled', '--max-request-bytes=4194304', '--feature-gates=InitialCorruptCheck=true'] } }, fails: [] },
  { name: 'managed flag kept unchanged (ratcheted)', spec: { replicas: 5, etcd: { extraArgs: ['--name=a'] } }, old: { etcd: { extraArgs: ['--name=a'] } }, fails: [] },
  { name: 'restore from a backup by name', spec: { bootstrap: { fromBackup: { backupName: 'nightly' } } }, fails: [] },
  { name: 'restore from a key', spec: { bootstrap: { fromBackup: { destination: { s3: S3 }, key: 'a/b.db', sha256: SHA } } }, fails: [] },
  { name: 'restore from a name and a key', spec: { bootstrap: { fromBackup: { backupName: 'nightly', destination: { s3: S3 }, key: 'a/b.db' } } }, fails: ['backupSource'] },
  { name: 'restore from a destination without a key', spec: { bootstrap: { fromBackup: { destination: { s3: S3 }, sha256: SHA } } }, fails: ['backupSource'] },
  { name: 'restore from two destinations', spec: { bootstrap: { fromBackup: { destination: { s3: S3, pvc: { claimName: 'b' } }, key: 'k', sha256: SHA } } }, fails: ['destinationExactlyOne'] },
  { name: 'restore from no destination', spec: { bootstrap: { fromBackup: { destination: {}, key: 'k', sha256: SHA } } }, fails: ['destinationExactlyOne'] },
  { name: 'restore into etcd 3.4', spec: { version: '3.4.37', bootstrap: { fromBackup: { backupName: 'nightly' } } }, fails: ['restoreVersion'] },
  { name: 'bootstrap added later', spec: { bootstrap: { fromBackup: { backupName: 'nightly' } } }, old: {}, fails: ['bootstrapImmutable'] },
  { name: 'bootstrap changed', spec: { bootstrap: { fromBackup: { backupName: 'other' } } }, old: { bootstrap: { fromBackup: { backupName: 'nightly' } } }, fails: ['bootstrapImmutable'] },
  { name: 'bootstrap removed', spec: {}, old: { bootstrap: { fromBackup: { backupName: 'nightly' } } }, fails: ['bootstrapImmutable'] },
  { name: 'operator-managed TLS at creation', spec: { tls: { peer: {}, client: {} } }, fails: [] },
  { name: 'TLS from Secrets at creation', spec: { tls: { peer: { secretName: 'p' }, client: { secretName: 'c' } } }, fails: [] },
  { name: 'TLS unchanged', spec: { replicas: 5, tls: { peer: {}, client: { secretName: 'c' } } }, old: { tls: { peer: {}, client: { secretName: 'c' } } }, fails: [] },
  { name: 'TLS turned on in place', spec: { tls: { peer: {}, client: {} } }, old: {}, fails: [] },
  { name: 'TLS turned off in place', spec: {}, old: { tls: { peer: {}, client: {} } }, fails: ['tlsFixed'] },
  { name: 'peer TLS removed', spec: { tls: { client: {} } }, old: { tls: { peer: {}, client: {} } }, fails: ['tlsPeerFixed'] },
  { name: 'peer TLS added', spec: { tls: { peer: {}, client: {} } }, old: { tls: { client: {} } }, fails: [] },
  { name: 'client TLS removed', spec: { tls: { peer: {} } }, old: { tls: { peer: {}, client: {} } }, fails: ['tlsClientFixed'] },
  { name: 'peer switched to a Secret', spec: { tls: { peer: { secretName: 'p' } } }, old: { tls: { peer: {} } }, fails: ['tlsPeerFixed'] },
  { name: 'client Secret renamed', spec: { tls: { client: { secretName: 'c2' } } }, old: { tls: { client: { secretName: 'c' } } }, fails: ['tlsClientFixed'] },
  { name: 'client switched to operator-managed', spec: { tls: { peer: {}, client: {} } }, old: { tls: { peer: {}, client: { secretName: 'c' } } }, fails: ['tlsClientFixed'] },
  { name: 'plaintext asked for at creation', spec: { tls: { disabled: true } }, fails: [] },
  { name: 'plaintext asked for with a TLS side', spec: { tls: { disabled: true, client: {} } }, fails: ['tlsDisabledAlone'] },
  { name: 'a running plaintext cluster says so', spec: { tls: { disabled: true } }, old: {}, fails: [] },
  { name: 'TLS added to a cluster that said plaintext', spec: { tls: { peer: {}, client: {} } }, old: { tls: { disabled: true } }, fails: [] },
  { name: 'clients from a namespace and from labelled pods', spec: { network: { clientsFrom: [{ namespaceSelector: { matchLabels: { team: 'a' } } }, { podSelector: { matchExpressions: [{ key: 'role', operator: 'In', values: ['api'] }, { key: 'canary', operator: 'DoesNotExist' }] } }] } }, fails: [] },
  { name: 'In without values', spec: { network: { clientsFrom: [{ namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In' }] } }] } }, fails: ['selectorValues'] },
  { name: 'Exists with values', spec: { network: { clientsFrom: [{ podSelector: { matchExpressions: [{ key: 'role', operator: 'Exists', values: ['x'] }] } }] } }, fails: ['selectorValues'] },
  { name: 'everything wrong at once', spec: { image: 'i', repository: 'r', storage: {}, etcd: { heartbeatIntervalMs: 1000, extraArgs: ['--data-dir=/x'] } }, fails: ['imageOrRepository', 'storageExactlyOne', 'electionTimeout', 'managedFlags'] },
];

for (const c of CASES) {
  test(`CEL and validateSpec agree: ${c.name}`, () => {
    const expected = c.fails.map((k) => RULES[k].message).sort();
    assert.deepEqual(apiServerCelMessages(c.spec, c.old), expected, 'the CRD rules');
    assert.deepEqual(mirroredCelMessages(c.spec, c.old), expected, 'validateSpec');
  });
}

test('an endpoint is https, or http only to an in-cluster Service: the API server checks it (ratcheted), validateSpec does not', () => {
  const cluster = (endpoint: string): unknown => ({ bootstrap: { fromBackup: { destination: { s3: { ...S3, endpoint } }, key: 'k', sha256: SHA } } });
  const refused = [RULES.endpointInCluster.message];
  for (const endpoint of ['http://minio.example.com:9000', 'http://10.0.0.7:9000', 'http://minio.svc.example.com', 'ftp://x.svc']) {
    assert.deepEqual(apiServerCelMessages(cluster(endpoint)), refused, endpoint);
  }
  assert.deepEqual(apiServerCelMessages({ backup: { destination: { gcs: { bucket: 'b', credentialsSecret: 'g', endpoint: 'http://gcs.example.com' } } } }), refused, 'spec.backup too');
  for (const endpoint of ['https://s3.eu-west-1.amazonaws.com', 'http://s3.localkube-storage.svc:9000', 'http://minio.backups.svc.cluster.local/path', 'http://azure.localkube-storage.svc:10000/devstoreaccount1']) {
    assert.deepEqual(apiServerCelMessages(cluster(endpoint)), [], endpoint);
  }
  // Stored before the rule and unchanged: the API server lets other edits through, and so does the operator.
  assert.deepEqual(apiServerCelMessages(cluster('http://minio.example.com'), cluster('http://minio.example.com')), []);
  assert.deepEqual(mirroredCelMessages(cluster('http://minio.example.com')), []);
});

test('podTemplate cannot ask for privileged or root members: the API server refuses each way (ratcheted), validateSpec does not', () => {
  const pod = (securityContext: unknown, containerSecurityContext?: unknown): unknown => ({ podTemplate: { spec: { securityContext, ...(containerSecurityContext ? { containerSecurityContext } : {}) } } });
  const refused: [unknown, (keyof typeof RULES)[]][] = [
    [pod({ runAsUser: 0 }), ['podNotRoot']],
    [pod({ runAsNonRoot: false }), ['podNotRoot']],
    [pod({ seccompProfile: { type: 'Unconfined' } }), ['podSeccompConfined']],
    [pod({}, { privileged: true }), ['containerNotPrivileged']],
    [pod({}, { allowPrivilegeEscalation: true }), ['containerNotPrivileged']],
    [pod({}, { runAsUser: 0 }), ['containerNotRoot']],
    [pod({}, { runAsNonRoot: false }), ['containerNotRoot']],
    [pod({}, { capabilities: { add: ['NET_ADMIN'] } }), ['containerNoAddedCapabilities']],
    [pod({}, { seccompProfile: { type: 'Unconfined' } }), ['containerSeccompConfined']],
    [pod({ runAsUser: 0 }, { privileged: true, capabilities: { add: ['SYS_ADMIN'] } }), ['podNotRoot', 'containerNotPrivileged', 'containerNoAddedCapabilities']],
  ];
  for (const [spec, fails] of refused) {
    assert.deepEqual(apiServerCelMessages(spec), fails.map((k) => RULES[k].message).sort(), JSON.stringify(spec));
    assert.deepEqual(mirroredCelMessages(spec), [], 'the operator does not refuse a cluster it already runs');
  }
  // What the docs show and the restricted defaults are admitted.
  const fine = pod({ runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } }, { runAsUser: 1000, allowPrivilegeEscalation: false, privileged: false, capabilities: { drop: ['ALL'], add: [] }, seccompProfile: { type: 'Localhost', localhostProfile: 'etcd.json' } });
  assert.deepEqual(apiServerCelMessages(fine), []);
  // A cluster stored before the rules keeps its root pods while podTemplate is unchanged (ratcheting).
  assert.deepEqual(apiServerCelMessages({ replicas: 5, ...(pod({ runAsUser: 0, runAsNonRoot: false }) as object) }, pod({ runAsUser: 0, runAsNonRoot: false })), []);
});

test('extraArgs is an allowlist: the API server refuses any other flag, naming it; the operator does not refuse a cluster it already runs', () => {
  const refusedWith = (arg: string): string => `spec.etcd.extraArgs: ${arg} ${NOT_ALLOWED_TEXT}`;
  for (const arg of ['--unsafe-no-fsync', '--strict-reconfig-check=false', '--enable-pprof', '--experimental-peer-skip-client-san-verification', '--names=x', '--enable-grpc-gateway=false']) {
    const spec = { etcd: { extraArgs: ['--log-level=info', arg] } };
    assert.deepEqual(apiServerCelMessages(spec), [refusedWith(arg)], arg);
    assert.deepEqual(mirroredCelMessages(spec), [], `${arg}: not mirrored (ratcheting)`);
  }
  // The first refused item is named; managed and structured flags keep their own messages, not this one.
  assert.deepEqual(apiServerCelMessages({ etcd: { extraArgs: ['--name=a', '--enable-pprof', '--unsafe-no-fsync'] } }), [RULES.managedFlags.message, refusedWith('--enable-pprof')].sort());
  for (const flag of ALLOWED_FLAGS) assert.deepEqual(apiServerCelMessages({ etcd: { extraArgs: [`--${flag}=1`] } }), [], flag);
  // Stored before the allowlist and unchanged: the API server lets other edits through.
  assert.deepEqual(apiServerCelMessages({ replicas: 5, etcd: { extraArgs: ['--unsafe-no-fsync'] } }, { etcd: { extraArgs: ['--unsafe-no-fsync'] } }), []);
});

test('a restore from destination and key needs sha256: the API server refuses it (ratcheted), the operator waits instead of refusing the cluster', () => {
  const inline = { bootstrap: { fromBackup: { destination: { s3: S3 }, key: 'a/b.db' } } };
  assert.deepEqual(apiServerCelMessages(inline), [RULES.restoreHash.message]);
  assert.deepEqual(apiServerCelMessages({ bootstrap: { fromBackup: { backupName: 'nightly' } } }), [], 'an EtcdBackup records its own');
  // Stored before the rule (bootstrap is immutable): other edits still go through, and the operator does not call it invalid.
  assert.deepEqual(apiServerCelMessages({ replicas: 5, ...inline }, inline), []);
  assert.deepEqual(mirroredCelMessages(inline), []);
});

/** Rules the CASES table cannot hold, because validateSpec does not mirror them (tested on their own above). */
const UNMIRRORED: readonly (keyof typeof RULES)[] = ['allowedFlags', 'endpointInCluster', 'restoreHash', 'podNotRoot', 'podSeccompConfined', 'containerNotPrivileged', 'containerNotRoot', 'containerNoAddedCapabilities', 'containerSeccompConfined'];

test('the cases reach every rule', () => {
  const reached = new Set([...CASES.flatMap((c) => c.fails), ...UNMIRRORED]);
  assert.deepEqual([...reached].sort(), Object.keys(RULES).sort());
});
