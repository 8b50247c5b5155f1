// Naming a kind on the command line as kubectl does: `deployment`, `deployments`, `deploy`, `Deployment.apps`,
// `deployments.apps`, `cm`, `etcd`. The name is matched against the kinds that have records, so a kind whose
// CRD is gone can still be named, and a name that two groups share is reported as ambiguous.
import type { KindInfo } from '../history/protocol.ts';
import { pluralOf } from '../kind-names.ts';
import { groupKindName } from '../recorder/discovery.ts';
import { CliError } from './errors.ts';

/** kubectl's short names of the kinds the recorder records by default, and a few more. */
const SHORT_NAMES: Record<string, { group: string; kind: string }> = {
  deploy: { group: 'apps', kind: 'Deployment' },
  sts: { group: 'apps', kind: 'StatefulSet' },
  ds: { group: 'apps', kind: 'DaemonSet' },
  rs: { group: 'apps', kind: 'ReplicaSet' },
  svc: { group: '', kind: 'Service' },
  cm: { group: '', kind: 'ConfigMap' },
  ing: { group: 'networking.k8s.io', kind: 'Ingress' },
  netpol: { group: 'networking.k8s.io', kind: 'NetworkPolicy' },
  cj: { group: 'batch', kind: 'CronJob' },
  po: { group: '', kind: 'Pod' },
  sa: { group: '', kind: 'ServiceAccount' },
  pvc: { group: '', kind: 'PersistentVolumeClaim' },
  pv: { group: '', kind: 'PersistentVolume' },
  ns: { group: '', kind: 'Namespace' },
  ep: { group: '', kind: 'Endpoints' },
  hpa: { group: 'autoscaling', kind: 'HorizontalPodAutoscaler' },
  pdb: { group: 'policy', kind: 'PodDisruptionBudget' },
  crd: { group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' },
  etcd: { group: 'etcd.quorum.dev', kind: 'EtcdCluster' },
  recorder: { group: 'history.quorum.dev', kind: 'ChangeRecorder' },
};

function namesOf(kind: KindInfo): string[] {
  const names = [kind.kind.toLowerCase(), pluralOf(kind.kind)];
  for (const [short, target] of Object.entries(SHORT_NAMES)) if (target.group === kind.group && target.kind === kind.kind) names.push(short);
  return names;
}

/** The kind `token` names among `kinds` (those that have records). */
export function resolveKind(token: string, kinds: readonly KindInfo[]): KindInfo {
  const lower = token.toLowerCase();
  const dot = lower.indexOf('.');
  const name = dot < 0 ? lower : lower.slice(0, dot);
  const group = dot < 0 ? undefined : lower.slice(dot + 1);
  const matches = kinds.filter((k) => (group === undefined || k.group === group) && namesOf(k).includes(name));
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    throw new CliError(`${token} is ambiguous: it names ${matches.map(groupKindName).join(' and ')}; write it as KIND.GROUP, e.g. ${groupKindName(matches[0]!)}`);
  }
  const known = kinds.map(groupKindName);
  throw new CliError(`no records of any kind named ${JSON.stringify(token)}${known.length ? ` (kinds with records: ${known.join(', ')})` : ' (there are no records yet)'}`);
}
