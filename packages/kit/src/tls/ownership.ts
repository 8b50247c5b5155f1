// Whose a Secret at one of an operator-managed TLS name is. The names are predictable (`<name>-ca`, `<name>-tls`),
// so a Secret of the same name may be someone else's: the operator must neither adopt it as a CA (whatever it
// serves would trust whoever holds its key) nor overwrite or delete it (issue 23). Ours is a Secret the operator
// made for this very object (a controlling owner reference to its uid), or one a person handed over on purpose, as
// a restore of a CA Secret from a copy does: no controller, and the hand-over labels the operator names.
import type { KubeObject } from '@quorum/runtime';

export type SecretOwner = 'ours' | 'foreign';

/** The object a managed Secret belongs to, and the labels that hand a Secret without a controller over to it. */
export interface SecretOwnerSpec {
  /** The owner's kind (`EtcdCluster`, `Redis`) and name; the uid its Secrets' controlling owner references carry. */
  kind: string;
  name: string;
  uid?: string | undefined;
  /** Labels (all of them) that make a Secret without a controller this owner's. */
  handOverLabels: Readonly<Record<string, string>>;
  /** How messages call the owner ("cluster"), and where the docs explain the hand-over. */
  noun: string;
  docs: string;
}

export function secretOwner(secret: KubeObject, owner: SecretOwnerSpec): SecretOwner {
  const controller = (secret.metadata.ownerReferences ?? []).find((r) => r.controller === true);
  if (controller) return controller.kind === owner.kind && controller.uid === owner.uid ? 'ours' : 'foreign';
  const labels = secret.metadata.labels ?? {};
  return Object.entries(owner.handOverLabels).every(([k, v]) => labels[k] === v) ? 'ours' : 'foreign';
}

/** The status message (Degraded) for a Secret in the way of one the operator manages. Never quotes its data. */
export function foreignSecretProblem(secret: KubeObject, owner: SecretOwnerSpec): string {
  const controller = (secret.metadata.ownerReferences ?? []).find((r) => r.controller === true);
  const labels = Object.entries(owner.handOverLabels).map(([k, v]) => `${k}=${v}`).join(', ');
  const whose = controller ? `it is controlled by ${controller.kind} ${controller.name}` : `it has no owner and lacks the labels ${labels}`;
  return `Secret ${secret.metadata.name} is in the way of the one the operator manages for ${owner.kind} ${owner.name} (${whose}): it is never used, overwritten or deleted. Rename or delete it, or hand it over with those labels if it is this ${owner.noun}'s (${owner.docs})`;
}
