// Changes to a running Redis, planned once it is settled: scale-down (replicas and Sentinels removed highest
// ordinal first, the primary only after a planned failover, the Sentinels made to forget what was removed, the
// claims per reclaimPolicy) and rolling updates (replicas first, each synced before the next, then a planned
// failover to an updated replica, then the old primary, then the Sentinels; halted at a pod that fails to come
// back), and node drains (the primary moved off a cordoned node before the drain's eviction reaches it). Every step is derived from what is observed (pod hashes, roles, the Sentinels' memory) plus the status
// records written before the step, so an operator restarted anywhere resumes where it was.
import { instanceOfHost, names } from '../names.ts';
import { bestReplica, decidedPrimary, highestFirst, instanceNames, reading, sentinelNames, wait } from './facts.ts';
import type { Action, Observed, PodFacts } from './types.ts';

/** How long a pod made by a rollout may take to be Ready and synced before the rollout halts on it. */
export const ROLLOUT_GATE_MS = 180_000;
/** How long a planned failover is waited for before it is asked for again. */
export const FAILOVER_ASK_MS = 15_000;
/** How long a planned failover may take, asks included, before a rollout halts on it. */
export const FAILOVER_BOUND_MS = 90_000;

export function planChanges(o: Observed): Action | undefined {
  return planDrain(o) ?? planScaleDown(o) ?? planForget(o) ?? planRollout(o) ?? planSpread(o) ?? drainBlocked(o);
}

/** The primary as the authority has it, or as last recorded while it has not decided. */
function currentPrimary(o: Observed): string | undefined {
  return decidedPrimary(o) ?? o.config?.primary;
}

/** Instance pods (not terminating) beyond spec.replicas, highest ordinal first. */
export function extraInstances(o: Observed): string[] {
  const wanted = new Set(instanceNames(o));
  return [...o.pods.values()].filter((p) => p.component === 'redis' && !p.deleting && !wanted.has(p.name)).map((p) => p.name).sort(highestFirst);
}

function extraSentinels(o: Observed): string[] {
  const wanted = new Set(sentinelNames(o));
  return [...o.pods.values()].filter((p) => p.component === 'sentinel' && !p.deleting && !wanted.has(p.name)).map((p) => p.name).sort(highestFirst);
}

/** Why instance `name` does not serve now (not Ready, silent, a replica not synced), or undefined when it does. */
function notServing(o: Observed, name: string): string | undefined {
  const pod = o.pods.get(name);
  if (pod === undefined || pod.deleting) return 'its pod is being recreated';
  if (pod.crashLooping !== undefined) return `it keeps exiting: ${pod.crashLooping}`;
  const r = reading(o, name);
  if (!r?.ok) return `it does not answer${r ? `: ${r.error}` : ''}`;
  if (r.role === 'slave' && !r.linkUp) return 'its link to the primary is down (syncing)';
  if (!pod.ready) return 'its pod is not Ready yet';
  return undefined;
}

/** Why Sentinel `name` does not serve now, or undefined once it is Ready, names the primary and knows the others. */
function sentinelNotServing(o: Observed, name: string, primary: string | undefined): string | undefined {
  const pod = o.pods.get(name);
  if (pod === undefined || pod.deleting) return 'its pod is being recreated';
  if (pod.crashLooping !== undefined) return `it keeps exiting: ${pod.crashLooping}`;
  const r = o.sentinels.get(name);
  if (!r?.ok) return `it does not answer${r ? `: ${r.error}` : ''}`;
  if (primary !== undefined && instanceOfHost(o.redis, r.primaryHost ?? '') !== primary) return `it does not name ${primary} as primary yet`;
  const others = sentinelNames(o).length - 1;
  if (r.knownSentinels !== undefined && r.knownSentinels.length < others) return `it knows ${r.knownSentinels.length} of the ${others} other Sentinels yet`;
  if (!pod.ready) return 'its pod is not Ready yet';
  return undefined;
}

/** Nothing is removed or rolled unless every instance and Sentinel the spec asks for serves. */
export function unsettled(o: Observed, doing: string): Action | undefined {
  if (o.spec.sentinel.replicas > 0 && decidedPrimary(o) === undefined) return wait('WaitingForSentinels', `${doing} waits for a majority of Sentinels to name the primary`);
  const primary = currentPrimary(o);
  for (const name of instanceNames(o)) {
    const why = notServing(o, name);
    if (why !== undefined) return wait('WaitingForInstances', `${doing} waits for ${name}: ${why}`);
  }
  for (const name of sentinelNames(o)) {
    const why = sentinelNotServing(o, name, primary);
    if (why !== undefined) return wait('WaitingForSentinels', `${doing} waits for ${name}: ${why}`);
  }
  return undefined;
}

/**
 * Moving the primary away from `from` (a rollout or a scale-down): asked for, then waited for, and asked again
 * every FAILOVER_ASK_MS; the step's age (one step name for both) bounds it. Without Sentinels, the operator's
 * FAILOVER TO names the replica with the most data among `among`.
 */
function plannedFailover(o: Observed, from: string, why: string, among: (instance: string) => boolean): Action {
  const asked = o.plannedFailover?.from === from ? o.plannedFailover.ageMs : undefined;
  if (asked !== undefined && asked < FAILOVER_ASK_MS) {
    const who = o.spec.sentinel.replicas > 0 ? 'the Sentinels' : 'the primary (FAILOVER TO)';
    return wait('PlannedFailover', `${why}: waiting for ${who} to move the primary away from ${from}`, 1000);
  }
  if (o.spec.sentinel.replicas > 0) {
    // Asked before a Sentinel sees a new replica as good, SENTINEL FAILOVER is refused (NOGOODSLAVE): its INFO
    // of a replica is up to 10 s old.
    const good = [...o.sentinels.values()].some((s) => s.ok && (s.goodReplicas === undefined || s.goodReplicas.some(among)));
    if (!good) return wait('PlannedFailover', `${why}: waiting for the Sentinels to see a replica they would promote (their view of a replica is refreshed every 10 s)`, 1000);
    return { type: 'failover', from, reason: why };
  }
  const to = bestReplica(o, from, among);
  if (to === undefined) return wait('PlannedFailover', `${why}: no replica of ${from} answers to take over`);
  return { type: 'failover', from, to, reason: why };
}

/**
 * Scale-down: extra replicas go highest ordinal first; an extra that is primary goes last, after a planned
 * failover to a replica the spec keeps; then extra Sentinels; then, with reclaimPolicy Delete, the claims.
 */
function planScaleDown(o: Observed): Action | undefined {
  const terminating = [...o.pods.values()].find((p) => p.deleting && !instanceNames(o).includes(p.name) && !sentinelNames(o).includes(p.name));
  if (terminating !== undefined) return wait('ScalingDown', `${terminating.name} (beyond the spec) is terminating`);
  const extras = extraInstances(o);
  const sentinels = extraSentinels(o);
  if (extras.length > 0 || sentinels.length > 0) {
    const gate = unsettled(o, 'scaling down');
    if (gate !== undefined) return gate;
  }
  if (extras.length > 0) {
    const primary = currentPrimary(o);
    const victim = extras.find((e) => e !== primary);
    if (victim !== undefined) return { type: 'delete-pod', pod: victim, reason: `scale-down: beyond spec.replicas (${o.spec.replicas})` };
    const wanted = new Set(instanceNames(o));
    return plannedFailover(o, primary!, `scale-down: the primary ${primary} is beyond spec.replicas (${o.spec.replicas})`, (i) => wanted.has(i));
  }
  if (sentinels.length > 0) return { type: 'delete-pod', pod: sentinels[0]!, reason: `scale-down: beyond spec.sentinel.replicas (${o.spec.sentinel.replicas})` };
  if (o.spec.storage.reclaimPolicy === 'Delete') {
    const wanted = new Set(instanceNames(o).map(names.claim));
    const stale = [...o.claims].filter((c) => !wanted.has(c) && !o.pods.has(c.replace(/^data-/, ''))).sort((a, b) => highestFirst(a, b))[0];
    if (stale !== undefined) return { type: 'delete-claim', instance: stale.replace(/^data-/, ''), reason: 'scale-down with reclaimPolicy Delete' };
  }
  return undefined;
}

/** What Sentinel `name` remembers that is gone: replicas and Sentinels beyond the spec whose pods are gone. */
function forgotten(o: Observed, name: string): string[] {
  const r = o.sentinels.get(name);
  if (!r?.ok) return [];
  const gone = (pod: string, wanted: string[]): boolean => !wanted.includes(pod) && !o.pods.has(pod);
  return [...(r.knownReplicas ?? []).filter((p) => gone(p, instanceNames(o))), ...(r.knownSentinels ?? []).filter((p) => gone(p, sentinelNames(o)))];
}

/**
 * Sentinels never forget a replica or a Sentinel by themselves, and remembered Sentinels raise the majority a
 * failover needs: each Sentinel that remembers a removed pod gets SENTINEL RESET, one at a time, the next only
 * once every Sentinel knows the others and the replicas again.
 */
function planForget(o: Observed): Action | undefined {
  if (o.spec.sentinel.replicas === 0) return undefined;
  const stale = sentinelNames(o).filter((s) => forgotten(o, s).length > 0);
  if (stale.length === 0) return undefined;
  const gate = unsettled(o, 'resetting the Sentinels');
  if (gate !== undefined) return gate;
  const replicas = instanceNames(o).length - 1;
  for (const s of sentinelNames(o)) {
    const r = o.sentinels.get(s);
    const known = r?.ok ? (r.knownReplicas ?? []).filter((p) => instanceNames(o).includes(p)).length : 0;
    if (known < replicas) return wait('SentinelsRediscovering', `${s} knows ${known} of the ${replicas} replicas yet (after SENTINEL RESET); the next Sentinel is reset once it knows them`);
  }
  return { type: 'reset-sentinel', sentinel: stale[0]!, forget: forgotten(o, stale[0]!) };
}

/** The rollout's target: what every pod should carry, instances and Sentinels together. */
export function rolloutTarget(o: Observed): string {
  return `${o.desiredHash.redis}.${o.desiredHash.sentinel}`;
}

/** Pods the spec asks for that exist and were made from another spec. */
export function outdatedPods(o: Observed): { instances: string[]; sentinels: string[] } {
  const outdated = (names: string[], hash: string): string[] => names.filter((n) => {
    const p = o.pods.get(n);
    return p !== undefined && !p.deleting && p.hash !== hash;
  });
  return { instances: outdated(instanceNames(o), o.desiredHash.redis).sort(highestFirst), sentinels: outdated(sentinelNames(o), o.desiredHash.sentinel).sort(highestFirst) };
}

/** The halted record that still holds: same target, no retry asked for since. */
export function haltedRollout(o: Observed): NonNullable<Observed['rollout']['record']>['halted'] {
  const record = o.rollout.record;
  if (record?.halted === undefined || record.target !== rolloutTarget(o) || o.rollout.retryToken !== record.retryToken) return undefined;
  return record.halted;
}

function halt(o: Observed, instance: string, reason: 'CrashLooping' | 'GateTimeout' | 'FailoverNotDone', message: string): Action {
  return { type: 'halt-rollout', instance, reason, message };
}

/** The gate on pods already on the new spec: each must serve before another goes; a crash loop or the bound halts. */
function gateStep(o: Observed, primary: string | undefined): Action | undefined {
  const updated = (names: string[], hash: string): PodFacts[] => names.flatMap((n) => (o.pods.get(n)?.hash === hash ? [o.pods.get(n)!] : []));
  const pods = [...updated(instanceNames(o), o.desiredHash.redis).map((p) => ({ p, why: notServing(o, p.name) })), ...updated(sentinelNames(o), o.desiredHash.sentinel).map((p) => ({ p, why: sentinelNotServing(o, p.name, primary) }))];
  for (const { p, why } of pods) {
    if (why === undefined) continue;
    if (p.crashLooping !== undefined) return halt(o, p.name, 'CrashLooping', `${p.name} keeps exiting on the new spec: ${p.crashLooping}`);
    const waited = o.step?.name === 'RolloutGate' ? o.step.ageMs : 0;
    if (waited >= ROLLOUT_GATE_MS) return halt(o, p.name, 'GateTimeout', `${p.name} did not come back within ${ROLLOUT_GATE_MS / 1000} s of its update: ${why}`);
    return wait('RolloutGate', `rolling update: waiting for ${p.name}, on the new spec: ${why}`);
  }
  return undefined;
}

/**
 * Rolling updates of whatever shapes the pods (config, engine, version, image, resources): replicas first,
 * highest ordinal first (one that serves nobody before any other), each gated; then a planned failover to an
 * updated replica and the old primary; then the Sentinels, one at a time. Never while the Redis is unsettled,
 * never past a halt.
 */
function planRollout(o: Observed): Action | undefined {
  const halted = haltedRollout(o);
  const { instances, sentinels } = outdatedPods(o);
  if (halted !== undefined) {
    return wait('RolloutHalted', `rolling update halted at ${halted.instance} (${halted.reason}): ${halted.message}. Nothing more is rolled; revert the change, or fix the cause and set the annotation redis.quorum.dev/retry-rollout to a new value`, 30_000);
  }
  if (instances.length === 0 && sentinels.length === 0) return undefined;
  const primary = currentPrimary(o);
  const gate = gateStep(o, primary);
  if (gate !== undefined) return gate;
  const heading = `rolling update (${instances.length} instance${instances.length === 1 ? '' : 's'} and ${sentinels.length} Sentinel${sentinels.length === 1 ? '' : 's'} left)`;
  const outdatedReplicas = instances.filter((n) => n !== primary);
  // A replica that serves nobody costs nothing to update, and would otherwise hold the rollout back forever.
  const broken = outdatedReplicas.find((n) => notServing(o, n) !== undefined);
  if (broken !== undefined) return { type: 'delete-pod', pod: broken, reason: `${heading}: updating ${broken}, which serves nobody now` };
  const unready = unsettled(o, heading);
  if (unready !== undefined) return unready;
  if (outdatedReplicas.length > 0) return { type: 'delete-pod', pod: outdatedReplicas[0]!, reason: `${heading}: updating the replica ${outdatedReplicas[0]!}` };
  if (primary !== undefined && instances.includes(primary)) {
    if (instanceNames(o).length === 1) return { type: 'delete-pod', pod: primary, reason: `${heading}: restarting the primary ${primary}, which has no replica to fail over to` };
    if (o.step?.name === 'PlannedFailover' && o.step.ageMs >= FAILOVER_BOUND_MS) return halt(o, primary, 'FailoverNotDone', `the primary did not move away from ${primary} within ${FAILOVER_BOUND_MS / 1000} s of asking`);
    const updated = (i: string): boolean => !instances.includes(i);
    return plannedFailover(o, primary, `${heading}: every replica is updated; the old primary ${primary} goes last`, updated);
  }
  if (sentinels.length > 0) return { type: 'delete-pod', pod: sentinels[0]!, reason: `${heading}: updating the Sentinel ${sentinels[0]!}` };
  return undefined;
}

/** The primary's pod, when its node is cordoned and there is a replica its PodDisruptionBudget holds it for. */
function primaryOnCordonedNode(o: Observed): { primary: string; node: string } | undefined {
  if (o.spec.replicas === 0) return undefined; // a lone instance keeps no budget: the drain restarts it
  const primary = decidedPrimary(o);
  const pod = primary === undefined ? undefined : o.pods.get(primary);
  if (primary === undefined || pod === undefined || pod.deleting || pod.nodeCordoned !== true) return undefined;
  return { primary, node: pod.node ?? 'its node' };
}

/** The replicas that can take the primary over from a drained node: serving, on a node that is not cordoned. */
function drainTakers(o: Observed, primary: string): string[] {
  return instanceNames(o).filter((n) => n !== primary && o.pods.get(n)?.nodeCordoned !== true && notServing(o, n) === undefined);
}

/**
 * A node drain (kubectl drain cordons, then evicts): the primary's PodDisruptionBudget refuses its eviction, so the
 * operator moves the primary to a serving replica on another node first (Sentinel FAILOVER, or FAILOVER TO without
 * Sentinels), and the old primary, a replica then, goes under the replicas' budget. Other changes wait for it: a
 * drain is the one change with someone else waiting. Sentinel picks the replica itself; should it pick one on the
 * cordoned node, this asks again, and that replica is evicted meanwhile.
 */
function planDrain(o: Observed): Action | undefined {
  const cordoned = primaryOnCordonedNode(o);
  if (cordoned === undefined) return undefined;
  const takers = drainTakers(o, cordoned.primary);
  if (takers.length === 0) return undefined; // drainBlocked says why, once nothing else is to be done
  return plannedFailover(o, cordoned.primary, `node drain: the primary ${cordoned.primary}'s node ${cordoned.node} is cordoned`, (i) => takers.includes(i));
}

/** A cordoned primary node with no replica to take over: the drain waits on the primary's budget; said, not hidden. */
function drainBlocked(o: Observed): Action | undefined {
  const cordoned = primaryOnCordonedNode(o);
  if (cordoned === undefined) return undefined;
  return wait('DrainBlocked', `the primary ${cordoned.primary}'s node ${cordoned.node} is cordoned, and no replica on another node serves to take over: its PodDisruptionBudget holds a drain of that node until one does (or the node is uncordoned)`, 10_000);
}

/** How long a Sentinel stays where the scheduler put it before it is moved to spread them (no loop faster than this). */
export const SPREAD_AFTER_MS = 300_000;

/**
 * Sentinels that share a node, as a drain leaves them (one evicted is made again elsewhere, with no volume to bring
 * it back): losing that node would take the majority, and failovers, with it. Once the Redis is settled, one of
 * them, there for SPREAD_AFTER_MS, is made again, when a node that runs one of this Redis's instances (so it
 * exists and takes its pods) and is not cordoned has no Sentinel: the pods' anti-affinity places it there.
 */
function planSpread(o: Observed): Action | undefined {
  const sentinels = sentinelNames(o).map((n) => o.pods.get(n)).filter((p): p is PodFacts => p !== undefined && !p.deleting && p.node !== undefined);
  const taken = new Set(sentinels.map((p) => p.node!));
  const free = instanceNames(o).map((n) => o.pods.get(n)).find((p) => p?.node !== undefined && p.nodeCordoned !== true && !taken.has(p.node));
  if (free === undefined) return undefined;
  const crowded = sentinels.sort((a, b) => highestFirst(a.name, b.name)).find((p) => (p.ageMs ?? 0) >= SPREAD_AFTER_MS && sentinels.some((q) => q !== p && q.node === p.node));
  if (crowded === undefined || unsettled(o, 'spreading the Sentinels') !== undefined) return undefined;
  const other = sentinels.find((q) => q !== crowded && q.node === crowded.node)!;
  return { type: 'delete-pod', pod: crowded.name, reason: `spreading the Sentinels: ${crowded.name} shares the node ${crowded.node!} with ${other.name}, and ${free.node!} (running ${free.name}) has none` };
}
