// What the planner's parts read from an Observed: the names the spec asks for, the authority's decision, the
// evidence of a loss. Pure, like the planner.
import { instanceOfHost, names } from '../names.ts';
import type { Action, InstanceReading, Observed, PodFacts } from './types.ts';

export const SHORT_WAIT_MS = 2_000;

export function instanceNames(o: Pick<Observed, 'redis' | 'spec'>): string[] {
  return Array.from({ length: o.spec.replicas + 1 }, (_, i) => names.instance(o.redis, i));
}

export function sentinelNames(o: Pick<Observed, 'redis' | 'spec'>): string[] {
  return Array.from({ length: o.spec.sentinel.replicas }, (_, i) => names.sentinel(o.redis, i));
}

/** The ordinal at the end of a pod's name (`cache-2` → 2, `cache-sentinel-1` → 1). */
export function ordinalOf(pod: string): number {
  return Number(/-(\d+)$/.exec(pod)?.[1] ?? -1);
}

/** Highest ordinal first: the order pods are removed and rolled in. */
export const highestFirst = (a: string, b: string): number => ordinalOf(b) - ordinalOf(a);

/** The primary a majority of the configured Sentinels names, when there is one and it is one of ours. */
export function sentinelDecision(o: Observed): string | undefined {
  const votes = new Map<string, number>();
  for (const reading of o.sentinels.values()) {
    if (!reading.ok || reading.primaryHost === undefined) continue;
    const instance = instanceOfHost(o.redis, reading.primaryHost);
    if (instance !== undefined) votes.set(instance, (votes.get(instance) ?? 0) + 1);
  }
  const needed = Math.floor(o.spec.sentinel.replicas / 2) + 1;
  return [...votes].find(([, n]) => n >= needed)?.[0];
}

/** A pod that Kubernetes says is gone or will not run again: the only evidence of an instance's loss. */
export function lost(pod: PodFacts | undefined): boolean {
  return pod === undefined || pod.deleting || pod.phase === 'Failed' || pod.phase === 'Succeeded';
}

export function reading(o: Observed, instance: string): InstanceReading | undefined {
  return o.instances.get(instance);
}

export function roleOf(r: InstanceReading | undefined): 'primary' | 'replica' | undefined {
  if (!r?.ok) return undefined;
  return r.role === 'master' ? 'primary' : 'replica';
}

/** The replica that has the most of the primary's stream, among those that answered (and pass `among`). */
export function bestReplica(o: Observed, except: string, among: (instance: string) => boolean = () => true): string | undefined {
  let best: { name: string; offset: number } | undefined;
  for (const name of instanceNames(o)) {
    const r = reading(o, name);
    if (name === except || !among(name) || lost(o.pods.get(name)) || !r?.ok || r.role !== 'slave') continue;
    if (best === undefined || r.offset > best.offset) best = { name, offset: r.offset };
  }
  return best?.name;
}

/** Instances beyond spec.replicas whose pod exists or that the ConfigMap may name (any `<name>-<n>`). */
function isInstance(o: Observed, pod: string): boolean {
  return instanceOfHost(o.redis, pod) === pod;
}

/** Who is primary now, by the authority; undefined while it has not decided (no Sentinel majority yet). */
export function decidedPrimary(o: Observed): string | undefined {
  if (o.spec.sentinel.replicas > 0) return sentinelDecision(o);
  const recorded = o.config?.primary;
  const candidates = [...new Set([...instanceNames(o), ...[...o.pods.keys()].filter((p) => isInstance(o, p))])];
  const isMaster = (n: string): boolean => {
    const r = reading(o, n);
    return r?.ok === true && r.role === 'master';
  };
  if (recorded !== undefined && !lost(o.pods.get(recorded))) {
    // The operator's planned FAILOVER TO moved the primary: the old one says so itself, and the new one agrees.
    const r = reading(o, recorded);
    const moved = r?.ok && r.role === 'slave' ? instanceOfHost(o.redis, r.primaryHost ?? '') : undefined;
    if (moved !== undefined && moved !== recorded && !lost(o.pods.get(moved)) && isMaster(moved)) return moved;
    return recorded;
  }
  // The operator's own failover: adopt an instance it already promoted (a crash between promote and record).
  return candidates.find((n) => n !== recorded && !lost(o.pods.get(n)) && isMaster(n));
}

export function wait(reason: string, message: string, requeueAfterMs = SHORT_WAIT_MS): Action {
  return { type: 'wait', reason, message, requeueAfterMs };
}
