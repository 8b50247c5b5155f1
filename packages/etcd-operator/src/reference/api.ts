// docs/api.md, generated from the CRD's schema (so the reference cannot disagree with what the API server
// enforces): every field with its type, default, constraints and description, then the CEL rules. It sits above
// api/ and webhooks/ because it documents both (the admission checks come from the webhooks, which build on api/).
import { celRulesTable, code, fieldTable, printerColumnsTable, prose, schemaReference, storageVersion, type CustomResourceDefinition, type PrinterColumn, type ReferenceOptions, type RuleRow } from '@quorum/runtime/crd';
import { BACKUP_PRINTER_COLUMNS, etcdBackupCRD, etcdBackupScheduleCRD, etcdClusterCRD, etcdRestoreCRD, GENERATE_COMMAND, PRINTER_COLUMNS, RESTORE_PRINTER_COLUMNS, SCHEDULE_PRINTER_COLUMNS } from '../api/crd.ts';
import { BACKUP_KIND } from '../api/etcdbackup.ts';
import { SCHEDULE_KIND } from '../api/etcdbackupschedule.ts';
import { RESTORE_KIND } from '../api/etcdrestore.ts';
import { API_VERSION, DEFAULT_ETCD_RESOURCES, DEFAULT_REPOSITORY, KIND, MEMBER_CONTAINER_SECURITY, MEMBER_POD_SECURITY, PLURAL, RESERVED_SPEC_FIELDS, SHORT_NAMES } from '../api/etcdcluster.ts';
import type { AdmissionChecks } from '../webhooks/admission.ts';
import { ETCDBACKUP_ADMISSION } from '../webhooks/etcdbackup.ts';
import { ETCDBACKUPSCHEDULE_ADMISSION } from '../webhooks/etcdbackupschedule.ts';
import { ETCDCLUSTER_ADMISSION } from '../webhooks/etcdcluster.ts';
import { ETCDRESTORE_ADMISSION } from '../webhooks/etcdrestore.ts';

/** The file the generator writes, relative to the repository root. */
export const DOCS_FILE = 'docs/api.md';

/** A kind's scope and names, from its CRD: plural, short names and categories (`kubectl get quorum` lists them all). */
function namesSentence(crd: CustomResourceDefinition): string {
  const { plural, shortNames, categories } = crd.spec.names;
  const list = (label: string, names: readonly string[]): string[] => (names.length === 0 ? [] : [`${label}${names.length > 1 ? 's' : ''} ${names.map((n) => `\`${n}\``).join(', ')}`]);
  const categoryNote = categories.length === 0 ? '' : ` (\`kubectl get ${categories[0]}\` lists the objects of every kind in it)`;
  return `${crd.spec.scope}; ${[`plural \`${plural}\``, ...list('short name', shortNames), ...list('category', categories)].join(', ')}${categoryNote}.`;
}

/** The member pod's defaults (api/etcdcluster.ts, which cluster/resources.ts renders pods with), under an EtcdCluster's spec and an EtcdRestore's clusterSpec. */
function podTemplateDefaults(prefix: string): Record<string, string> {
  const fieldByField = 'field by field: each field set replaces one (used by the operator, never stored)';
  return {
    [`${prefix}.podTemplate.spec.securityContext`]: `${code(MEMBER_POD_SECURITY)}, ${fieldByField}`,
    [`${prefix}.podTemplate.spec.containerSecurityContext`]: `${code(MEMBER_CONTAINER_SECURITY)}, ${fieldByField}`,
    [`${prefix}.podTemplate.spec.resources`]: `${code(DEFAULT_ETCD_RESOURCES)} on the etcd container (used by the operator, never stored)`,
  };
}

const REFERENCE: ReferenceOptions = {
  /** Defaults the operator applies in code rather than in the schema (see applyDefaults, etcdImage and memberPod). */
  codeDefaults: {
    'spec.repository': `\`${DEFAULT_REPOSITORY}\` when \`image\` is unset (used by the operator, never stored)`,
    ...podTemplateDefaults('spec'),
    ...podTemplateDefaults('spec.clusterSpec'),
  },
};

/** The whole of docs/api.md. */
export function apiReferenceMarkdown(): string {
  const crd = etcdClusterCRD();
  const version = storageVersion(crd);
  const scale = version.subresources.scale;
  if (!scale) throw new Error('the CRD has no scale subresource');
  const root = version.schema.openAPIV3Schema;
  const spec = schemaReference(root.properties?.spec, 'spec', REFERENCE);
  const status = schemaReference(root.properties?.status, 'status', REFERENCE);
  const rootRules: RuleRow[] = (root['x-kubernetes-validations'] ?? []).map((r) => ({ field: '', ...r }));
  const nameNode = root.properties?.metadata?.properties?.name;

  const lines = [
    `<!-- Generated from packages/etcd-operator/src/api/etcdcluster.ts by \`${GENERATE_COMMAND}\`; do not edit. -->`,
    '',
    `# ${KIND} API reference (\`${API_VERSION}\`)`,
    '',
    `${root.description ?? ''} ${namesSentence(crd)}`,
    'The same schema produces the CRD in `packages/etcd-operator/deploy/crds/`, the TypeScript types, and the defaults',
    'and validation the operator and its admission webhooks apply (`src/api/defaults.ts`), so the webhooks being off',
    'changes nothing. Unknown fields are rejected (with `kubectl`\'s default strict field validation) or pruned.',
    '',
    'Guides: rolling updates of `version` and configuration in [upgrades.md](upgrades.md), backups and restores in',
    '[backup.md](backup.md), peer and client TLS (`spec.tls`) in [tls.md](tls.md).',
    '',
    '```yaml',
    `apiVersion: ${API_VERSION}`,
    `kind: ${KIND}`,
    'metadata:',
    '  name: example',
    'spec:',
    '  replicas: 3',
    '  version: 3.6.16',
    '  storage:',
    '    volumeClaimTemplate:',
    '      resources:',
    '        requests:',
    '          storage: 8Gi',
    '```',
    '',
    '## metadata',
    '',
    `\`metadata.name\`: ${prose(nameNode?.description ?? '')} Pattern ${code(nameNode?.pattern ?? '')}.`,
    '',
    '## spec',
    '',
    ...fieldTable(spec.rows),
    '',
    // Listed only while some field is planned and not built.
    ...(RESERVED_SPEC_FIELDS.length === 0
      ? []
      : ['### Reserved fields', '', 'Planned, and not accepted yet, so that a manifest using them fails loudly instead of being silently ignored:', '', ...RESERVED_SPEC_FIELDS.map((r) => `- \`${r.field}\`: ${r.description}`), '']),
    '## status',
    '',
    'Written by the operator through the `/status` subresource.',
    '',
    ...fieldTable(status.rows),
    '',
    '## Validation rules (CEL)',
    '',
    'Checked by the API server on every create and update (rules using `oldSelf` on updates only), and again by the',
    'operator and the validating webhook with the same messages.',
    '',
    ...celRulesTable([...rootRules, ...spec.rules, ...status.rules]),
    '',
    ...admissionSection(ETCDCLUSTER_ADMISSION),
    '## Printer columns',
    '',
    ...printerColumnsTable(PRINTER_COLUMNS),
    '',
    '## Subresources',
    '',
    `- \`status\`: the operator writes status only through it; users cannot change it with the main resource.`,
    `- \`scale\`: \`${scale.specReplicasPath}\` ↔ \`${scale.statusReplicasPath}\`, so \`kubectl scale ${SHORT_NAMES[0] ?? PLURAL}/NAME --replicas=5\` works.`,
    '',
    ...kindReference(etcdBackupCRD(), BACKUP_KIND, BACKUP_PRINTER_COLUMNS, 'How backups are taken, and every backend with an example: [backup.md](backup.md).', ETCDBACKUP_ADMISSION),
    ...kindReference(etcdBackupScheduleCRD(), SCHEDULE_KIND, SCHEDULE_PRINTER_COLUMNS, 'Scheduled backups and retention, with an example: [backup.md](backup.md#scheduled-backups-and-retention).', ETCDBACKUPSCHEDULE_ADMISSION),
    ...kindReference(etcdRestoreCRD(), RESTORE_KIND, RESTORE_PRINTER_COLUMNS, 'How a restore goes, with an example: [backup.md](backup.md#etcdrestore).', ETCDRESTORE_ADMISSION),
  ];
  return lines.join('\n');
}

/** The section of a kind that, like EtcdBackup, is namespaced with spec and status: fields, rules and columns. */
function kindReference(crd: CustomResourceDefinition, kind: string, columns: PrinterColumn[], guide: string, admission: AdmissionChecks): string[] {
  const root = storageVersion(crd).schema.openAPIV3Schema;
  const spec = schemaReference(root.properties?.spec, 'spec', REFERENCE);
  const status = schemaReference(root.properties?.status, 'status', REFERENCE);
  const rootRules: RuleRow[] = (root['x-kubernetes-validations'] ?? []).map((r) => ({ field: '', ...r }));
  return [
    `# ${kind} API reference (\`${API_VERSION}\`)`,
    '',
    `${root.description ?? ''} ${namesSentence(crd)} ${guide}`,
    '',
    '## spec',
    '',
    ...fieldTable(spec.rows),
    '',
    '## status',
    '',
    ...fieldTable(status.rows),
    '',
    '## Validation rules (CEL)',
    '',
    ...celRulesTable([...rootRules, ...spec.rules, ...status.rules]),
    '',
    ...admissionSection(admission),
    '## Printer columns',
    '',
    ...printerColumnsTable(columns),
    '',
  ];
}

/** What a kind's validating webhook checks beyond the CRD (webhooks/*.ts), ending with a blank line. */
function admissionSection(checks: AdmissionChecks): string[] {
  return [
    '## Checked at admission (validating webhook)',
    '',
    'Beyond the schema and the CEL rules, the validating webhook that every operator replica serves refuses what',
    'the CRD does not check and would only fail later. It is `failurePolicy: Ignore`: while the operator is down',
    'these checks are skipped; each item says what happens then.',
    '',
    ...checks.errors.map((e) => `- ${e}`),
    ...(checks.warnings.length > 0 ? ['', 'Admitted with a warning:', '', ...checks.warnings.map((w) => `- ${w}`)] : []),
    '',
  ];
}
