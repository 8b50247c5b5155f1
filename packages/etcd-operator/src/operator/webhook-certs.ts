// The webhooks' object names are declared with the other installed objects (deploy/manifests.ts). Kept here only
// for test/integration/webhooks-down.test.ts, which imports them from this path; it goes once that file imports
// deploy/manifests.ts.
export { CERT_SECRET, MUTATING_WEBHOOK, VALIDATING_WEBHOOK } from '../deploy/manifests.ts';
