// @quorum/kit: the machinery every Quorum operator shares, written once, on top of @quorum/runtime.
// The status write lives in the runtime (an operator built on the runtime alone needs it too); the kit re-exports it.
export { applyMergePatch, sameStatus, statusMergePatch, writeStatus, type StatusObject, type StatusPatchClient, type WriteStatusOptions } from '@quorum/runtime';
export {
  EXIT_DONE,
  EXIT_FAILED,
  EXIT_USAGE,
  loadWith,
  printAndLoadImages,
  runCommand,
  UsageError,
  wholeNumberFlag,
  type BuiltImage,
  type Command,
  type CommandFrame,
  type CommandIO,
} from './cli.ts';
export { rbacRolesTable, ruleKey, withGeneratedSection, type DocRbacObject, type DocRule, type RolesTableOptions } from './rbac-doc.ts';
export { webhookServing, WEBHOOK_REPUBLISH_MS, WEBHOOK_RETRY_MS, type WebhookServing, type WebhookServingOptions } from './webhook-serving.ts';
// The runtime's X.509 issuer (the one in Quorum's code), re-exported: an operator takes its TLS from the kit like the rest.
export {
  caRequest,
  CLOCK_SKEW_ALLOWANCE_MS,
  createCertificateAuthority,
  generateCertificates,
  issueCertificate,
  issueLeafCertificate,
  leafRequest,
  loadCertificateAuthority,
  needsRotation,
  ROTATE_WHEN_REMAINING_FRACTION,
  USAGE_EKUS,
  type CertificateAuthority,
  type CertificateOptions,
  type CertificateRequest,
  type DistinguishedName,
  type ExtendedKeyUsage,
  type GeneratedCertificates,
  type IssuedCertificate,
  type LeafOptions,
  type LeafUsage,
} from '@quorum/runtime';
export {
  DEFAULT_STEP_DEADLINE_MS,
  formatAge,
  nextStepRecord,
  progressMessage,
  retryDelayMs,
  STEP_WARN_MS,
  stepAgeMs,
  StepVoice,
  type RepeatedStep,
  type StepRecord,
  type StepRefusal,
  type StepVoiced,
  type StepVoiceOptions,
  type StepVoiceOutput,
} from './step.ts';
export {
  NONROOT_UID,
  RESTRICTED_CONTAINER_SECURITY,
  RESTRICTED_NAMESPACE_LABELS,
  RESTRICTED_POD_SECURITY,
  restrictedContainerSecurity,
  restrictedPodSecurity,
  type RestrictedContainerSecurityContext,
  type RestrictedPodSecurityContext,
} from './pod-security.ts';
export {
  applyManifests,
  deleteIfPresent,
  describeObject,
  manifestType,
  removeManifests,
  rolledOut,
  waitCaBundlesPublished,
  waitRolledOut,
  withPublishedCaBundles,
  type ApplyManifestsOptions,
  type InstallLog,
  type RemoveManifestsOptions,
  type RolloutView,
} from './install.ts';
// The runtime's bounded waits, which the installer is built on.
export { crdEstablished, waitFor, waitForCRDEstablished, WaitTimeoutError, type WaitOptions } from '@quorum/runtime';
// Backups: the destination schema every backup kind takes (its builders and the agents' parser, which load
// TypeBox, are `@quorum/kit/schema`), and the credentials label check (no confused deputy).
export {
  DESTINATION_EXACTLY_ONE,
  destinationIssues,
  endpointAllowed,
  ENDPOINT_RULE,
  OBJECT_NAME_PATTERN,
  type AzureDestination,
  type AzureDestinationSchemaType,
  type Destination,
  type DestinationSchemaOptions,
  type DestinationSchemaType,
  type GcsDestination,
  type GcsDestinationSchemaType,
  type PvcDestination,
  type PvcDestinationSchemaType,
  type S3Destination,
  type S3DestinationSchemaType,
} from './backup-destination.ts';
export { BACKUP_CREDENTIALS_LABEL_VALUE, checkCredentials, credentialsRefusal, credentialsSecretOf, secretAccessReviews, type CredentialsRefusal, type SecretAccess } from './backup-credentials.ts';
export { compactTimestamp, MAX_RESULT_BYTES, resultLine, retryWhileUnreachable, type Reached } from './backup-agent.ts';
// Operator-managed TLS in Secrets (CA and leaf certificates issued, checked, renewed; ownership of their names).
export { bundleFingerprints, oneLineName, OID, pemBlocks, pemCertificates } from './tls/x509.ts';
export { foreignSecretProblem, secretOwner, type SecretOwner, type SecretOwnerSpec } from './tls/ownership.ts';
export {
  bundleProblem,
  caProfile,
  ForeignSecretError,
  leafProblem,
  loadCA,
  readManagedSecrets,
  secretContents,
  TLS_KEYS,
  tlsSecretObject,
  TLSNotReadyError,
  writeIssuedSecret,
  type IssueReason,
  type SecretContents,
  type SecretObject,
} from './tls/secrets.ts';
// A CA rotated in three steps (TrustNew, Reissue, DropOld) recorded in its Secret's keys.
export {
  CA_ROTATION_KEYS,
  CA_ROTATION_STEP_FROM,
  caBundle,
  caRotationDue,
  caRotationPhase,
  caRotationTime,
  rotatedCAContents,
  type CARotationPhase,
  type CARotationStep,
} from './tls/ca-rotation.ts';
// Each operator's per-object NetworkPolicy: the policy, the operator's own pods as a peer, clientsFrom's schema and rule.
export {
  ingressPolicy,
  namespaceNamed,
  networkPeerJsonSchema,
  operatorPeer,
  peerSelectorsWellFormed,
  SAME_NAMESPACE,
  SELECTOR_OPERATORS,
  selectorValuesRule,
  type IngressPeer,
  type IngressPolicy,
  type IngressPolicyOptions,
  type IpBlockPeer,
  type LabelSelector,
  type LabelSelectorRequirement,
  type NetworkPeer,
  type SelectorCelRule,
} from './network-policy.ts';
export { DEFAULT_TENANT_NAMESPACES, scopedRoles, tenantNamespaces, tenantNamespaceSelector, type ScopedRoleOptions, type TenantScopeOptions } from './tenant-scope.ts';
export { foreignJobOf, jobNameTaken, JOB_NAME_TAKEN_BOUND_MS, JOB_NAME_TAKEN_RECHECK_MS, type ForeignJob, type JobNameTaken, type JobNameTakenWording } from './foreign-job.ts';
export { latestTime, nextTime, parseSchedule, scheduleHashSeed, scheduleInterval, type ParsedSchedule } from './backup-schedule-cron.ts';
export { observePruneJob, PRUNE_CONTAINER, pruneJobManifest, pruneJobName, type PruneJobSpec } from './prune-job.ts';
export { MAX_COUNTED_TIMES, scheduleTimes, skippedTimes, type BackupScheduleMetrics, type ScheduleTimes, type SkipReason } from './backup-schedule-metrics.ts';
export { backupScheduleReconciler, type BackupScheduleKind, type BackupScheduleObject, type BackupScheduleReconcilerDeps, type ScheduleBackupObject } from './backup-schedule-reconcile.ts';
export {
  backupScheduleStatus,
  DEFAULT_PRUNE_RETRY_MS,
  dueTime,
  durationMs,
  expiredBackups,
  observeScheduledBackup,
  planSchedule,
  pruneJobNameTaken,
  scheduledBackupName,
  skippedByForbid,
  type BackupScheduleContext,
  type BackupScheduleFailure,
  type BackupScheduleStatus,
  type PruneJob,
  type ScheduleAction,
  type ScheduledBackup,
  type ScheduledBackupPhase,
  type ScheduledBackupRecord,
  type ScheduleObserved,
} from './backup-schedule.ts';
export {
  alertRule,
  copyLabel,
  dashboardPanels,
  dashboardVariable,
  grafanaDashboardConfigMapObject,
  grafanaDashboardObject,
  keepPods,
  operatorPodMonitor,
  operatorScrapeConfig,
  podLabelMeta,
  prometheusRuleObject,
  renderAlertTemplate,
  SERVICE_ACCOUNT_TOKEN_FILE,
  type AlertRule,
  type AlertSpec,
  type DashboardOptions,
  type DashboardPanel,
  type PanelSpec,
  type RelabelConfig,
  type RuleGroup,
  type ScrapeConfig,
} from './monitoring.ts';
export { escapeHelmActions, monitoringValueTemplate, namespaceSelectorTemplate, scopedRbacTemplate, tenantListTemplate, TENANT_ENV_TEMPLATE, type ScopedRbacTemplate } from './helm.ts';
