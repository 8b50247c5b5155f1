// The workspace packages as an image runs them: JavaScript compiled from their TypeScript sources, not the
// sources for Node to strip at every start (issue 24: the type stripper alone is about 17 MiB of a process's RSS).
// Each src/**/*.ts becomes dist/**/*.js, and the package.json the image carries points its exports there.
//
// Compiled one file at a time by the TypeScript compiler (transpileModule): the repository's sources are
// erasable syntax only with verbatim module syntax (tsconfig.json), so a file needs nothing but itself, exactly
// as for Node's own stripping. Each output is cached by the hash of its source and the compiler's version and
// options, so an image build compiles only the files that changed (and loads the compiler only then).
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { cacheRoot, entriesFromDirectory, type TarEntry } from '@quorum/images';

type TypeScript = typeof import('typescript');

/** Where compiled files are cached, outside the clone like the images they go into. */
const jsCache = join(cacheRoot, 'built-js');

/** The compiler options of the published builds (runtime's tsconfig.build.json), for one file at a time. */
function compilerOptions(ts: TypeScript): import('typescript').CompilerOptions {
  return {
    target: ts.ScriptTarget.ES2024,
    module: ts.ModuleKind.ESNext,
    verbatimModuleSyntax: true,
    rewriteRelativeImportExtensions: true,
    sourceMap: false,
  };
}

/** What the cache is keyed by besides the source and the compiler's version: the options above, by name. */
const OPTIONS_KEY = { target: 'ES2024', module: 'ESNext', verbatimModuleSyntax: true, rewriteRelativeImportExtensions: true };

let compiler: TypeScript | undefined;
/** The compiler, loaded on the first cache miss only: an image whose sources did not change never loads it. */
function typescript(): TypeScript {
  compiler ??= createRequire(import.meta.url)('typescript') as TypeScript;
  return compiler;
}

/** The compiler's version, read without loading it, for the cache key. */
let compilerVersion: Promise<string> | undefined;
function typescriptVersion(): Promise<string> {
  const manifest = createRequire(import.meta.url).resolve('typescript/package.json');
  compilerVersion ??= readFile(manifest, 'utf8').then((text) => (JSON.parse(text) as { version: string }).version);
  return compilerVersion;
}

/** One TypeScript module compiled to JavaScript (its relative `.ts` imports become `.js`), from the cache when there. */
export async function compileModule(source: Buffer, fileName: string): Promise<Buffer> {
  const key = createHash('sha256').update(`${await typescriptVersion()}\n${JSON.stringify(OPTIONS_KEY)}\n`).update(source).digest('hex');
  const cached = join(jsCache, key.slice(0, 2), `${key}.js`);
  try {
    return await readFile(cached);
  } catch {
    const ts = typescript();
    const out = ts.transpileModule(source.toString('utf8'), { compilerOptions: compilerOptions(ts), fileName, reportDiagnostics: true });
    const errors = (out.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
    if (errors.length > 0) throw new Error(`${fileName}: ${errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('; ')}`);
    const js = Buffer.from(out.outputText);
    await mkdir(join(jsCache, key.slice(0, 2)), { recursive: true });
    const partial = `${cached}.${process.pid}.partial`;
    await writeFile(partial, js);
    await rename(partial, cached);
    return js;
  }
}

/** A source path of a workspace package, `src/a/b.ts`, as the built path the image runs, `dist/a/b.js`. */
export function builtPath(sourcePath: string): string {
  const match = /^(?:\.\/)?src\/(.+)\.ts$/.exec(sourcePath);
  if (!match || sourcePath.endsWith('.d.ts')) throw new Error(`${sourcePath} is not a TypeScript module under src/`);
  return `${sourcePath.startsWith('./') ? './' : ''}dist/${match[1]}.js`;
}

/** A workspace package.json whose exports (and their conditions) name src/**.ts, pointed at the built dist/**.js. */
export function builtManifest(manifest: Record<string, unknown>): Record<string, unknown> {
  const rewrite = (value: unknown): unknown => {
    if (typeof value === 'string') return /^\.\/src\/.+\.ts$/.test(value) && !value.endsWith('.d.ts') ? builtPath(value) : value;
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewrite(v)]));
    return value;
  };
  return { ...manifest, exports: rewrite(manifest['exports']) };
}

/**
 * A workspace package (`dir`, relative to `root`) as the image carries it under app/: its package.json with the
 * exports rewritten, and dist/ compiled from src/ (any file of src/ that is not TypeScript is copied as it is).
 */
export async function builtWorkspaceEntries(root: string, dir: string): Promise<TarEntry[]> {
  const manifest = JSON.parse(await readFile(join(root, dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  const entries: TarEntry[] = [{ type: 'file', path: `app/${dir}/package.json`, mode: 0o644, data: Buffer.from(JSON.stringify(builtManifest(manifest), null, 2) + '\n') }];
  for (const entry of await entriesFromDirectory(join(root, dir, 'src'), 'src')) {
    if (entry.type === 'dir') entries.push({ ...entry, path: `app/${dir}/dist/${entry.path.slice('src/'.length)}` });
    else if (entry.type === 'file' && entry.path.endsWith('.ts') && !entry.path.endsWith('.d.ts')) {
      entries.push({ type: 'file', path: `app/${dir}/${builtPath(entry.path)}`, mode: 0o644, data: await compileModule(entry.data, join(root, dir, entry.path)) });
    } else if (!entry.path.endsWith('.d.ts')) entries.push({ ...entry, path: `app/${dir}/dist/${entry.path.slice('src/'.length)}` });
  }
  return entries;
}
