// Writes the files generated from code: the CRD YAML, the schema as data (src/api/schema-data.ts) and docs/api.md
// (from the EtcdCluster schema), the
// reasons tables of docs/operations.md (from cluster/reasons.ts), the RBAC tables of docs/security.md (from
// deploy/rbac-doc.ts), the Helm chart (from the manifests) and
// deploy/monitoring/ (alert rules, scrape configs and the dashboard, from src/monitoring/). Deterministic, so
// running it twice changes nothing; test/unit/api-crd.test.ts fails when a committed copy is stale.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeGenerated } from '@quorum/runtime/crd';
import { BACKUP_CRD_FILE, CRD_FILE, etcdBackupCRDYAML, etcdBackupScheduleCRDYAML, etcdClusterCRDYAML, etcdRestoreCRDYAML, RESTORE_CRD_FILE, SCHEDULE_CRD_FILE, SCHEMA_DATA_FILE, schemaDataSource } from '../src/api/crd.ts';
import { apiReferenceMarkdown, DOCS_FILE } from '../src/reference/api.ts';
import { helmChart } from '../src/deploy/helm.ts';
import { SECURITY_FILE, withGeneratedRbac } from '../src/deploy/rbac-doc.ts';
import { OPERATIONS_FILE, withGeneratedReasons } from '../src/cluster/reasons.ts';
import { MONITORING_DIR, monitoringFiles } from '../src/monitoring/files.ts';

const packageDir = join(import.meta.dirname, '..');
const repoRoot = join(packageDir, '..', '..');

const outputs: [string, string][] = [
  [join(packageDir, CRD_FILE), etcdClusterCRDYAML()],
  [join(packageDir, BACKUP_CRD_FILE), etcdBackupCRDYAML()],
  [join(packageDir, SCHEDULE_CRD_FILE), etcdBackupScheduleCRDYAML()],
  [join(packageDir, RESTORE_CRD_FILE), etcdRestoreCRDYAML()],
  [join(packageDir, SCHEMA_DATA_FILE), schemaDataSource()],
  [join(repoRoot, DOCS_FILE), apiReferenceMarkdown()],
  [join(repoRoot, OPERATIONS_FILE), withGeneratedReasons(await readFile(join(repoRoot, OPERATIONS_FILE), 'utf8'))],
  [join(repoRoot, SECURITY_FILE), withGeneratedRbac(await readFile(join(repoRoot, SECURITY_FILE), 'utf8'))],
  ...Object.entries(helmChart()).map(([file, content]): [string, string] => [join(repoRoot, 'deploy', 'helm', 'quorum', file), content]),
  ...Object.entries(monitoringFiles()).map(([file, content]): [string, string] => [join(repoRoot, MONITORING_DIR, file), content]),
];

await writeGenerated(outputs, repoRoot);
