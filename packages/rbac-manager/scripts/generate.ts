// Writes the files generated from code: the RBACDefinition CRD YAML, the API section of docs/rbac.md, the
// manager's RBAC tables in docs/security.md (test/unit/rbac-doc.test.ts) and the Helm chart (from the manifests).
// Deterministic, so running it twice changes nothing; test/unit/api.test.ts fails when a committed copy is stale.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeGenerated } from '@quorum/runtime/crd';
import { CRD_FILE, rbacDefinitionCRDYAML } from '../src/api/crd.ts';
import { DOCS_FILE, withGeneratedReference } from '../src/reference/api.ts';
import { CHART_DIR, helmChart } from '../src/deploy/helm.ts';
import { SECURITY_FILE, withGeneratedRbacManagerRbac } from '../src/deploy/rbac-doc.ts';

const packageDir = join(import.meta.dirname, '..');
const repoRoot = join(packageDir, '..', '..');

await writeGenerated(
  [
    [join(packageDir, CRD_FILE), rbacDefinitionCRDYAML()],
    [join(repoRoot, DOCS_FILE), withGeneratedReference(await readFile(join(repoRoot, DOCS_FILE), 'utf8'))],
    [join(repoRoot, SECURITY_FILE), withGeneratedRbacManagerRbac(await readFile(join(repoRoot, SECURITY_FILE), 'utf8'))],
    ...Object.entries(helmChart()).map(([file, content]): [string, string] => [join(repoRoot, CHART_DIR, file), content]),
  ],
  repoRoot,
);
