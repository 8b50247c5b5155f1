// The CRD's CEL rules, mirrored in code under the same messages: the admission webhook and the manager check
// them too, since a definition may reach the manager through an API server that did not (an older CRD, or
// the API server's CEL cost limits).
import { parseDuration } from './duration.ts';
import { RULES, type RBACDefinition } from './rbacdefinition.ts';

/** Every broken rule, as `rbacBindings[i]…: message`; empty when the definition is valid. */
export function validateDefinition(definition: RBACDefinition): string[] {
  const errors: string[] = [];
  const seen = new Set<string>();
  (definition.rbacBindings ?? []).forEach((b, i) => {
    const at = `rbacBindings[${i}] (${b.name})`;
    if (seen.has(b.name)) errors.push(`${at}: binding names must be unique`);
    seen.add(b.name);
    if (b.expiresAt !== undefined && b.expiresAfter !== undefined) errors.push(`${at}: ${RULES.expiryAtMostOne.message}`);
    for (const [field, value] of [['notBefore', b.notBefore], ['expiresAt', b.expiresAt]] as const) {
      if (value !== undefined && Number.isNaN(Date.parse(value))) errors.push(`${at}.${field}: ${JSON.stringify(value)} is not an RFC 3339 time`);
    }
    if (b.expiresAt !== undefined && b.notBefore !== undefined && Date.parse(b.expiresAt) <= Date.parse(b.notBefore)) errors.push(`${at}: ${RULES.expiryAfterStart.message}`);
    if (b.expiresAfter !== undefined && parseDuration(b.expiresAfter) === undefined) errors.push(`${at}.expiresAfter: ${JSON.stringify(b.expiresAfter)} is not a duration such as 8h or 90m`);
    b.subjects.forEach((s, j) => {
      if (s.kind === 'ServiceAccount' && s.namespace === undefined) errors.push(`${at}.subjects[${j}]: ${RULES.serviceAccountNamespace.message}`);
      if (s.kind !== 'ServiceAccount' && (s.imagePullSecrets !== undefined || s.automountServiceAccountToken !== undefined)) errors.push(`${at}.subjects[${j}]: ${RULES.serviceAccountOnly.message}`);
    });
    (b.roleBindings ?? []).forEach((rb, j) => {
      if ((rb.clusterRole === undefined) === (rb.role === undefined)) errors.push(`${at}.roleBindings[${j}]: ${RULES.roleExactlyOne.message}`);
      if ((rb.namespace === undefined) === (rb.namespaceSelector === undefined)) errors.push(`${at}.roleBindings[${j}]: ${RULES.namespaceExactlyOne.message}`);
    });
  });
  return errors;
}
