// What the Redis operator's integration files share: a localkube with the Redis image and CRD, a namespace, the
// operator running in this process, and readers of a Redis's status, password and addresses.
import { CustomResourceDefinitions, Pods, Secrets, Services, type Manager } from '@quorum/runtime';
import { eventually, TestEnv } from '@quorum/localkube/testing';
import { redisBackupCRD, redisBackupScheduleCRD, redisCRD } from '../../src/api/crd.ts';
import { buildOperatorImage } from '../../src/deploy/image.ts';
import type { RedisSpec, RedisStatus } from '../../src/api/redis.ts';
import { buildRedisImage } from '../../src/image/redis.ts';
import { createRedisOperator } from '../../src/operator/operator.ts';
import { Redises } from '../../src/resources.ts';

export interface RedisTestEnv {
  env: TestEnv;
  ns: string;
  /** Stops the in-process operator (and waits for it). */
  stopOperator(): Promise<void>;
  /** What the in-process operator's /metrics would serve now (Prometheus text). */
  metrics(): Promise<string>;
  /** The operator's image as loaded into the nodes (with `agentImage`): an install from the manifests runs it. */
  operatorImage?: string;
}

export interface RedisEnvOptions {
  /** Build the operator's own image and load it: backup Jobs and restore init containers run it (the agent). */
  agentImage?: boolean;
}

export async function startRedisEnv(options: RedisEnvOptions = {}): Promise<RedisTestEnv> {
  const env = await TestEnv.start();
  const [image, agent] = await Promise.all([buildRedisImage(), options.agentImage ? buildOperatorImage() : undefined]);
  await env.kube.loadImage(image.archive);
  if (agent) await env.kube.loadImage(agent.archive);
  for (const crd of [redisCRD(), redisBackupCRD(), redisBackupScheduleCRD()]) {
    await env.client.apply(CustomResourceDefinitions, crd, { fieldManager: 'redis-test', force: true });
    await eventually(`the ${crd.spec.names.kind} CRD established`, async () => {
      const got = (await env.client.get(CustomResourceDefinitions, crd.metadata.name)) as { status?: { conditions?: { type: string; status: string }[] } };
      return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    }, { timeoutMs: 30_000 });
  }
  const ns = await env.namespace('redis');
  const operator: Manager = await createRedisOperator({ manager: { client: env.client, namespace: ns }, ...(agent ? { agentImage: agent.name } : {}) });
  const stop = new AbortController();
  const running = operator.start(stop.signal);
  return {
    env,
    ns,
    ...(agent ? { operatorImage: agent.name } : {}),
    stopOperator: async () => {
      stop.abort();
      await running.catch(() => undefined);
    },
    metrics: () => operator.metrics.registry.metrics(),
  };
}

export function redisReaders(t: Pick<RedisTestEnv, 'env' | 'ns'>, name: string) {
  const { env, ns } = t;
  // Every Redis of these files has TLS (the default): clients verify it with ca.crt of `<name>-tls`.
  const ca = async (): Promise<string> => {
    const secret = await env.client.get(Secrets, { namespace: ns, name: `${name}-tls` });
    return Buffer.from(secret.data?.['ca.crt'] ?? '', 'base64').toString('utf8');
  };
  return {
    /** TLS options for a client of the Service `service` (dialled by its ClusterIP, verified by its name). */
    serviceTLS: async (service: string): Promise<{ ca: string; servername: string }> => ({ ca: await ca(), servername: `${service}.${ns}.svc` }),
    /** TLS options for a client of one pod (dialled by its IP, verified by its stable name). */
    podTLS: async (pod: string): Promise<{ ca: string; servername: string }> => ({ ca: await ca(), servername: `${pod}.${name}-headless.${ns}.svc` }),
    create: (spec: Partial<RedisSpec> | Record<string, unknown>): Promise<unknown> => env.client.create(Redises, { apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'Redis', metadata: { name, namespace: ns }, spec }),
    /** Patches the spec; returns the generation the operator must have observed before its status describes it. */
    patchSpec: async (spec: Record<string, unknown>): Promise<number> => (await env.client.mergePatch(Redises, { namespace: ns, name }, { spec })).metadata.generation ?? 0,
    status: async (): Promise<RedisStatus | undefined> => (await env.client.get(Redises, { namespace: ns, name })).status,
    password: async (): Promise<string> => {
      const secret = await env.client.get(Secrets, { namespace: ns, name: `${name}-auth` });
      return Buffer.from(secret.data?.['password'] ?? '', 'base64').toString('utf8');
    },
    serviceIP: async (service: string): Promise<string> => ((await env.client.get(Services, { namespace: ns, name: service })) as unknown as { spec: { clusterIP: string } }).spec.clusterIP,
    podIP: async (pod: string): Promise<string> => ((await env.client.get(Pods, { namespace: ns, name: pod })) as unknown as { status: { podIP: string } }).status.podIP,
  };
}

export const available = (s: RedisStatus | undefined): boolean => s?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') ?? false;

/** Running (nothing to roll or remove), Available, every instance and Sentinel ready (none: no Sentinel status), every replica linked, from `generation` on. */
export const settled = (s: RedisStatus | undefined, instances: number, generation = 0, sentinels = 3): boolean =>
  available(s) && s?.phase === 'Running' && (s.observedGeneration ?? 0) >= generation && s.readyReplicas === instances && s.replicas === instances && (sentinels === 0 ? s.sentinel === undefined : s.sentinel?.agreeing === sentinels) && s.rollout === undefined && (s.instances?.every((i) => i.linkStatus !== 'down') ?? false);
