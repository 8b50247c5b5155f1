// The public API reports of the published packages (@quorum/runtime, @quorum/storage), with API Extractor:
// one report per export of each package.json (`.` → api/<name>.api.md, `./testing` → api/<name>-testing.api.md),
// committed so that a change to what a package exports shows in review.
//
//   bash scripts/node24 scripts/api-report.ts --check    fails, with the changed lines, when a report is stale (npm test)
//   bash scripts/node24 scripts/api-report.ts --update   rewrites the reports after an intended API change
//
// The declarations are built into a scratch folder outside the repository (never into dist/, which `npm pack`
// owns), beside a link to the repository's node_modules so that they resolve the packages' dependencies; not
// inside node_modules itself, where TypeScript would take them for an external library's.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CompilerState, Extractor, ExtractorConfig, ExtractorLogLevel, type ExtractorMessage } from '@microsoft/api-extractor';

const root = join(import.meta.dirname, '..');
export const API_PACKAGES = ['runtime', 'storage'] as const;

interface Manifest {
  name: string;
  exports: Record<string, { types: string }>;
}

/** Each export's report name and its declaration file, relative to the package (`dist/…d.ts`). */
function entryPoints(pkg: string): { report: string; types: string }[] {
  const manifest = JSON.parse(readFileSync(join(root, 'packages', pkg, 'package.json'), 'utf8')) as Manifest;
  return Object.entries(manifest.exports).map(([subpath, conditions]) => ({
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
  const prepare = (entry: { report: string; types: string }): ExtractorConfig => {
    const configObject = ExtractorConfig.loadFile(configFile);
    configObject.mainEntryPointFilePath = join(out, entry.types);
    configObject.compiler!.overrideTsconfig = { ...configObject.compiler!.overrideTsconfig, files: entries.map((e) => join(out, e.types)) };
    configObject.apiReport = { ...configObject.apiReport!, enabled: true, reportFileName: entry.report, reportFolder: join(packageDir, 'api'), reportTempFolder: join(out, 'api') };
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
  return problems;
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
      if (values.check) console.error('\napi-report: a public API changed; if that is intended, run `bash scripts/node24 scripts/api-report.ts --update` and commit the reports');
      process.exitCode = 1;
    } else if (values.check) {
      console.log(`api-report: the reports of ${API_PACKAGES.map((p) => `@quorum/${p}`).join(', ')} match their exports`);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

main();
