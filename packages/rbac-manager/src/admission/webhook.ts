// The escalation webhook: a definition is admitted only if its author could bind, themselves, every role it
// references in every place it binds it. Each check is a SubjectAccessReview asked as the author (user,
// groups, uid, extra from the admission request), for the `bind` verb on the role, which is the rule
// Kubernetes applies to whoever creates a RoleBinding directly.
//
// Fail-closed, unlike the etcd operator's webhooks. Those only default and validate what the operator checks
// again in its own code, so letting a request through while they are down costs nothing (Ignore keeps the
// clusters manageable when the operator is not). Here the webhook is the only thing that knows who asked:
// the manager acts later, with its own rights (it holds `bind`), and cannot check the author. A definition
// admitted unchecked would grant whatever it names, so when the webhook cannot answer, or a review fails, the
// answer is no. Deleting a definition (revoking) is not intercepted, so access can always be taken away.
import { subjectAccessReview, SubjectAccessReviews, type AdmissionRequest, type Client, type UserInfo, type ValidationResult } from '@quorum/runtime';
import type { RBACDefinition } from '../api/rbacdefinition.ts';
import { validateDefinition } from '../api/validate.ts';
import { describeCheck, requiredChecks, type ResourceCheck } from './grants.ts';

export const ESCALATION_WEBHOOK_PATH = '/validate-rbacdefinition';
/** Reviews in flight at once for one request. */
const PARALLEL_REVIEWS = 16;
/** At most this many refusals are named in the message. */
const NAMED_REFUSALS = 5;

export type AccessReviewer = (user: UserInfo, check: ResourceCheck) => Promise<{ allowed: boolean; reason?: string }>;

/** A SubjectAccessReview through the API server (the manager needs `create subjectaccessreviews`). */
export function subjectAccessReviewer(client: Pick<Client, 'create'>): AccessReviewer {
  return async (user, check) => {
    const attributes = { group: check.group, resource: check.resource, verb: check.verb, ...(check.name !== undefined ? { name: check.name } : {}), ...(check.namespace !== undefined ? { namespace: check.namespace } : {}) };
    const review = await client.create(SubjectAccessReviews, subjectAccessReview(user, attributes));
    return { allowed: review.status?.allowed === true, ...(review.status?.reason ? { reason: review.status.reason } : {}) };
  };
}

export function escalationWebhook(review: AccessReviewer): (request: AdmissionRequest<RBACDefinition>) => Promise<ValidationResult> {
  return async (request) => {
    if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return { allowed: true };
    const definition = request.object;
    if (!definition) return { allowed: false, message: 'no object in the admission request', code: 400 };
    const invalid = validateDefinition(definition);
    if (invalid.length > 0) return { allowed: false, message: invalid.join('; '), code: 422 };
    const checks = requiredChecks(definition, request.operation === 'UPDATE' ? request.oldObject : undefined);
    const refused = await refusedChecks(request.userInfo, checks, review);
    if (refused.length === 0) return { allowed: true };
    const who = request.userInfo.username ?? 'the requesting user';
    const named = refused.slice(0, NAMED_REFUSALS).map((r) => `${r.check.source}: ${describeCheck(r.check)}${r.why ? ` (${r.why})` : ''}`);
    const more = refused.length > NAMED_REFUSALS ? `; and ${refused.length - NAMED_REFUSALS} more` : '';
    return {
      allowed: false,
      code: 403,
      reason: 'Forbidden',
      message: `${who} may not grant what they could not bind themselves: ${named.join('; ')}${more}. Ask for the bind verb on those roles (docs/rbac.md, "The escalation rule").`,
    };
  };
}

async function refusedChecks(user: UserInfo, checks: readonly ResourceCheck[], review: AccessReviewer): Promise<{ check: ResourceCheck; why?: string }[]> {
  const refused: { check: ResourceCheck; why?: string }[] = [];
  const queue = [...checks];
  const worker = async (): Promise<void> => {
    for (let check = queue.shift(); check; check = queue.shift()) {
      try {
        const answer = await review(user, check);
        if (!answer.allowed) refused.push({ check, ...(answer.reason ? { why: answer.reason } : {}) });
      } catch (err) {
        // Fail closed: a review that cannot be made is a refusal, with the API server's words.
        refused.push({ check, why: `the access review failed: ${err instanceof Error ? err.message : String(err)}` });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_REVIEWS, queue.length) }, worker));
  return refused.sort((a, b) => a.check.source.localeCompare(b.check.source));
}
