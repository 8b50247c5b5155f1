// act: the one step the planner chose, taken with the fewest writes. Creates are idempotent (AlreadyExists is
// success: a crash after the write), and every write is followed by afterWrite, the failpoint hook of tests.
import { randomBytes } from 'node:crypto';
import { AlreadyExistsError, ConfigMaps, NotFoundError, PersistentVolumeClaims, Pods, Secrets, Services, type KubeObject, type ResourceType } from '@quorum/runtime';
import { LABELS, REDIS_PORT, SENTINEL_PORT, names, objectLabels, ownerRef, podHost } from '../names.ts';
import { sentinelNames } from '../plan/facts.ts';
import type { Action } from '../plan/types.ts';
import { configMap, instanceClaim, instancePod, sentinelPod, services } from '../render/objects.ts';
import { FIELD_MANAGER, type ReconcilerDeps } from './deps.ts';
import { podEndpoint, type Seen } from './observe.ts';
import type { Endpoint } from '../redis/readings.ts';
import { DEFAULT_CLUSTER_DOMAIN, ROTATE_CA_ANNOTATION, ROTATE_CERTIFICATES_ANNOTATION, rotateCA, writeTLS } from '../tls/certificates.ts';

async function create<T extends KubeObject>(deps: ReconcilerDeps, type: ResourceType<T>, obj: T, signal: AbortSignal): Promise<void> {
  try {
    await deps.client.create(type, obj, { fieldManager: FIELD_MANAGER, signal });
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err; // AlreadyExists: made by an earlier attempt
  }
}

function endpoint(seen: Seen, pod: string, port = REDIS_PORT): Endpoint {
  const ip = seen.ips.get(pod);
  if (ip === undefined || seen.password === undefined) throw new Error(`${pod} has no address yet`);
  return podEndpoint(seen, pod, ip, port, seen.password);
}

/** A planned failover away from `from`: asked of the Sentinels, or without them Redis's FAILOVER TO `to`. */
async function failover(deps: ReconcilerDeps, seen: Seen, action: Extract<Action, { type: 'failover' }>): Promise<string> {
  const { name, namespace } = seen.rendering.redis;
  const primary = endpoint(seen, action.from);
  if (action.to !== undefined) {
    await deps.readers.failoverTo(primary, { host: podHost(name, namespace, action.to), port: REDIS_PORT });
    return `asked ${action.from} to hand over to ${action.to} (FAILOVER TO): ${action.reason}`;
  }
  const sentinels = sentinelNames(seen.observed).flatMap((s) => (seen.ips.has(s) ? [endpoint(seen, s, SENTINEL_PORT)] : []));
  await deps.readers.sentinelFailover(primary, sentinels, name);
  return `asked the Sentinels to fail over from ${action.from} (SENTINEL FAILOVER, writes paused until the replicas caught up): ${action.reason}`;
}

/** Takes `action`; returns what was done, for the Normal event (undefined when nothing was written). */
export async function act(deps: ReconcilerDeps, seen: Seen, action: Action, signal: AbortSignal): Promise<string | undefined> {
  const r = seen.rendering;
  const { name, namespace } = r.redis;
  const hashes = seen.observed.desiredHash;
  switch (action.type) {
    case 'create-secret': {
      const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: names.generatedSecret(name), namespace, labels: objectLabels(name), ownerReferences: [ownerRef(r.redis)] }, type: 'Opaque', stringData: { [r.auth.key]: randomBytes(24).toString('hex') } };
      await create(deps, Secrets, secret, signal);
      return `generated the password Secret ${secret.metadata.name}`;
    }
    case 'issue-tls': {
      const podsExist = [...seen.observed.pods.values()].some((p) => p.component === 'redis');
      const tokens = { certificates: deps.redises.store.get(`${namespace}/${name}`)?.metadata.annotations?.[ROTATE_CERTIFICATES_ANNOTATION] };
      const written = await writeTLS({ client: deps.client, redis: r.redis, podsExist, clusterDomain: deps.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN, now: deps.now?.() ?? new Date(), fieldManager: FIELD_MANAGER, signal, tokens });
      return `issued ${written.map((w) => `${w.name} (${w.reason})`).join(', ')}`;
    }
    case 'rotate-ca': {
      const token = deps.redises.store.get(`${namespace}/${name}`)?.metadata.annotations?.[ROTATE_CA_ANNOTATION];
      const written = await rotateCA({ client: deps.client, redis: r.redis, step: action.step, token, now: deps.now?.() ?? new Date(), fieldManager: FIELD_MANAGER, signal });
      return written ? `CA rotation, ${action.step}: ${action.detail}` : undefined;
    }
    case 'write-config': {
      const files = { redisConf: seen.observed.desired.redisConf, sentinelConf: seen.observed.desired.sentinelConf(action.primary) };
      await deps.client.apply(ConfigMaps, configMap(r, files, action.primary), { fieldManager: FIELD_MANAGER, force: true, signal });
      return action.reason === 'PrimaryChanged' ? `recorded ${action.primary} as primary, as decided by ${r.spec.sentinel.replicas > 0 ? 'the Sentinels' : 'the operator'}` : `wrote the configuration (${action.reason})`;
    }
    case 'create-services':
      for (const service of services(r).filter((s) => action.names.includes(s.metadata.name))) await create(deps, Services, service as KubeObject, signal);
      return `created the Services ${action.names.join(', ')}`;
    case 'create-claim':
      await create(deps, PersistentVolumeClaims, instanceClaim(r, action.instance) as KubeObject, signal);
      return `created the claim ${names.claim(action.instance)}`;
    case 'create-pod': {
      const pod = action.component === 'redis' ? instancePod(r, action.pod, hashes.redis) : sentinelPod(r, action.pod, hashes.sentinel);
      await create(deps, Pods, pod as KubeObject, signal);
      return `created the pod ${action.pod}`;
    }
    case 'delete-pod':
      await deps.client.delete(Pods, { namespace, name: action.pod }, { signal }).catch((err: unknown) => {
        if (!(err instanceof NotFoundError)) throw err; // gone already: what the step wanted
      });
      return `deleted the pod ${action.pod}: ${action.reason}`;
    case 'label-role':
      await deps.client.mergePatch(Pods, { namespace, name: action.pod }, { metadata: { labels: { [LABELS.role]: action.role } } }, { fieldManager: FIELD_MANAGER, signal });
      return action.role === null ? `removed the role label of ${action.pod}` : `labelled ${action.pod} ${action.role}`;
    case 'promote':
      await deps.readers.replicaOf(endpoint(seen, action.instance));
      return `promoted ${action.instance} (REPLICAOF NO ONE): the primary's pod is gone`;
    case 'replicate':
      await deps.readers.replicaOf(endpoint(seen, action.instance), { host: podHost(name, namespace, action.primary), port: REDIS_PORT });
      return `pointed ${action.instance} at ${action.primary}`;
    case 'delete-claim':
      await deps.client.delete(PersistentVolumeClaims, { namespace, name: names.claim(action.instance) }, { signal }).catch((err: unknown) => {
        if (!(err instanceof NotFoundError)) throw err;
      });
      return `deleted the claim ${names.claim(action.instance)} (${action.reason})`;
    case 'failover':
      return failover(deps, seen, action);
    case 'reset-sentinel':
      await deps.readers.resetSentinel(endpoint(seen, action.sentinel, SENTINEL_PORT), name);
      return `reset ${action.sentinel} (SENTINEL RESET) so that it forgets ${action.forget.join(', ')}`;
    case 'reload-tls': {
      await deps.readers.reloadTLS(endpoint(seen, action.instance));
      // The files in the pod are the kubelet's copy of the Secret, refreshed on its own period: until then the
      // reload loads the old certificate, and the step is retried (bounded and voiced like any other).
      const after = await deps.readers.instance(endpoint(seen, action.instance));
      if (!after.ok || after.certificate !== seen.tls?.fingerprint256) throw new Error(`${action.instance} still serves its previous certificate after CONFIG SET: the kubelet has not refreshed ${seen.tls?.secretName ?? 'the Secret'} in the pod yet`);
      return `${action.instance} serves the renewed TLS certificate (CONFIG SET tls-cert-file, no restart)`;
    }
    case 'halt-rollout':
      return `rolling update halted at ${action.instance} (${action.reason}): ${action.message}`;
    case 'wait':
    case 'none':
      return undefined;
  }
}
