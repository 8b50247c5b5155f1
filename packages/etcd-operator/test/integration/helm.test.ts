// The Helm chart on a real cluster, with the real helm (v3.22.0, tools/helm): `helm install` cluster-wide gives
// a working operator (webhooks answering, its PodDisruptionBudget healthy, an EtcdCluster Available), and
// `helm upgrade` to two tenant namespaces (a value change that replaces the ClusterRole by a Role in each and
// rolls the pods) leaves a working operator that manages both, each watched on its own by Role, and ignores a
// cluster in any other namespace.
// Single-member clusters only: what is tested is the install, not etcd.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive operator
// @timeout 20m: installs, upgrades and uninstalls the chart
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import type { V1Deployment, V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import { ClusterRoles, Deployments, PodDisruptionBudgets, Pods, Roles } from '@quorum/runtime';
import { TestEnv } from '@quorum/localkube/testing';
import { helmBinary } from '@quorum/localkube';
import { LABELS } from '../../src/names.ts';
import { uninstall, waitForWebhooks } from '../../src/deploy/install.ts';
import { NAME, RESTRICTED_NAMESPACE_LABELS, WATCH_ROLE } from '../../src/deploy/manifests.ts';
import { EtcdClusters } from '../../src/resources.ts';
import { applyCluster, eventually, loadOperatorImages, operatorImage, peerWaitImage, waitAvailable } from './support.ts';

const run = promisify(execFile);
const chartDir = join(import.meta.dirname, '..', '..', '..', '..', 'deploy', 'helm', 'quorum');
const OPERATOR_PODS = 'app.kubernetes.io/name=quorum,app.kubernetes.io/component=operator';
const RELEASE = 'quorum';

let env: TestEnv;
let helm = '';
let helmHome = '';
/** The release's namespace (restricted, as `quorum manifests` makes its own), the two tenants, and another. */
let operatorNs = '';
let watched = '';
let tenant = '';
let other = '';

async function helmRun(args: string[]): Promise<string> {
  const home = { HELM_CONFIG_HOME: join(helmHome, 'config'), HELM_CACHE_HOME: join(helmHome, 'cache'), HELM_DATA_HOME: join(helmHome, 'data') };
  const { stdout } = await run(helm, [...args, '--kubeconfig', env.kubeconfig], { env: { ...process.env, ...home }, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

const imageValues = (): string[] => {
  const split = (image: string): [string, string] => [image.slice(0, image.lastIndexOf(':')), image.slice(image.lastIndexOf(':') + 1)];
  const [repository, tag] = split(operatorImage);
  const [peerWaitRepository, peerWaitTag] = split(peerWaitImage);
  return ['--set-string', `image.repository=${repository},image.tag=${tag},peerWaitImage.repository=${peerWaitRepository},peerWaitImage.tag=${peerWaitTag}`];
};

/** Every operator pod runs the Deployment's current template, and as many as it asks for: no old pod is left to act. */
async function waitRolledOut(): Promise<void> {
  await eventually('the operator Deployment rolled out', async () => {
    const d = (await env.client.get(Deployments, { namespace: operatorNs, name: NAME })) as unknown as V1Deployment;
    const s = d.status ?? {};
    const pods = (await env.client.list(Pods, { namespace: operatorNs, labelSelector: OPERATOR_PODS })).items as unknown as V1Pod[];
    const complete = (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1) && s.updatedReplicas === d.spec?.replicas && s.replicas === d.spec?.replicas && s.availableReplicas === d.spec?.replicas;
    return complete && pods.length === d.spec?.replicas;
  }, { timeoutMs: 180_000, intervalMs: 1000 });
}

before(async () => {
  env = await TestEnv.start();
  // One build at a time: two cores.
  helm = await helmBinary();
  await loadOperatorImages(env);
  helmHome = await mkdtemp(join(tmpdir(), 'quorum-helm-'));
  // On the suite's shared cluster the other files install the operator with `quorum install`; helm refuses
  // to take over objects it did not create, so that install goes first (the next file's setUpOperator
  // applies it again). The CRDs stay: helm leaves existing ones alone.
  await uninstall(env.client);
  operatorNs = await env.namespace('helm-operator', { labels: RESTRICTED_NAMESPACE_LABELS });
  watched = await env.namespace('helm-watched');
  tenant = await env.namespace('helm-tenant');
  other = await env.namespace('helm-other');
});

after(async () => {
  // Clusters first, while the operator still runs; then the release (its CRDs stay, as they do for users).
  for (const [namespace, name] of [[watched, 'first'], [tenant, 'second'], [other, 'outside']] as const) {
    await env.client.delete(EtcdClusters, { namespace, name }).catch(() => undefined);
  }
  if (helm && operatorNs) await helmRun(['uninstall', RELEASE, '--namespace', operatorNs, '--wait', '--timeout', '2m']).catch((err: unknown) => process.stderr.write(`helm uninstall: ${(err as Error).message}\n`));
  if (helmHome) await rm(helmHome, { recursive: true, force: true });
  await env.stop();
});

test('helm install cluster-wide reaches a working operator: webhooks answer, its budget is healthy, a cluster becomes Available', async () => {
  await helmRun(['install', RELEASE, chartDir, '--namespace', operatorNs, ...imageValues(), '--set', 'crashLoopGraceSeconds=15,clusterWide=true', '--wait', '--timeout', '3m']);
  await waitRolledOut();
  await waitForWebhooks(env.client, watched);
  await eventually('the operator PodDisruptionBudget allows one disruption of two', async () => {
    const pdb = (await env.client.get(PodDisruptionBudgets, { namespace: operatorNs, name: NAME })) as unknown as V1PodDisruptionBudget;
    return pdb.status?.currentHealthy === 2 && pdb.status.disruptionsAllowed === 1;
  }, { timeoutMs: 60_000, intervalMs: 1000 });
  await applyCluster(env.client, watched, 'first', { replicas: 1 });
  await waitAvailable(env.client, watched, 'first', 1);
});

test('helm upgrade to two tenant namespaces: a Role in each instead of the ClusterRole, both managed, another ignored', async () => {
  await helmRun(['upgrade', RELEASE, chartDir, '--namespace', operatorNs, '--reuse-values', '--set', `clusterWide=false,namespaces={${watched},${tenant}}`, '--wait', '--timeout', '3m']);
  // An old pod still watching everything would manage the other namespace's cluster: none may be left.
  await waitRolledOut();
  assert.equal(await env.client.find(ClusterRoles, NAME), undefined, 'helm removed the all-namespaces ClusterRole');
  for (const namespace of [watched, tenant]) assert.ok(await env.client.find(Roles, { namespace, name: WATCH_ROLE }), `a Role in ${namespace}`);
  await waitForWebhooks(env.client, tenant);

  await applyCluster(env.client, other, 'outside', { replicas: 1 });
  await applyCluster(env.client, tenant, 'second', { replicas: 1 });
  await waitAvailable(env.client, tenant, 'second', 1);
  // The cluster from before the upgrade is still the operator's.
  await waitAvailable(env.client, watched, 'first', 1, 60_000);
  // By now the operator has had as long as a whole cluster's creation to act on the other one: it has not.
  const outside = await env.client.get(EtcdClusters, { namespace: other, name: 'outside' });
  assert.equal(outside.status, undefined, 'no status written outside the tenant namespaces');
  const pods = await env.client.list(Pods, { namespace: other, labelSelector: `${LABELS.instance}=outside` });
  assert.equal(pods.items.length, 0, 'no member pod created outside the tenant namespaces');
});
