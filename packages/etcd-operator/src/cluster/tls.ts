// Moved to tls/members.ts with the rest of the operator's TLS (issue 20). This re-export is kept only for
// scripts/start.ts, outside this package, until its import names tls/members.ts; nothing in the package uses it.
export { inPodEtcdctlFlags } from '../tls/members.ts';
