// Writes the files generated from code: the ChangeRecorder CRD YAML, the spec's schema as data (src/api/schema-data.ts),
// the API section of docs/recorder.md, the recorder's RBAC tables in docs/security.md (src/deploy/rbac-doc.ts) and
// the Helm chart (from the manifests).
// Deterministic, so running it twice changes nothing; test/unit/api.test.ts (rbac-doc.test.ts for the RBAC) fails
// when a committed copy is stale.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeGenerated } from '@quorum/runtime/crd';
import { CRD_FILE, changeRecorderCRDYAML, SCHEMA_DATA_FILE, schemaDataSource } from '../src/api/crd.ts';
import { DOCS_FILE, withGeneratedReference } from '../src/reference/api.ts';
import { CHART_DIR, helmChart } from '../src/deploy/helm.ts';
import { SECURITY_FILE, withGeneratedRecorderRbac } from '../src/deploy/rbac-doc.ts';

const packageDir = join(import.meta.dirname, '..');
const repoRoot = join(packageDir, '..', '..');

const outputs: [string, string][] = [
  [join(packageDir, CRD_FILE), changeRecorderCRDYAML()],
  [join(packageDir, SCHEMA_DATA_FILE), schemaDataSource()],
  [join(repoRoot, DOCS_FILE), withGeneratedReference(await readFile(join(repoRoot, DOCS_FILE), 'utf8'))],
  [join(repoRoot, SECURITY_FILE), withGeneratedRecorderRbac(await readFile(join(repoRoot, SECURITY_FILE), 'utf8'))],
  ...Object.entries(helmChart()).map(([file, content]): [string, string] => [join(repoRoot, CHART_DIR, file), content]),
];

await writeGenerated(outputs, repoRoot);
