// What the peers benchmarks (etcd's and Redis's) print when a step fails, and how they clear a namespace between
// runs: shared by packages/etcd-operator/bench/peers.bench.ts and packages/redis-operator/bench/redis-peers.bench.ts.
import { Namespaces, Pods, type Client, type KubeObject } from '@quorum/runtime';

type ContainerStatus = { name: string; ready?: boolean; restartCount?: number; state?: Record<string, { reason?: string; message?: string; exitCode?: number }> };
export type PodDetail = KubeObject & { spec?: { nodeName?: string }; status?: { phase?: string; initContainerStatuses?: ContainerStatus[]; containerStatuses?: ContainerStatus[] } };
type EventItem = { type?: string; reason?: string; message?: string; involvedObject?: { kind?: string; name?: string } };

/** What the namespace looked like when a step failed: each pod's containers and the last events. */
export async function describeNamespace(client: Client, ns: string, log: (line: string) => void): Promise<void> {
  try {
    for (const p of (await client.list(Pods, { namespace: ns })).items as PodDetail[]) {
      const states = [...(p.status?.initContainerStatuses ?? []).map((c) => ({ ...c, name: `init:${c.name}` })), ...(p.status?.containerStatuses ?? [])]
        .map((c) => `${c.name} ${Object.entries(c.state ?? {}).map(([k, v]) => `${k}${v.reason ? `(${v.reason}${v.exitCode !== undefined ? ` ${v.exitCode}` : ''})` : ''}`).join('')} ready=${c.ready ?? false} restarts=${c.restartCount ?? 0}`)
        .join('; ');
      log(`  pod ${p.metadata.name} on ${p.spec?.nodeName ?? '-'}: ${p.status?.phase ?? '?'}${p.metadata.deletionTimestamp ? ' (terminating)' : ''}: ${states}`);
    }
    const events = (await client.request<{ items: EventItem[] }>('GET', `/api/v1/namespaces/${ns}/events`)).items;
    for (const e of events.slice(-15)) log(`  event ${e.type ?? ''} ${e.reason ?? ''} ${e.involvedObject?.kind ?? ''}/${e.involvedObject?.name ?? ''}: ${e.message ?? ''}`);
  } catch (err) {
    log(`  (could not describe ${ns}: ${(err as Error).message})`);
  }
}

/** Deletes a namespace and waits until it is gone (at most `timeoutMs`), so that one run's teardown does not slow the next. */
export async function dropNamespace(client: Client, ns: string, timeoutMs: number, log: (line: string) => void): Promise<void> {
  await client.delete(Namespaces, ns).catch(() => undefined);
  const deadline = performance.now() + timeoutMs;
  while ((await client.find(Namespaces, ns)) !== undefined) {
    if (performance.now() > deadline) {
      log(`warning: namespace ${ns} still there after ${timeoutMs / 1000} s; going on`);
      return;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}
