// Admission webhooks: the HTTPS server and its handlers, serving certificates, and the caBundle patch.
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
export { escapePointerToken, jsonPatchDiff } from './json-patch.ts';
export { WebhookServer, type WebhookServerOptions } from './server.ts';
