// @quorum/kit: the machinery every Quorum operator shares, written once, on top of @quorum/runtime.
export { applyMergePatch, sameStatus, statusMergePatch, writeStatus, type StatusObject, type StatusPatchClient, type WriteStatusOptions } from './status.ts';
export { webhookServing, WEBHOOK_REPUBLISH_MS, WEBHOOK_RETRY_MS, type WebhookServing, type WebhookServingOptions } from './webhook-serving.ts';
export {
  caRequest,
  CLOCK_SKEW_ALLOWANCE_MS,
  createCertificateAuthority,
  issueCertificate,
  issueLeafCertificate,
  issueServingCertificate,
  leafRequest,
  loadCertificateAuthority,
  needsRotation,
  ROTATE_WHEN_REMAINING_FRACTION,
  USAGE_EKUS,
  type CertificateAuthority,
  type CertificateRequest,
  type DistinguishedName,
  type ExtendedKeyUsage,
  type IssuedCertificate,
  type LeafOptions,
  type LeafUsage,
} from './x509.ts';
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
  RESTRICTED_POD_SECURITY,
  restrictedContainerSecurity,
  restrictedPodSecurity,
  type RestrictedContainerSecurityContext,
  type RestrictedPodSecurityContext,
} from './pod-security.ts';
