// The public API reports of the published packages (@quorum/runtime, @quorum/storage), with API Extractor:
// one report per export of each package.json (`.` → api/<name>.api.md, `./testing` → api/<name>-testing.api.md),
// committed so that a change to what a package exports shows in review; and the API reference of
// @quorum/runtime (docs/runtime-api.md), rendered from API Extractor's doc model of the same declarations.
//
//   bash scripts/node24 scripts/api-report.ts --check    fails, with the changed lines, when a report or the reference is stale (npm test)
//   bash scripts/node24 scripts/api-report.ts --update   rewrites the reports and the reference after an intended API change
//
// The declarations are built into a scratch folder outside the repository (never into dist/, which `npm pack`
// owns), beside a link to the repository's node_modules so that they resolve the packages' dependencies; not
// inside node_modules itself, where TypeScript would take them for an external library's.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CompilerState, Extractor, ExtractorConfig, ExtractorLogLevel, type ExtractorMessage } from '@microsoft/api-extractor';
import { ApiDeclaredItem, ApiDocumentedItem, ApiItemKind, ApiModel, type ApiItem } from '@microsoft/api-extractor-model';

const root = join(import.meta.dirname, '..');
export const API_PACKAGES = ['runtime', 'storage'] as const;
/** The packages whose API reference is rendered, and where (relative to the repository). */
const API_DOCS: Readonly<Record<string, string>> = { runtime: 'docs/runtime-api.md' };

interface Manifest {
  name: string;
  exports: Record<string, { types: string }>;
}

interface Entry {
  /** The import specifier: `@quorum/runtime`, `@quorum/runtime/testing`. */
  specifier: string;
  report: string;
  types: string;
}

/** Each export's specifier, report name and declaration file, relative to the package (`dist/…d.ts`). */
function entryPoints(pkg: string): Entry[] {
  const manifest = JSON.parse(readFileSync(join(root, 'packages', pkg, 'package.json'), 'utf8')) as Manifest;
  return Object.entries(manifest.exports).map(([subpath, conditions]) => ({
    specifier: subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`,
    report: subpath === '.' ? pkg : `${pkg}-${subpath.slice(2).replaceAll('/', '-')}`,
    types: conditions.types.replace(/^\.\//, ''),
  }));
}

/** Lines only in one of the two texts (enough to see in a CI log what moved; the reports are short). */
function changedLines(before: string, after: string): string[] {
  const old = new Set(before.split('\n'));
  const now = new Set(after.split('\n'));
  return [...[...old].filter((l) => !now.has(l)).map((l) => `- ${l}`), ...[...now].filter((l) => !old.has(l)).map((l) => `+ ${l}`)];
}

/** Builds one package's declarations into `out` and checks (or rewrites) the report of each of its exports. */
function reportPackage(pkg: string, out: string, update: boolean): string[] {
  const packageDir = join(root, 'packages', pkg);
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-p', join(packageDir, 'tsconfig.build.json'), '--emitDeclarationOnly', '--declarationMap', 'false', '--sourceMap', 'false', '--outDir', join(out, 'dist')], { stdio: 'inherit' });
  const entries = entryPoints(pkg);
  if (update) mkdirSync(join(packageDir, 'api'), { recursive: true });
  const configFile = join(packageDir, 'api-extractor.json');
  const prepare = (entry: Entry): ExtractorConfig => {
    const configObject = ExtractorConfig.loadFile(configFile);
    configObject.mainEntryPointFilePath = join(out, entry.types);
    configObject.compiler!.overrideTsconfig = { ...configObject.compiler!.overrideTsconfig, files: entries.map((e) => join(out, e.types)) };
    configObject.apiReport = { ...configObject.apiReport!, enabled: true, reportFileName: entry.report, reportFolder: join(packageDir, 'api'), reportTempFolder: join(out, 'api') };
    configObject.docModel = { enabled: API_DOCS[pkg] !== undefined, apiJsonFilePath: modelFile(out, entry) };
    return ExtractorConfig.prepare({ configObject, configObjectFullPath: configFile, packageJsonFullPath: join(packageDir, 'package.json') });
  };
  const first = prepare(entries[0]!);
  // One TypeScript program for every export of the package.
  const compilerState = CompilerState.create(first, { additionalEntryPoints: entries.slice(1).map((e) => join(out, e.types)) });
  const problems: string[] = [];
  for (const entry of entries) {
    const config = entry === entries[0] ? first : prepare(entry);
    const reported = existsSync(config.reportFilePath) ? readFileSync(config.reportFilePath, 'utf8') : '';
    const messages: string[] = [];
    const result = Extractor.invoke(config, {
      localBuild: update,
      compilerState,
      messageCallback: (message: ExtractorMessage) => {
        if (message.logLevel === ExtractorLogLevel.Error || message.logLevel === ExtractorLogLevel.Warning) messages.push(message.formatMessageWithLocation(root));
        message.handled = true;
      },
    });
    const name = `packages/${pkg}/api/${entry.report}.api.md`;
    if (update) {
      if (result.apiReportChanged) console.log(`api-report: updated ${name}`);
      if (!result.succeeded) problems.push(`${name}: ${messages.join('\n') || 'API Extractor failed'}`);
    } else if (result.apiReportChanged) {
      const fresh = readFileSync(config.reportTempFilePath, 'utf8');
      problems.push(`${name} is out of date:\n${changedLines(reported, fresh).join('\n')}`);
    } else if (!result.succeeded) {
      problems.push(`${name}: ${messages.join('\n') || 'API Extractor failed'}`);
    }
  }
  const docs = API_DOCS[pkg];
  if (docs !== undefined && problems.length === 0) problems.push(...checkReference(docs, renderReference(entries, out), update));
  return problems;
}

const modelFile = (out: string, entry: Entry): string => join(out, 'model', `${entry.report}.api.json`);

/** Checks (or rewrites) the committed reference against the one rendered now. */
function checkReference(docs: string, rendered: string, update: boolean): string[] {
  const file = join(root, docs);
  const committed = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (committed === rendered) return [];
  if (update) {
    writeFileSync(file, rendered);
    console.log(`api-report: updated ${docs}`);
    return [];
  }
  return [`${docs} is out of date:\n${changedLines(committed, rendered).join('\n')}`];
}

// ---- The API reference: Markdown from API Extractor's doc model (one section per export, items by kind).

interface DocNodeLike {
  kind: string;
  getChildNodes(): readonly DocNodeLike[];
  text?: string;
  code?: string;
  decodedText?: string;
  linkText?: string;
  codeDestination?: { emitAsTsdoc(): string };
}

/** A TSDoc section as Markdown text: plain text, code spans and links (as code), paragraphs. */
function docText(node: DocNodeLike): string {
  switch (node.kind) {
    case 'PlainText':
      return node.text ?? '';
    case 'EscapedText':
      return node.decodedText ?? '';
    case 'CodeSpan':
      return codeSpan(node.code ?? '');
    case 'SoftBreak':
      return ' ';
    case 'LinkTag':
      return node.linkText ?? codeSpan(node.codeDestination?.emitAsTsdoc() ?? '');
    case 'Paragraph':
      return `${node.getChildNodes().map(docText).join('').trim()}\n\n`;
    default:
      return node.getChildNodes().map(docText).join('');
  }
}

const codeSpan = (code: string): string => (code.includes('`') ? `\`\` ${code} \`\`` : `\`${code}\``);
const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();

function summaryOf(item: ApiItem): string {
  if (!(item instanceof ApiDocumentedItem) || !item.tsdocComment) return '';
  return docText(item.tsdocComment.summarySection).trim();
}

const signatureOf = (item: ApiItem): string => (item instanceof ApiDeclaredItem ? item.excerpt.text.trim() : item.displayName);

const KINDS: readonly [ApiItemKind, string][] = [
  [ApiItemKind.Class, 'Classes'],
  [ApiItemKind.Interface, 'Interfaces'],
  [ApiItemKind.Function, 'Functions'],
  [ApiItemKind.TypeAlias, 'Types'],
  [ApiItemKind.Variable, 'Constants'],
  [ApiItemKind.Enum, 'Enums'],
  [ApiItemKind.Namespace, 'Namespaces'],
];

/** One exported item: its declaration, its summary, and for a class or interface each member's. */
function renderItem(overloads: ApiItem[]): string[] {
  const [first] = overloads;
  const lines = [`#### ${first!.displayName}`, ''];
  const summary = summaryOf(first!);
  if (summary) lines.push(summary, '');
  lines.push('```ts', ...overloads.map(signatureOf), '```', '');
  const members = first!.members.map((member) => `- ${codeSpan(oneLine(signatureOf(member)))}${summaryOf(member) ? `: ${oneLine(summaryOf(member))}` : ''}`);
  if (members.length > 0) lines.push(...members, '');
  return lines;
}

function renderEntry(entry: Entry, out: string): string[] {
  const entryPoint = new ApiModel().loadPackage(modelFile(out, entry)).entryPoints[0]!;
  const lines = [`## ${entry.specifier}`, ''];
  for (const [kind, title] of KINDS) {
    const byName = new Map<string, ApiItem[]>();
    for (const item of entryPoint.members.filter((m) => m.kind === kind)) byName.set(item.displayName, [...(byName.get(item.displayName) ?? []), item]);
    if (byName.size === 0) continue;
    lines.push(`### ${title}`, '', [...byName.keys()].map((name) => `[${name}](#${name.toLowerCase()})`).join(' · '), '');
    for (const overloads of byName.values()) lines.push(...renderItem(overloads));
  }
  return lines;
}

function renderReference(entries: Entry[], out: string): string {
  const name = entries[0]!.specifier;
  const lines = [
    `# ${name}: API reference`,
    '',
    '<!-- Generated by `bash scripts/node24 scripts/api-report.ts --update` from the declarations (API Extractor\'s doc model); do not edit. `npm test` fails while it is stale. -->',
    '',
    `Every export of ${entries.map((e) => codeSpan(e.specifier)).join(', ')}, with the summary of its doc comment. How the pieces fit: [runtime.md](runtime.md); a first operator: [runtime-tutorial.md](runtime-tutorial.md).`,
    '',
    ...entries.flatMap((entry) => renderEntry(entry, out)),
  ];
  return `${lines.join('\n').trimEnd()}\n`;
}

function main(): void {
  const { values } = parseArgs({ options: { check: { type: 'boolean' }, update: { type: 'boolean' } } });
  if (values.check === values.update) throw new Error('usage: api-report.ts --check | --update');
  const scratch = mkdtempSync(join(tmpdir(), 'quorum-api-report-'));
  symlinkSync(join(root, 'node_modules'), join(scratch, 'node_modules'));
  try {
    const problems = API_PACKAGES.flatMap((pkg) => reportPackage(pkg, join(scratch, pkg), values.update === true));
    if (problems.length > 0) {
      console.error(problems.join('\n\n'));
      if (values.check) console.error('\napi-report: a public API changed; if that is intended, run `bash scripts/node24 scripts/api-report.ts --update` and commit the reports and the reference');
      process.exitCode = 1;
    } else if (values.check) {
      console.log(`api-report: the reports of ${API_PACKAGES.map((p) => `@quorum/${p}`).join(', ')} match their exports, and so does the reference ${Object.values(API_DOCS).join(', ')}`);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

main();
