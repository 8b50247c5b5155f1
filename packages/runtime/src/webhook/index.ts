// Admission webhooks: the HTTPS server and its handlers, serving certificates, and the caBundle patch; the X.509
// issuer the serving certificates come from, which operators use for their own TLS too.
export {
  AdmissionDeniedError,
  type AdmissionRequest,
  type AdmissionResponse,
  type GroupVersionKind,
  type GroupVersionResource,
  type MutatingHandler,
  type MutationResult,
  type Operation,
  type UserInfo,
  type ValidatingHandler,
  type ValidationResult,
} from './admission.ts';
export { patchCaBundle, type PatchCaBundleOptions, type WebhookConfigurationNames } from './ca-bundle.ts';
export { webhookRetryLog, type WebhookLogger, type WebhookLogLevel } from './cert-reloader.ts';
export { generateCertificates, writeCertificates, type CertificateOptions, type GeneratedCertificates } from './certs.ts';
export { ensureServingCertificate, type ServingCertificateOptions } from './serving-secret.ts';
export {
  caRequest,
  CLOCK_SKEW_ALLOWANCE_MS,
  createCertificateAuthority,
  issueCertificate,
  issueLeafCertificate,
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
export { escapePointerToken, jsonPatchDiff } from './json-patch.ts';
export { WebhookServer, type WebhookClientAuth, type WebhookServerOptions } from './server.ts';
export { REFUSAL_WARN_INTERVAL_MS, WEBHOOK_REFUSALS, WEBHOOK_REFUSED_METRIC, type RefusalMetrics, type WebhookRefusal } from './refusals.ts';
