// metav1.Condition's schema, for a status that carries conditions: the same in every CRD but for which
// condition types it allows, so the `type` field is the caller's.
import type { SchemaNode } from './schema.ts';

/** The schema of one metav1.Condition, with `type` constrained by `type` (a description, a pattern, a length). */
export function conditionSchema(type: Omit<SchemaNode, 'type'>): SchemaNode {
  return {
    description: 'A metav1.Condition.',
    type: 'object',
    properties: {
      type: { ...type, type: 'string' },
      status: { description: 'Status of the condition: True, False or Unknown.', type: 'string', enum: ['True', 'False', 'Unknown'] },
      observedGeneration: { description: 'metadata.generation the condition was computed from.', type: 'integer', format: 'int64', minimum: 0 },
      lastTransitionTime: { description: 'When the status last changed.', type: 'string', format: 'date-time' },
      reason: { description: 'Machine-readable CamelCase reason for the last transition.', type: 'string', pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$', minLength: 1, maxLength: 1024 },
      message: { description: 'Human-readable details of the last transition.', type: 'string', maxLength: 32768 },
    },
    required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  };
}
