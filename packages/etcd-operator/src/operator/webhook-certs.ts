// The names of the webhooks' serving certificate Secret and configurations: one CA and certificate for every
// replica, kept in the Secret, and the CA published into both configurations (the kit's webhookServing).
export const CERT_SECRET = 'quorum-webhook-certs';
export const VALIDATING_WEBHOOK = 'quorum-etcd-validating';
export const MUTATING_WEBHOOK = 'quorum-etcd-defaulting';
