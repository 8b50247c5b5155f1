// @quorum/kit: the machinery every Quorum operator shares, written once, on top of @quorum/runtime.
export { applyMergePatch, sameStatus, statusMergePatch, writeStatus, type StatusObject, type StatusPatchClient, type WriteStatusOptions } from './status.ts';
export { webhookServing, WEBHOOK_REPUBLISH_MS, WEBHOOK_RETRY_MS, type WebhookServing, type WebhookServingOptions } from './webhook-serving.ts';
