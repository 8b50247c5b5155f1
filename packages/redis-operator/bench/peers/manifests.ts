// What both peer operators' installs share: their CRDs and ClusterRole read from their exported source (the
// CRDs are 0.3 to 0.9 MB each, so they stay there, uncommitted), and a namespace, ServiceAccount and
// ClusterRoleBinding of the bench's naming around one Deployment.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeObject } from '@quorum/runtime';
import { parseAllDocuments } from 'yaml';

export type Manifest = KubeObject & { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };

/** Every YAML document of `file` (relative to the source root) that is an object with a kind. */
export async function sourceManifests(source: string, file: string): Promise<Manifest[]> {
  const text = await readFile(join(source, file), 'utf8');
  return parseAllDocuments(text).map((d) => d.toJS() as Manifest | null).filter((m): m is Manifest => m !== null && typeof m.kind === 'string');
}

/** The peer's ClusterRole from its source, under the bench's name (the source's names are generic, e.g. manager-role). */
export async function sourceClusterRole(source: string, file: string, name: string): Promise<Manifest> {
  const role = (await sourceManifests(source, file)).find((m) => m.kind === 'ClusterRole');
  if (!role) throw new Error(`${file}: no ClusterRole`);
  return { ...role, metadata: { name } };
}

/** The namespace, ServiceAccount and ClusterRoleBinding an operator named `name` runs with (pure). */
export function operatorAccess(name: string, namespace: string): Manifest[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    } as Manifest,
  ];
}

/** One operator pod's Deployment, labelled app.kubernetes.io/name=`name` (pure). */
export function operatorDeployment(name: string, namespace: string, container: Record<string, unknown>): Manifest {
  const labels = { 'app.kubernetes.io/name': name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { serviceAccountName: name, containers: [{ name: 'operator', imagePullPolicy: 'IfNotPresent', ...container }] } } },
  } as Manifest;
}
