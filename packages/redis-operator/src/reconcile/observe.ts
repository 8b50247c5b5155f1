// observe: everything the planner needs, from the caches (pods, claims, Services, the ConfigMap), the password
// Secret, and the instances and Sentinels themselves, read side by side with bounded calls.
import { createHmac } from 'node:crypto';
import { checkCredentials } from '@quorum/kit';
import { NotFoundError, Secrets, type OpenObject } from '@quorum/runtime';
import { REDIS_BACKUP_CREDENTIALS_LABEL } from '../api/backup.ts';
import type { DefaultedSpec } from '../api/defaults.ts';
import type { BootstrapStatus } from '../api/redis.ts';
import { LABELS, REDIS_PORT, RETRY_ROLLOUT_ANNOTATION, SENTINEL_PORT, names, podHost, type Component } from '../names.ts';
import { instanceNames, sentinelNames } from '../plan/plan.ts';
import type { ConfigState, InstanceReading, Observed, PodFacts, SentinelReading } from '../plan/types.ts';
import { redisConf, sentinelConf } from '../render/config.ts';
import { CONFIG_HASH_ANNOTATION, CONFIG_KEYS, podHashes, services, type Rendering } from '../render/objects.ts';
import type { RedisObject } from '../resources.ts';
import type { ReconcilerDeps } from './deps.ts';
import { DEFAULT_CLUSTER_DOMAIN, observeTLS, ROTATE_CA_ANNOTATION, ROTATE_CERTIFICATES_ANNOTATION, type TLSObservation } from '../tls/certificates.ts';
import type { Endpoint } from '../redis/readings.ts';

export interface Seen {
  observed: Observed;
  rendering: Rendering;
  /** Pod IPs by pod name, for the act step's REPLICAOF. */
  ips: ReadonlyMap<string, string>;
  /** The password, when the Secret holds one. */
  password?: string;
  /** The backup spec.bootstrap.fromBackup names, resolved (status.bootstrap records it). */
  bootstrap?: BootstrapStatus;
  /** TLS as observed; absent without TLS. */
  tls?: TLSObservation;
}

/** How the operator dials a pod: its IP, with its stable name as TLS server name when the Redis has TLS. */
export function podEndpoint(seen: Pick<Seen, 'rendering' | 'tls'>, pod: string, ip: string, port: number, password: string): Endpoint {
  const { name, namespace } = seen.rendering.redis;
  const ca = seen.tls?.ca;
  return { host: ip, port, password, ...(ca !== undefined ? { tls: { ca, servername: podHost(name, namespace, pod) } } : {}) };
}

/**
 * The backup a new Redis starts from: the record in status once made (so that the pods never change because the
 * RedisBackup did, or was deleted), else the RedisBackup, which must have Succeeded and whose credentials Secret
 * must carry the label (the instance pods mount it). A reason not to start yet otherwise.
 */
async function resolveBootstrap(deps: ReconcilerDeps, redis: RedisObject, spec: DefaultedSpec): Promise<{ record?: BootstrapStatus; blocked?: string }> {
  const backupName = spec.bootstrap?.fromBackup.backupName;
  if (backupName === undefined) return {};
  const recorded = redis.status?.bootstrap;
  if (recorded !== undefined && recorded.backup === backupName) return { record: recorded };
  const namespace = redis.metadata.namespace ?? '';
  const backup = deps.backups.store.get(`${namespace}/${backupName}`);
  if (backup === undefined) return { blocked: `spec.bootstrap.fromBackup.backupName: the RedisBackup ${backupName} does not exist in this namespace` };
  const s = backup.status;
  if (s?.phase !== 'Succeeded' || s.key === undefined || s.sha256 === undefined) return { blocked: `spec.bootstrap.fromBackup.backupName: the RedisBackup ${backupName} has not succeeded (phase ${s?.phase ?? 'Pending'})` };
  const refusal = await checkCredentials(deps.client, namespace, backup.spec.destination, REDIS_BACKUP_CREDENTIALS_LABEL);
  if (refusal !== undefined) return { blocked: `spec.bootstrap.fromBackup: ${refusal.message}` };
  return { record: { backup: backupName, destination: backup.spec.destination, key: s.key, sha256: s.sha256, sizeBytes: s.sizeBytes ?? 0 } };
}

interface ContainerStatus {
  name: string;
  state?: { waiting?: { reason?: string } };
  lastState?: { terminated?: { exitCode?: number; reason?: string; message?: string } };
}
type Pod = OpenObject & { spec?: { nodeName?: string }; status?: { phase?: string; podIP?: string; conditions?: { type: string; status: string }[]; containerStatuses?: ContainerStatus[]; initContainerStatuses?: ContainerStatus[] } };

/** The last exit of a container in CrashLoopBackOff, in the kubelet's words. */
function crashLoop(pod: Pod): string | undefined {
  const looping = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].find((c) => c.state?.waiting?.reason === 'CrashLoopBackOff');
  if (looping === undefined) return undefined;
  const t = looping.lastState?.terminated;
  return `container ${looping.name} in CrashLoopBackOff${t ? `, last exit code ${t.exitCode ?? '?'} (${t.reason ?? ''}${t.message ? `: ${t.message.trim().slice(-300)}` : ''})` : ''}`;
}

function podFacts(pod: Pod, cordoned: (node: string) => boolean, now: Date): PodFacts {
  const looping = crashLoop(pod);
  const hash = pod.metadata.annotations?.[CONFIG_HASH_ANNOTATION];
  const node = pod.spec?.nodeName;
  return {
    name: pod.metadata.name ?? '',
    component: (pod.metadata.labels?.[LABELS.component] ?? 'redis') as Component,
    phase: pod.status?.phase ?? 'Pending',
    ready: pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    deleting: pod.metadata.deletionTimestamp !== undefined,
    ...(pod.metadata.labels?.[LABELS.role] ? { roleLabel: pod.metadata.labels[LABELS.role] } : {}),
    ...(hash !== undefined ? { hash } : {}),
    ...(looping !== undefined ? { crashLooping: looping } : {}),
    ...(node ? { node, ...(cordoned(node) ? { nodeCordoned: true } : {}) } : {}),
    ...(pod.metadata.creationTimestamp ? { ageMs: Math.max(0, now.getTime() - Date.parse(pod.metadata.creationTimestamp)) } : {}),
  };
}

async function readPassword(deps: ReconcilerDeps, namespace: string, secretName: string, key: string): Promise<string | undefined> {
  try {
    const secret = await deps.client.get(Secrets, { namespace, name: secretName });
    const value = secret.data?.[key];
    return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/**
 * spec.users' passwords as the pods would start with them: which Secrets (or keys) do not exist, or else a
 * fingerprint of the passwords. The fingerprint is an HMAC keyed by the Redis's own password, so the pod
 * annotation it ends up in (through the config hash) lets nobody who can read pods test guesses of a password.
 */
async function usersState(deps: ReconcilerDeps, namespace: string, spec: DefaultedSpec, key: string | undefined): Promise<{ problem?: string; fingerprint?: string }> {
  const users = spec.users ?? [];
  if (users.length === 0) return {};
  const missing: string[] = [];
  const hmac = createHmac('sha256', key ?? '');
  for (const [i, user] of users.entries()) {
    const secret = await deps.client.find(Secrets, { namespace, name: user.passwordSecret.name });
    const value = secret?.data?.[user.passwordSecret.key];
    if (value === undefined) missing.push(`spec.users[${i}] (${user.name}): the Secret ${user.passwordSecret.name} with key ${user.passwordSecret.key} does not exist`);
    else hmac.update(`${user.name}\0${value}\0`);
  }
  if (missing.length > 0) return { problem: missing.join('; ') };
  return key === undefined ? {} : { fingerprint: hmac.digest('hex').slice(0, 16) };
}

function configState(cm: OpenObject | undefined): ConfigState | undefined {
  const data = (cm as { data?: Record<string, string> } | undefined)?.data;
  if (data === undefined) return undefined;
  return { redisConf: data[CONFIG_KEYS.redis] ?? '', sentinelConf: data[CONFIG_KEYS.sentinel] ?? '', primary: data[CONFIG_KEYS.primary] ?? '' };
}

/** What the planner reads of TLS; a TrustNew's overlap as what is left of it now (the planner has no clock). */
function tlsFacts(tls: TLSObservation, overlapMs: number, now: Date): NonNullable<Observed['tls']> {
  const r = tls.caRotation;
  const overlapLeftMs = r?.phase === 'TrustNew' && r.since !== undefined ? Math.max(0, Date.parse(r.since) + overlapMs - now.getTime()) : 0;
  return {
    secretName: tls.secretName,
    issue: tls.issue,
    ...(tls.problem ? { problem: tls.problem } : {}),
    ...(tls.fingerprint256 !== undefined ? { certificate: tls.fingerprint256 } : {}),
    ...(r ? { caRotation: { phase: r.phase, why: r.why, ...(r.phase === 'TrustNew' ? { overlapLeftMs } : {}) } } : {}),
  };
}

export async function observe(deps: ReconcilerDeps, redis: RedisObject, spec: DefaultedSpec, now: Date): Promise<Seen> {
  const name = redis.metadata.name ?? '';
  const namespace = redis.metadata.namespace ?? '';
  const inNamespace = <T extends OpenObject>(store: { byIndex(i: string, v: string): T[] }): T[] => store.byIndex('namespace', namespace).filter((o) => o.metadata.labels?.[LABELS.instance] === name);
  const secretName = spec.auth.secretName ?? names.generatedSecret(name);
  const password = await readPassword(deps, namespace, secretName, spec.auth.key);
  const bootstrap = await resolveBootstrap(deps, redis, spec);
  const pods = new Map(inNamespace<Pod>(deps.pods.store).map((p) => [p.metadata.name ?? '', p]));
  const ref = { name, namespace, uid: redis.metadata.uid ?? '' };
  const podsExist = [...pods.values()].some((p) => p.metadata.labels?.[LABELS.component] !== 'sentinel');
  const tokens = { ca: redis.metadata.annotations?.[ROTATE_CA_ANNOTATION], certificates: redis.metadata.annotations?.[ROTATE_CERTIFICATES_ANNOTATION] };
  const tls = await observeTLS({ client: deps.client, redis: ref, spec, podsExist, clusterDomain: deps.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN, now, tokens });
  const users = await usersState(deps, namespace, spec, password);
  const rendering: Rendering = {
    redis: ref,
    spec,
    image: deps.image(spec.engine, spec.version),
    auth: { secretName, key: spec.auth.key },
    ...(bootstrap.record ? { restore: { bootstrap: bootstrap.record, agentImage: deps.agentImage } } : {}),
    ...(tls ? { tls: { secretName: tls.secretName, ...(tls.fingerprint !== undefined ? { fingerprint: tls.fingerprint } : {}) } } : {}),
    ...(users.fingerprint !== undefined ? { usersFingerprint: users.fingerprint } : {}),
  };
  const dial = (pod: string, ip: string, port: number, pw: string): Endpoint => podEndpoint({ rendering, ...(tls ? { tls } : {}) }, pod, ip, port, pw);

  const ips = new Map([...pods].flatMap(([n, p]) => (p.status?.podIP ? [[n, p.status.podIP] as const] : [])));
  const instances = new Map<string, InstanceReading>();
  const sentinels = new Map<string, SentinelReading>();
  if (password !== undefined) {
    const reads: Promise<void>[] = [];
    // Every instance pod, those beyond spec.replicas too (a scale-down's primary is failed over first).
    const instancePods = [...pods].filter(([, p]) => p.metadata.labels?.[LABELS.component] !== 'sentinel').map(([n]) => n);
    for (const instance of new Set([...instanceNames({ redis: name, spec }), ...instancePods])) {
      const ip = ips.get(instance);
      if (ip !== undefined) reads.push(deps.readers.instance(dial(instance, ip, REDIS_PORT, password)).then((r) => void instances.set(instance, r)));
    }
    for (const sentinel of sentinelNames({ redis: name, spec })) {
      const ip = ips.get(sentinel);
      if (ip !== undefined) reads.push(deps.readers.sentinel(dial(sentinel, ip, SENTINEL_PORT, password), name).then((r) => void sentinels.set(sentinel, r)));
    }
    await Promise.all(reads);
  }
  const existingServices = new Set(inNamespace(deps.services.store).map((s) => s.metadata.name ?? ''));
  const step = redis.status?.step;
  const ageMs = (since: string): number => Math.max(0, now.getTime() - Date.parse(since));
  const desired = { redisConf: redisConf(spec), sentinelConf: (primary: string) => sentinelConf(name, spec, podHost(name, namespace, primary)) };
  const planned = redis.status?.plannedFailover;
  const retryToken = redis.metadata.annotations?.[RETRY_ROLLOUT_ANNOTATION];
  const observed: Observed = {
    redis: name,
    namespace,
    spec,
    auth: password !== undefined ? 'ok' : spec.auth.secretName === undefined ? 'generate' : 'missing',
    config: configState(deps.configMaps.store.get(`${namespace}/${names.config(name)}`)),
    desired,
    services: existingServices,
    missingServices: services(rendering).map((s) => s.metadata.name).filter((s) => !existingServices.has(s)),
    claims: new Set(inNamespace(deps.claims.store).map((c) => c.metadata.name ?? '')),
    pods: new Map([...pods].map(([n, p]) => [n, podFacts(p, (node) => deps.cordonedNodes.store.get(node) !== undefined, now)])),
    instances,
    sentinels,
    ...(step ? { step: { name: step.name, ageMs: ageMs(step.startedAt) } } : {}),
    desiredHash: podHashes(rendering, { redisConf: desired.redisConf, sentinelConf: desired.sentinelConf('$primary') }),
    rollout: { ...(redis.status?.rollout ? { record: redis.status.rollout } : {}), ...(retryToken !== undefined ? { retryToken } : {}) },
    ...(planned ? { plannedFailover: { from: planned.from, ageMs: ageMs(planned.askedAt) } } : {}),
    ...(bootstrap.blocked !== undefined ? { bootstrapBlocked: bootstrap.blocked } : {}),
    ...(users.problem !== undefined ? { usersProblem: users.problem } : {}),
    ...(tls ? { tls: tlsFacts(tls, deps.caRotationOverlapMs ?? 0, now) } : {}),
  };
  return { observed, rendering, ips, ...(password !== undefined ? { password } : {}), ...(bootstrap.record ? { bootstrap: bootstrap.record } : {}), ...(tls ? { tls } : {}) };
}
