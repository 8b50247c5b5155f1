// metav1.LabelSelector matching, as the API server evaluates it: every matchLabels pair and every expression
// must hold; NotIn and DoesNotExist hold for a label that is absent; an empty selector matches everything.
import type { LabelSelector } from '../api/rbacdefinition.ts';

export function matchesSelector(selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  const have = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (have[key] !== value) return false;
  return (selector.matchExpressions ?? []).every((e) => {
    const present = Object.hasOwn(have, e.key);
    switch (e.operator) {
      case 'In':
        return present && (e.values ?? []).includes(have[e.key]!);
      case 'NotIn':
        return !present || !(e.values ?? []).includes(have[e.key]!);
      case 'Exists':
        return present;
      case 'DoesNotExist':
        return !present;
    }
    return false;
  });
}
