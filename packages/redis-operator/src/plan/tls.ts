// The planner's TLS steps, pure like the rest: an instance serving another certificate than its Secret holds
// reloads it in place, and an operator-managed CA is rotated one step at a time (TrustNew, Reissue, DropOld: the
// kit's tls/ca-rotation.ts), each only once every instance serves the Secret's certificate and every Sentinel was
// made from it (a Sentinel cannot reload: a new certificate rolls the Sentinels, changes.ts).
import { unsettled } from './changes.ts';
import { instanceNames, reading, wait } from './facts.ts';
import type { Action, Observed } from './types.ts';

/**
 * An instance that serves another certificate than its Secret holds loads its files again: Redis 7 reads them at
 * start and on CONFIG SET, so a renewal needs no restart. The kubelet refreshes the mounted Secret on its own period
 * (about a minute): until then a reload loads the old files, and is asked again.
 */
export function planReload(o: Observed): Action | undefined {
  const expected = o.tls?.certificate;
  if (expected === undefined) return undefined;
  const pods = [...o.pods.values()].filter((p) => p.component === 'redis' && !p.deleting).sort((a, b) => a.name.localeCompare(b.name));
  for (const pod of pods) {
    const r = reading(o, pod.name);
    if (r?.ok && r.certificate !== undefined && r.certificate !== expected) return { type: 'reload-tls', instance: pod.name };
  }
  return undefined;
}

/** Why the rotation cannot take its next step yet: an instance or Sentinel that does not serve, or serves another certificate. */
function notReady(o: Observed, doing: string): Action | undefined {
  const gate = unsettled(o, doing);
  if (gate?.type === 'wait') return wait('CARotation', gate.message);
  if (gate !== undefined) return gate;
  for (const instance of instanceNames(o)) {
    const r = reading(o, instance);
    if (!r?.ok || r.certificate !== o.tls?.certificate) {
      return wait('CARotation', `${doing} waits for ${instance} to serve the certificate ${o.tls?.secretName ?? ''} holds now (the kubelet refreshes mounted Secrets within about a minute)`);
    }
  }
  return undefined;
}

/**
 * The next step of an operator-managed CA rotation (docs/redis.md "Rotating the CA"). Redis clients verify the
 * servers and present no certificate, so the overlap is where they need it: between TrustNew (the bundle they read
 * trusts both CAs) and Reissue (the servers present certificates of the new CA). The overlap is not a step: the
 * Redis is steady meanwhile, and status.tls.caRotation says until when. DropOld follows once every pod serves a
 * certificate of the new CA.
 */
export function planCARotation(o: Observed): Action | undefined {
  const r = o.tls?.caRotation;
  if (r === undefined || o.tls?.certificate === undefined) return undefined;
  if (r.phase === 'TrustNew' && (r.overlapLeftMs ?? 0) > 0) return undefined;
  const gate = notReady(o, r.phase === 'Start' ? `rotating the CA (${r.why})` : `rotating the CA (${r.phase})`);
  if (gate !== undefined) return gate;
  switch (r.phase) {
    case 'Start':
      return { type: 'rotate-ca', step: 'TrustNew', detail: `rotating the CA (${r.why}): a new CA joins the bundle beside the old one; the certificate is issued again with both, the instances reload it and the Sentinels restart one at a time` };
    case 'TrustNew':
      return { type: 'rotate-ca', step: 'Reissue', detail: 'rotating the CA: every instance and Sentinel trusts both CAs and the overlap is over; the certificate is signed by the new CA from now on' };
    case 'Reissue':
      return { type: 'rotate-ca', step: 'DropOld', detail: 'rotating the CA: every instance and Sentinel serves a certificate of the new CA; the old CA leaves the bundle' };
  }
}
