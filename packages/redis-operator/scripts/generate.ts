// Writes the files generated from code: the CRD YAML, the API reference section of docs/redis.md, its RBAC tables
// in docs/security.md (test/unit/rbac-doc.test.ts), and the
// monitoring files of deploy/monitoring/quorum-redis-* (test/unit/monitoring.test.ts checks them), and the Helm
// chart deploy/helm/quorum-redis (test/unit/helm.test.ts).
// Deterministic, so running it twice changes nothing; test/unit/api.test.ts fails when a committed copy is stale.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeGenerated } from '@quorum/runtime/crd';
import { BACKUP_CRD_FILE, CRD_FILE, redisBackupCRDYAML, redisBackupScheduleCRDYAML, redisCRDYAML, SCHEDULE_CRD_FILE, SCHEMA_DATA_FILE, schemaDataSource } from '../src/api/crd.ts';
import { DOCS_FILE, withReference } from '../src/api/docs.ts';
import { CHART_DIR, helmChart } from '../src/deploy/helm.ts';
import { SECURITY_FILE, withGeneratedRedisRbac } from '../src/deploy/rbac-doc.ts';
import { MONITORING_DIR, monitoringFiles } from '../src/monitoring/files.ts';

const packageDir = join(import.meta.dirname, '..');
const repoRoot = join(packageDir, '..', '..');
const docs = join(repoRoot, DOCS_FILE);

await writeGenerated(
  [
    [join(packageDir, CRD_FILE), redisCRDYAML()],
    [join(packageDir, SCHEMA_DATA_FILE), schemaDataSource()],
    [join(packageDir, BACKUP_CRD_FILE), redisBackupCRDYAML()],
    [join(packageDir, SCHEDULE_CRD_FILE), redisBackupScheduleCRDYAML()],
    [docs, withReference(await readFile(docs, 'utf8').catch(() => '# Redis\n'))],
    [join(repoRoot, SECURITY_FILE), withGeneratedRedisRbac(await readFile(join(repoRoot, SECURITY_FILE), 'utf8'))],
    ...Object.entries(monitoringFiles()).map(([file, content]): [string, string] => [join(repoRoot, MONITORING_DIR, file), content]),
    // After the CRDs: the chart's crds/ are taken from the manifests, which read them.
    ...Object.entries(helmChart()).map(([file, content]): [string, string] => [join(repoRoot, CHART_DIR, file), content]),
  ],
  repoRoot,
);
