// An operator-managed CA rotated without downtime, in three steps recorded in the CA Secret itself, each one atomic
// write of it, so that an operator restarted anywhere reads from the Secret where the rotation stands:
//
//   TrustNew  a new CA is made beside the signing one (`next.crt`/`next.key`, unused for signing); `ca.crt`, the
//             bundle every holder must trust, is old + new.
//   Reissue   signing moves to the new CA (`tls.crt`/`tls.key`); `previous.crt` keeps the old one, still in the
//             bundle; `rotated-at` says when.
//   DropOld   only the new CA is left, in the bundle too.
//
// What each operator does between the steps (restart or reload what trusts the bundle, issue leaves again, wait an
// overlap) is its own; the contents and the phase they spell are shared (the etcd and Redis operators).
import { issueCertificate, needsRotation, type CertificateRequest } from '@quorum/runtime';
import { TLS_KEYS, type SecretContents } from './secrets.ts';

/**
 * A CA Secret's keys during a rotation. `trusted-at`: when the new CA joined the bundle, for an operator that counts
 * its overlap from TrustNew (it adds the key itself). `rotation-token`: the value of the owner's rotate-ca annotation
 * the rotation answered (a new value asks for another); kept after the rotation.
 */
export const CA_ROTATION_KEYS = { next: 'next.crt', nextKey: 'next.key', previous: 'previous.crt', rotatedAt: 'rotated-at', trustedAt: 'trusted-at', token: 'rotation-token' } as const;

export type CARotationPhase = 'None' | 'TrustNew' | 'Reissue';
export type CARotationStep = 'TrustNew' | 'Reissue' | 'DropOld';

/** The phase a CA Secret must be in for each step to be taken: anything else means the step was taken already. */
export const CA_ROTATION_STEP_FROM: Readonly<Record<CARotationStep, CARotationPhase>> = { TrustNew: 'None', Reissue: 'TrustNew', DropOld: 'Reissue' };

/** Where a CA Secret stands in a rotation, from its keys alone. */
export function caRotationPhase(contents: SecretContents | undefined): CARotationPhase {
  if (contents?.[CA_ROTATION_KEYS.next] && contents[CA_ROTATION_KEYS.nextKey]) return 'TrustNew';
  if (contents?.[CA_ROTATION_KEYS.previous]) return 'Reissue';
  return 'None';
}

/** A CA bundle of these certificates, in this order, one PEM block after the other. */
export function caBundle(...certificates: readonly string[]): string {
  return `${certificates.map((pem) => pem.trim()).join('\n')}\n`;
}

/**
 * The next contents of a CA Secret for a rotation step: TrustNew adds `next` (a new CA made now) beside the
 * signing one; Reissue signs with it from now on; DropOld leaves only it. Makes a key for TrustNew: not pure.
 */
export async function rotatedCAContents(contents: SecretContents, step: CARotationStep, profile: CertificateRequest, now: Date, token?: string): Promise<SecretContents> {
  const signing = contents[TLS_KEYS.certificate]!;
  const kept = token ?? contents[CA_ROTATION_KEYS.token];
  const recorded: Record<string, string> = kept !== undefined ? { [CA_ROTATION_KEYS.token]: kept } : {};
  switch (step) {
    case 'TrustNew': {
      const next = await issueCertificate(profile, now);
      return { [TLS_KEYS.ca]: caBundle(signing, next.certificatePem), [TLS_KEYS.certificate]: signing, [TLS_KEYS.key]: contents[TLS_KEYS.key]!, [CA_ROTATION_KEYS.next]: next.certificatePem, [CA_ROTATION_KEYS.nextKey]: next.privateKeyPem, ...recorded };
    }
    case 'Reissue':
      return { [TLS_KEYS.ca]: contents[TLS_KEYS.ca]!, [TLS_KEYS.certificate]: contents[CA_ROTATION_KEYS.next]!, [TLS_KEYS.key]: contents[CA_ROTATION_KEYS.nextKey]!, [CA_ROTATION_KEYS.previous]: signing, [CA_ROTATION_KEYS.rotatedAt]: now.toISOString(), ...recorded };
    case 'DropOld':
      return { [TLS_KEYS.ca]: signing, [TLS_KEYS.certificate]: signing, [TLS_KEYS.key]: contents[TLS_KEYS.key]!, ...recorded };
  }
}

/** A time a CA Secret records (`rotated-at`, `trusted-at`), in ms since the epoch; undefined when absent or unreadable. */
export function caRotationTime(contents: SecretContents | undefined, key: typeof CA_ROTATION_KEYS.rotatedAt | typeof CA_ROTATION_KEYS.trustedAt): number | undefined {
  const at = Date.parse(contents?.[key] ?? '');
  return Number.isNaN(at) ? undefined : at;
}

/**
 * Why a CA Secret that is in no rotation should start one, or undefined: a value of the owner's rotate-ca
 * annotation (named `annotation` in the answer) it has not answered yet, or its signing CA nearing its end (less
 * than a third of its validity left).
 */
export function caRotationDue(contents: SecretContents | undefined, token: string | undefined, annotation: string, now: Date): string | undefined {
  const signing = contents?.[TLS_KEYS.certificate];
  if (!contents || !signing || caRotationPhase(contents) !== 'None') return undefined;
  if (token !== undefined && contents[CA_ROTATION_KEYS.token] !== token) return `${annotation} is ${token}`;
  if (needsRotation(signing, now)) return 'the CA nears its end (less than a third of its validity left)';
  return undefined;
}
