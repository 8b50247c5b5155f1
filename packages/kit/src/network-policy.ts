// What every operator's per-object NetworkPolicy shares (issue 23, "closed ports"): the policy itself (ingress
// only, to the object's pods, each port from its own list of peers), the peer every operator admits (its own pods,
// found by namespace and labels), and `spec.network.clientsFrom`: a NetworkPolicyPeer
// without ipBlock, its CRD schema as plain data (so that `@quorum/kit` loads no TypeBox: an API module wraps it with
// `Type.Unsafe`), its CEL rule and the same rule in code. The etcd operator's cluster policy has this shape
// (packages/etcd-operator/src/cluster/resources.ts); the Redis operator's is built from it.
import type { NetworkPolicy, OwnerReference } from '@quorum/runtime';

export const SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;

export interface LabelSelectorRequirement {
  key: string;
  operator: (typeof SELECTOR_OPERATORS)[number];
  values?: string[];
}

/** A metav1.LabelSelector. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** A NetworkPolicyPeer without ipBlock: pods of these labels in these namespaces (either unset: the policy's namespace, every pod). */
export interface NetworkPeer {
  namespaceSelector?: LabelSelector;
  podSelector?: LabelSelector;
}

/** Addresses outside the pod selectors' reach (the API server, nodes): a CIDR, less the ranges in `except`. */
export interface IpBlockPeer {
  ipBlock: { cidr: string; except?: string[] };
}

/** Who an ingress rule admits: pods (NetworkPeer) or addresses (IpBlockPeer). */
export type IngressPeer = NetworkPeer | IpBlockPeer;

/** Every pod of the object's own namespace: what clientsFrom means when it is unset. */
export const SAME_NAMESPACE: readonly NetworkPeer[] = [{ podSelector: {} }];

/** The namespace of this name (the API server labels every namespace with its name). */
export function namespaceNamed(namespace: string): LabelSelector {
  return { matchLabels: { 'kubernetes.io/metadata.name': namespace } };
}

/** An operator's own pods: its Deployment's pod labels, in its namespace (POD_NAMESPACE). */
export function operatorPeer(namespace: string, podLabels: Readonly<Record<string, string>>): NetworkPeer {
  return { namespaceSelector: namespaceNamed(namespace), podSelector: { matchLabels: { ...podLabels } } };
}

export interface IngressPolicyOptions {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  /** The object the policy belongs to (it goes with it); unset for a policy an install applies, which has no owner. */
  ownerReferences?: OwnerReference[];
  /** The pods the policy selects: every other ingress to them is refused. */
  podLabels: Record<string, string>;
  /** Each TCP port, and who may connect to it (`from` unset: every source, as NetworkPolicy says). */
  ingress: readonly { ports: readonly number[]; from?: readonly IngressPeer[] }[];
}

export type IngressPolicy = NetworkPolicy & { apiVersion: string; kind: string };

/** The policy: ingress only (what the pods dial is not restricted), every listed port from its peers, nothing else. */
export function ingressPolicy(o: IngressPolicyOptions): IngressPolicy {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: o.name, namespace: o.namespace, labels: o.labels, ...(o.ownerReferences ? { ownerReferences: o.ownerReferences } : {}) },
    spec: {
      podSelector: { matchLabels: o.podLabels },
      policyTypes: ['Ingress'],
      ingress: o.ingress.map((rule) => ({
        ...(rule.from ? { from: rule.from.map((peer) => structuredClone(peer)) } : {}),
        ports: rule.ports.map((port) => ({ protocol: 'TCP', port })),
      })),
    },
  };
}

/** A CEL rule (an `x-kubernetes-validations` item). */
export interface SelectorCelRule {
  rule: string;
  message: string;
}

const expressionsWellFormed = (side: string): string =>
  `(!has(self.${side}) || !has(self.${side}.matchExpressions) || self.${side}.matchExpressions.all(e, (e.operator == 'In' || e.operator == 'NotIn') == (has(e.values) && size(e.values) > 0)))`;

/** On each peer of `field` (e.g. spec.network.clientsFrom): In and NotIn take values, Exists and DoesNotExist none. */
export function selectorValuesRule(field: string): SelectorCelRule {
  return {
    rule: `${expressionsWellFormed('namespaceSelector')} && ${expressionsWellFormed('podSelector')}`,
    message: `${field}[]: a matchExpressions entry with operator In or NotIn needs values, and one with Exists or DoesNotExist takes none`,
  };
}

/** selectorValuesRule in code, for an operator's own validation (the CRD may be older than the operator). */
export function peerSelectorsWellFormed(peer: unknown): boolean {
  const expressions = (side: 'namespaceSelector' | 'podSelector'): unknown[] => {
    const selector = isObject(peer) ? peer[side] : undefined;
    return isObject(selector) && Array.isArray(selector['matchExpressions']) ? selector['matchExpressions'] : [];
  };
  const wellFormed = (e: unknown): boolean => !isObject(e) || (e['operator'] === 'In' || e['operator'] === 'NotIn') === (Array.isArray(e['values']) && e['values'].length > 0);
  return [...expressions('namespaceSelector'), ...expressions('podSelector')].every(wellFormed);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A metav1.LabelSelector's schema, field by field, so that the API server checks it before an operator copies it into a policy. */
function labelSelectorJsonSchema(description: string): Record<string, unknown> {
  return {
    type: 'object',
    description,
    properties: {
      matchLabels: { type: 'object', description: 'Labels an object must carry, each with this value.', maxProperties: 64, additionalProperties: { type: 'string' } },
      matchExpressions: {
        type: 'array',
        description: 'Requirements an object must meet, all of them.',
        maxItems: 32,
        items: {
          type: 'object',
          description: 'A label selector requirement.',
          required: ['key', 'operator'],
          properties: {
            key: { type: 'string', description: 'The label key.', minLength: 1, maxLength: 317 },
            operator: { type: 'string', description: 'In, NotIn, Exists or DoesNotExist.', enum: [...SELECTOR_OPERATORS] },
            values: { type: 'array', description: 'The values of In and NotIn; none for Exists and DoesNotExist.', maxItems: 64, items: { type: 'string', description: 'A label value.', maxLength: 63 } },
          },
        },
      },
    },
  };
}

/**
 * The JSON schema of one `clientsFrom` peer for a CRD (a NetworkPolicyPeer without ipBlock), with `rule` (the
 * selectorValuesRule of its field) on it; `owner` names whose namespace an unset namespaceSelector means.
 */
export function networkPeerJsonSchema(owner: string, rule: SelectorCelRule): Record<string, unknown> {
  return {
    type: 'object',
    description: 'A NetworkPolicyPeer (networking.k8s.io/v1) without ipBlock: namespaceSelector, podSelector, or both (pods of those labels in those namespaces).',
    minProperties: 1,
    properties: {
      namespaceSelector: labelSelectorJsonSchema(`Namespaces whose pods may connect ({} for every namespace). Without podSelector: every pod of those namespaces; unset: the ${owner}'s own namespace.`),
      podSelector: labelSelectorJsonSchema(`Pods that may connect ({} for every pod), in the namespaces namespaceSelector selects, or in the ${owner}'s own namespace when it is unset.`),
    },
    'x-kubernetes-validations': [rule],
  };
}
