// Schema nodes every kind of the API uses, in the structural form a CRD needs (TypeBox's own forms are not).
import { Type, type TUnsafe } from '@sinclair/typebox';
import type { Condition } from '@quorum/runtime';
import { conditionSchema } from '@quorum/runtime/crd';
export { stringEnum } from '@quorum/kit/schema';

/** status.conditions: metav1.Conditions keyed by type, limited to `types`. */
export function conditionList(description: string, types: readonly string[], typeDescription: string): TUnsafe<Condition[]> {
  return Type.Unsafe<Condition[]>({
    description,
    type: 'array',
    items: conditionSchema({ description: typeDescription, enum: [...types] }),
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
  });
}
