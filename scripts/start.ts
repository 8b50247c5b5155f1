// `npm start`: the main job. Brings localkube up in .localkube/ (building or reusing everything it needs),
// builds the operator image and the peer-wait image (its member pods' init container) and loads both into
// every node, installs the operator from its own manifests, creates examples/basic.yaml (3 members with mutual
// TLS, the default; or examples/$QUORUM_EXAMPLE.yaml, e.g. QUORUM_EXAMPLE=plaintext), waits for it to be Available, installs
// the change recorder beside it (its own image and manifests, its ClusterRole derived from a sample
// ChangeRecorder for namespace default), then the RBAC manager with its example RBACDefinition, and prints
// what to try next, with the certificates when the example has client TLS.
// Everything keeps running afterwards; `npx localkube down` stops it.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { APISERVER_WEBHOOK_CLIENT_NAME, LocalKube, topology } from '../packages/localkube/src/index.ts';
import { minioImageArchive } from '../packages/localkube/src/storage/servers.ts';
import { progress, step } from '../packages/localkube/src/progress.ts';
import { Client, Secrets, Services } from '../packages/runtime/src/index.ts';
import { buildOperatorImage } from '../packages/etcd-operator/src/deploy/image.ts';
import { buildPeerWaitImage } from '../packages/etcd-operator/src/deploy/peer-wait-image.ts';
import { install } from '../packages/etcd-operator/src/deploy/install.ts';
import { EtcdClusters } from '../packages/etcd-operator/src/resources.ts';
import { BACKUP_CREDENTIALS_LABEL, BACKUP_CREDENTIALS_LABEL_VALUE } from '../packages/etcd-operator/src/backup/credentials.ts';
import { inPodEtcdctlFlags } from '../packages/etcd-operator/src/tls/members.ts';
import { withEffectiveTLS } from '../packages/etcd-operator/src/tls/defaults.ts';
import type { EtcdCluster } from '../packages/etcd-operator/src/api/etcdcluster.ts';
import { buildRecorderImage } from '../packages/recorder/src/deploy/image.ts';
import { installRecorder } from '../packages/recorder/src/deploy/install.ts';
import { sampleChangeRecorder } from '../packages/recorder/src/deploy/manifests.ts';
import { RoleBindings, Roles, ServiceAccounts } from '../packages/runtime/src/index.ts';
import { buildRbacManagerImage } from '../packages/rbac-manager/src/deploy/image.ts';
import { installRbacManager } from '../packages/rbac-manager/src/deploy/install.ts';
import { sampleDefinition } from '../packages/rbac-manager/src/deploy/manifests.ts';
import { RBACDefinitions } from '../packages/rbac-manager/src/resources.ts';
import { buildOperatorImage as buildRedisOperatorImage } from '../packages/redis-operator/src/deploy/image.ts';
import { install as installRedisOperator } from '../packages/redis-operator/src/deploy/install.ts';
import { buildRedisImage } from '../packages/redis-operator/src/image/redis.ts';
import { Redises } from '../packages/redis-operator/src/resources.ts';

const root = join(import.meta.dirname, '..');
const stateDir = join(root, '.localkube');

let kube: LocalKube;
try {
  kube = await LocalKube.attach(stateDir);
  progress(`localkube is already running in ${stateDir}`);
} catch {
  kube = await LocalKube.start({ nodes: 3, stateDir, detach: true });
}
const client = await Client.connect({ kubeconfig: kube.kubeconfig });
// Built while the operator installs and the example comes up: MinIO is the largest build of a cold first
// run, and nothing needs it until the S3 step below.
const minioAhead = minioImageArchive().then(
  () => undefined,
  (err: Error) => progress(`building MinIO ahead failed (the S3 step tries again): ${err.message}`),
);
const image = await step('operator image (Node 24, assembled locally)', () => buildOperatorImage());
await step(`loading ${image.name} into every node`, () => kube.loadImage(image.archive));
const peerWait = await step('peer-wait image (init container of etcd members; Go, assembled locally)', () => buildPeerWaitImage());
await step(`loading ${peerWait.name} into every node`, () => kube.loadImage(peerWait.archive));
await step('installing the operator from its manifests', () => install(client, { image: image.name, peerWaitImage: peerWait.name, log: (m) => progress(`  ${m}`) }));

const example = parse(await readFile(join(root, 'examples', `${process.env['QUORUM_EXAMPLE'] || 'basic'}.yaml`), 'utf8')) as EtcdCluster;
const ns = example.metadata.namespace ?? 'default';
const name = example.metadata.name!;
await client.apply(EtcdClusters, example, { fieldManager: 'quorum-start', force: true });
const running = await step(`waiting for EtcdCluster ${ns}/${name} to be Available`, async () => {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const c = await client.get(EtcdClusters, { namespace: ns, name });
    const available = c.status?.conditions?.find((x) => x.type === 'Available');
    if (available?.status === 'True' && (c.status?.readyReplicas ?? 0) >= (c.spec.replicas ?? 3)) return c;
    if (Date.now() > deadline) throw new Error(`not Available after 5 minutes: ${available?.reason ?? 'no status'}: ${available?.message ?? ''}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
});
// New clusters get TLS unless their spec says `tls: {disabled: true}` (examples/basic.yaml says nothing): what
// the cluster runs is in its status, and the TLS it applies is the operator's rule (tls/defaults.ts).
const runningSpec = withEffectiveTLS(running.spec, { status: running.status });
const clientTLS = running.status?.clientEndpoint?.startsWith('https:') ?? false;
const scheme = clientTLS ? 'https' : 'http';

// A real S3 server (MinIO) in localkube-storage, with the credentials Secret copied next to the example.
await minioAhead;
const s3 = await step('S3 storage for backups (MinIO in localkube-storage; built from the Go module proxy on first use)', () => kube.enableAddon('s3', { namespaces: [ns] }));
// The operator's backup Jobs mount only a credentials Secret its owner labelled for them (docs/backup.md).
await client.mergePatch(Secrets, { namespace: ns, name: s3.secretName }, { metadata: { labels: { [BACKUP_CREDENTIALS_LABEL]: BACKUP_CREDENTIALS_LABEL_VALUE } } }, { fieldManager: 'quorum-start' });

// The change recorder, recording the default kinds in namespace default (EtcdClusters among them, now served).
const recorderImage = await step('change recorder image (Node 24, assembled locally)', () => buildRecorderImage());
await step(`loading ${recorderImage.name} into every node`, () => kube.loadImage(recorderImage.archive));
const sample = sampleChangeRecorder(ns);
const webhookClientCA = await kube.webhookClientCA().catch(() => undefined);
const recorded = await step(`installing the change recorder from its manifests, with ChangeRecorder ${sample.metadata.name} for namespace ${ns}`, () =>
  // Its users webhook answers only the API server's client certificate (a localkube started before it had one: any caller).
  // localkube's Nodes carry no spec.podCIDRs: the users-webhook's NetworkPolicy is told the pod network.
  installRecorder(client, { image: recorderImage.name, recorders: [sample], podCIDRs: [topology.POD_NETWORK], readyTimeoutMs: 120_000, log: (m) => progress(`  ${m}`), ...(webhookClientCA ? { webhookClientCA, webhookClientNames: [APISERVER_WEBHOOK_CLIENT_NAME] } : {}) }),
);
// localkube's kubeconfig authenticates with a client certificate, which the API server cannot pass on to the
// recorder's history endpoint: `quorum history` needs a token. A reader that may view namespace default
// (the view ClusterRole, and Quorum's kinds, which view does not aggregate); each reader sees the records of
// what they may read.
const write = { fieldManager: 'quorum-start', force: true, fieldValidation: 'Strict' } as const;
const reader = [{ kind: 'ServiceAccount', name: 'history-reader', namespace: ns }];
const rbac = 'rbac.authorization.k8s.io';
await client.apply(ServiceAccounts, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'history-reader', namespace: ns } }, write);
await client.apply(RoleBindings, { apiVersion: `${rbac}/v1`, kind: 'RoleBinding', metadata: { name: 'history-reader-view', namespace: ns }, roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'view' }, subjects: reader }, write);
await client.apply(Roles, { apiVersion: `${rbac}/v1`, kind: 'Role', metadata: { name: 'history-reader-etcd', namespace: ns }, rules: [{ apiGroups: ['etcd.quorum.dev'], resources: ['etcdclusters', 'etcdbackupschedules'], verbs: ['get', 'list', 'watch'] }] }, write);
await client.apply(RoleBindings, { apiVersion: `${rbac}/v1`, kind: 'RoleBinding', metadata: { name: 'history-reader-etcd', namespace: ns }, roleRef: { apiGroup: rbac, kind: 'Role', name: 'history-reader-etcd' }, subjects: reader }, write);

// The RBAC manager, with its example definition: view (and 8 h of edit for on-call) in namespaces labelled team=demo.
const rbacImage = await step('RBAC manager image (Node 24, assembled locally)', () => buildRbacManagerImage());
await step(`loading ${rbacImage.name} into every node`, () => kube.loadImage(rbacImage.archive));
await step('installing the RBAC manager from its manifests, with RBACDefinition demo', async () => {
  await installRbacManager(client, { image: rbacImage.name, log: (m) => progress(`  ${m}`) });
  await client.apply(RBACDefinitions, sampleDefinition(), write);
});

// The Redis operator (docs/redis.md), with an example Redis: a primary, two replicas and three Sentinels.
const redisImages = await step('Redis operator image and Redis 7.0.15 (Debian 12 packages), assembled locally', async () => [await buildRedisOperatorImage(), await buildRedisImage()]);
for (const i of redisImages) await step(`loading ${i.name} into every node`, () => kube.loadImage(i.archive));
await step('installing the Redis operator from its manifests, with Redis cache', async () => {
  await installRedisOperator(client, { image: redisImages[0]!.name, log: (m) => progress(`  ${m}`) });
  await client.apply(Redises, { apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'Redis', metadata: { name: 'cache', namespace: ns }, spec: { replicas: 2, sentinel: { replicas: 3 } } }, write);
});

const kubectl = join(stateDir, 'bin', 'kubectl');
const out = async (args: string[]): Promise<string> => kube.kubectl(args);
const svc = (await client.get(Services, { namespace: ns, name: `${name}-client` })) as unknown as { spec: { clusterIP: string } };
process.stdout.write(`\n$ kubectl get etcd -n ${ns}\n${await out(['get', 'etcd', '-n', ns, '-o', 'wide'])}`);
// Inside a member pod etcdctl dials localhost (in the server certificate) with the pod's own certificate files.
const inPod = clientTLS ? ['--endpoints=https://localhost:2379', ...inPodEtcdctlFlags(runningSpec)] : [];
process.stdout.write(`\n$ kubectl exec -n ${ns} ${name}-0 -- etcdctl ${[...inPod, 'member', 'list', '-w', 'table'].join(' ')}\n${await out(['exec', '-n', ns, `${name}-0`, '--', 'etcdctl', ...inPod, 'member', 'list', '-w', 'table']).catch((e: Error) => e.message)}`);
// With client TLS the client certificate is in a Secret; from this host, the Service's IP is in no certificate,
// so curl is told which name to check it against (--resolve).
const secret = clientTLS ? (running.status?.tls?.clientSecret ?? `${name}-client-tls`) : '';
const certs = join(stateDir, `${name}-client`);
const connect = clientTLS
  ? `Connect to etcd (mutual TLS: the client certificate is in Secret ${ns}/${secret}):
  mkdir -p ${certs}
${['ca.crt', 'tls.crt', 'tls.key'].map((f) => `  ${kubectl} get secret ${secret} -n ${ns} -o jsonpath='{.data.${f.replace('.', '\\.')}}' | base64 -d > ${certs}/${f}`).join('\n')}
  from this host:  curl --cacert ${certs}/ca.crt --cert ${certs}/tls.crt --key ${certs}/tls.key --resolve ${name}-client.${ns}.svc:2379:${svc.spec.clusterIP} ${scheme}://${name}-client.${ns}.svc:2379/health
  from a pod with that Secret mounted at /certs:  etcdctl --endpoints=${scheme}://${name}-client.${ns}.svc:2379 --cacert=/certs/ca.crt --cert=/certs/tls.crt --key=/certs/tls.key endpoint health
  inside a member: ${kubectl} exec -n ${ns} ${name}-0 -- etcdctl ${inPod.join(' ')} endpoint health`
  : `Connect to etcd:
  from a pod:      etcdctl --endpoints=http://${name}-client.${ns}.svc:2379 endpoint health
  from this host:  ${join(process.env['HOME'] ?? '~', '.cache/quorum/bin/etcd-3.6.16/etcdctl')} --endpoints=http://${svc.spec.clusterIP}:2379 member list`;
process.stdout.write(`\n$ kubectl get changerecorders\n${await out(['get', 'changerecorders']).catch((e: Error) => e.message)}`);
for (const r of recorded.ready) process.stdout.write(`ChangeRecorder ${r.name}: Ready ${r.status} (${r.reason}): ${r.message}\n`);
client.close();
kube.client.close();
process.stdout.write(`
Quorum is running: localkube (${kube.nodes.length} nodes), the operator and the change recorder in quorum-system, and EtcdCluster ${ns}/${name}.
Try:
  export KUBECONFIG=${kube.kubeconfig}
  ${kubectl} get etcd -n ${ns} -w
  ${kubectl} patch etcd ${name} -n ${ns} --type merge -p '{"spec":{"replicas":5}}'    # scale (then back to 3)
  ${kubectl} delete pod ${name}-0 -n ${ns}                                              # the member comes back on its data
  ${kubectl} describe etcd ${name} -n ${ns}                                             # conditions and events
Back it up to MinIO (${s3.endpoint}, bucket ${s3.bucket}), then see docs/backup.md to restore from it:
  echo '{"apiVersion":"etcd.quorum.dev/v1alpha1","kind":"EtcdBackup","metadata":{"name":"${name}-first"},"spec":{"clusterName":"${name}","destination":{"s3":{"bucket":"${s3.bucket}","prefix":"${name}","endpoint":"${s3.endpoint}","forcePathStyle":true,"credentialsSecret":"${s3.secretName}"}}}}' | ${kubectl} apply -n ${ns} -f -
  ${kubectl} get etcdbackup -n ${ns} -w
${connect}
See what changed in namespace ${ns}, and undo it (docs/recorder.md). The recorder keeps the previous version of
every Deployment, ConfigMap, Secret (redacted), EtcdCluster… there; quorum history reads them through the API server
with a token (localkube's kubeconfig has a client certificate, which the API server cannot pass on):
  export QUORUM_HISTORY_TOKEN="$(${kubectl} create token history-reader -n ${ns})"
  ${kubectl} create configmap demo -n ${ns} --from-literal=color=red
  ${kubectl} patch configmap demo -n ${ns} -p '{"data":{"color":"blue"}}'
  npx quorum history list -n ${ns}
  npx quorum history diff cm/demo -n ${ns}
  npx quorum history restore cm/demo -n ${ns}                                          # back to red
  ${kubectl} patch etcd ${name} -n ${ns} --type merge -p '{"spec":{"replicas":5}}'; npx quorum history diff etcd/${name} -n ${ns}
Redis cache (docs/redis.md): a primary, two replicas, three Sentinels; the Service cache always reaches the primary:
  ${kubectl} get redis -n ${ns} -w
  ${kubectl} exec -n ${ns} cache-0 -c redis -- sh -c 'REDISCLI_AUTH=$REDIS_PASSWORD redis-cli --tls --cacert /tls/ca.crt -h cache ping'   # TLS only (docs/redis.md)
  ${kubectl} delete pod -n ${ns} $(${kubectl} get redis cache -n ${ns} -o jsonpath='{.status.primary}')   # Sentinel fails over
Grant access as code (docs/rbac.md): RBACDefinition demo binds view (and 8 h of edit) in namespaces labelled team=demo:
  ${kubectl} create namespace demo-app; ${kubectl} label namespace demo-app team=demo
  ${kubectl} get rolebindings -n demo-app; ${kubectl} get rbacdefinition demo -o yaml
  npm run kubectl-plugin:install; kubectl quorum access --explain oncall@example.com   # who can do what where, and why
Stop everything: npx localkube down
`);
