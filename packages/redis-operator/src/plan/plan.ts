// The planner: from what was observed, the one next step. Pure: no I/O, no clock but the step's age.
//
// One authority decides who is primary. With Sentinels, it is a majority of them: the operator never promotes,
// it follows (records the decision in the ConfigMap, moves the role label the `<name>` Service selects by, reports
// it). Without Sentinels, it is the operator, and only on a fact: the primary's pod is gone or failed.
import { instanceOfHost, names } from '../names.ts';
import { FAILOVER_ASK_MS, planChanges } from './changes.ts';
import { bestReplica, decidedPrimary, instanceNames, lost, reading, roleOf, sentinelNames, wait } from './facts.ts';
import { planCARotation, planReload } from './tls.ts';
import type { Action, Observed, PodFacts } from './types.ts';

export { bestReplica, decidedPrimary, instanceNames, sentinelDecision, sentinelNames } from './facts.ts';

/** How long a missing primary's pod waits for the Sentinels' failover before it is recreated as it was. */
export const FAILOVER_WAIT_MS = 120_000;
/** How often a Redis with nothing to do is looked at again (roles can change without any Kubernetes event). */
export const STEADY_RESYNC_MS = 2_000;

/** The Secret, the ConfigMap and the Services: what the pods need before they start. */
function planFoundation(o: Observed): Action | undefined {
  // A Redis that starts from a backup makes no pod before the backup is resolved (once, then recorded in status).
  if (o.bootstrapBlocked !== undefined && o.pods.size === 0) return wait('BootstrapBackupNotReady', o.bootstrapBlocked, 5000);
  if (o.auth === 'generate') return { type: 'create-secret' };
  if (o.auth === 'missing') return wait('AuthSecretMissing', `the Secret ${o.spec.auth.secretName ?? ''} with key ${o.spec.auth.key} (spec.auth) does not exist`, 10_000);
  // No pod is made while TLS cannot be served as asked (a Secret in the way, a user's missing, a lost CA); running
  // pods keep serving what they loaded, and roles keep following the authority (Degraded says what is wrong).
  const blocked = podsBlocked(o);
  if (blocked && o.pods.size === 0) return blocked;
  if (o.tls && o.tls.issue.length > 0) return { type: 'issue-tls', secrets: o.tls.issue };
  if (o.config === undefined) return { type: 'write-config', primary: names.instance(o.redis, 0), reason: 'Bootstrap' };
  const decided = decidedPrimary(o);
  if (decided !== undefined && decided !== o.config.primary) return { type: 'write-config', primary: decided, reason: 'PrimaryChanged' };
  if (o.config.redisConf !== o.desired.redisConf || o.config.sentinelConf !== o.desired.sentinelConf(o.config.primary)) {
    return { type: 'write-config', primary: o.config.primary, reason: 'ConfigChanged' };
  }
  if (o.missingServices.length > 0) return { type: 'create-services', names: o.missingServices };
  return undefined;
}

/**
 * The recorded primary's pod is gone. Recreated at once it would start as primary from its volume, and without
 * AOF that can be older than what its replicas acknowledged: so the authority moves the primary first.
 */
function planLostPrimary(o: Observed, primary: string): Action | undefined {
  // Nothing to fail over to (no replicas, or none has started yet, as when the Redis is new): recreate it.
  const replicas = instanceNames(o).filter((n) => n !== primary && roleOf(reading(o, n)) === 'replica');
  if (replicas.length === 0) return undefined;
  if (o.spec.sentinel.replicas === 0) {
    const best = bestReplica(o, primary);
    if (best !== undefined) return { type: 'promote', instance: best };
  }
  const waited = o.step?.name === 'WaitingForFailover' ? o.step.ageMs : 0;
  if (waited >= FAILOVER_WAIT_MS) return undefined; // no failover came: recreate it as it was (Degraded says so)
  const who = o.spec.sentinel.replicas > 0 ? 'the Sentinels to fail over' : 'a replica that answers, to promote';
  return wait('WaitingForFailover', `the primary ${primary}'s pod is gone; waiting for ${who} before recreating it`);
}

/** Why no pod may be made now: TLS that cannot be served, or a user's password Secret missing. */
function podsBlocked(o: Observed): Action | undefined {
  if (o.tls?.problem) return wait(o.tls.problem.reason, o.tls.problem.message, 10_000);
  if (o.usersProblem !== undefined) return wait('UserSecretMissing', o.usersProblem, 10_000);
  return undefined;
}

/** Claims, then pods: failed ones removed, missing ones created, the primary's only once the authority moved on. */
function planPods(o: Observed): Action | undefined {
  const primary = o.config!.primary;
  for (const instance of instanceNames(o)) {
    if (!o.claims.has(names.claim(instance))) return { type: 'create-claim', instance };
  }
  for (const pod of o.pods.values()) {
    if (!pod.deleting && (pod.phase === 'Failed' || pod.phase === 'Succeeded')) return { type: 'delete-pod', pod: pod.name, reason: `its phase is ${pod.phase}` };
  }
  for (const instance of instanceNames(o)) {
    const pod = o.pods.get(instance);
    if (pod?.deleting) return wait('PodTerminating', `${instance}'s pod is terminating`);
    if (pod !== undefined) continue;
    if (instance === primary) {
      const waiting = planLostPrimary(o, primary);
      if (waiting !== undefined) return waiting;
    }
    return podsBlocked(o) ?? { type: 'create-pod', pod: instance, component: 'redis' };
  }
  const primaryPod = o.pods.get(primary);
  for (const sentinel of sentinelNames(o)) {
    if (o.pods.has(sentinel)) continue;
    // A Sentinel resolves the primary's name as it starts: it must have an address by then.
    if (!primaryPod?.ready) return wait('WaitingForPrimary', `the primary ${primary} is not ready yet; Sentinels start once it is`);
    return podsBlocked(o) ?? { type: 'create-pod', pod: sentinel, component: 'sentinel' };
  }
  return undefined;
}

/**
 * The role labels follow the authority: the primary label comes off every other pod before it goes on the
 * decided one, so the `<name>` Service never selects two; a pod whose instance did not answer keeps its label.
 */
function planLabels(o: Observed): Action | undefined {
  // Without a majority's decision, the last recorded one stands: a minority of Sentinels changes nothing.
  const decided = decidedPrimary(o) ?? (o.spec.sentinel.replicas > 0 ? o.config?.primary : undefined);
  for (const pod of instancePods(o)) {
    if (pod.roleLabel === 'primary' && pod.name !== decided) return { type: 'label-role', pod: pod.name, role: roleOf(reading(o, pod.name)) === 'replica' ? 'replica' : null };
  }
  const primaryPod = instancePods(o).find((p) => p.name === decided);
  if (primaryPod !== undefined && roleOf(reading(o, primaryPod.name)) === 'primary' && primaryPod.roleLabel !== 'primary') return { type: 'label-role', pod: primaryPod.name, role: 'primary' };
  for (const pod of instancePods(o)) {
    if (pod.name !== decided && roleOf(reading(o, pod.name)) === 'replica' && pod.roleLabel !== 'replica') return { type: 'label-role', pod: pod.name, role: 'replica' };
  }
  return undefined;
}

/** Every instance pod not terminating, those beyond spec.replicas included (a scale-down's may still be primary). */
function instancePods(o: Observed): PodFacts[] {
  return [...o.pods.values()].filter((p) => p.component === 'redis' && !p.deleting).sort((a, b) => a.name.localeCompare(b.name));
}


/** Without Sentinels the operator points every other instance at the primary it decided. */
function planReplication(o: Observed): Action | undefined {
  if (o.spec.sentinel.replicas > 0) return undefined;
  const primary = decidedPrimary(o);
  if (primary === undefined) return undefined;
  // While FAILOVER TO swaps the roles, the new primary says so before the old one does: repointing it then
  // would undo the failover. The swap is left its time; then the old one's own word decides (decidedPrimary).
  if (o.plannedFailover?.from === primary && o.plannedFailover.ageMs < FAILOVER_ASK_MS) return undefined;
  for (const instance of instanceNames(o)) {
    const r = reading(o, instance);
    if (instance === primary || lost(o.pods.get(instance)) || !r?.ok) continue;
    if (r.role === 'master' || instanceOfHost(o.redis, r.primaryHost ?? '') !== primary) return { type: 'replicate', instance, primary };
  }
  return undefined;
}

export function plan(o: Observed): Action {
  const foundation = planFoundation(o);
  if (foundation !== undefined) return foundation;
  // A pod waited for must not hold the `<name>` Service back: an old primary's pod stuck terminating on a stopped
  // node waits for its kubelet (minutes), and the primary the authority decided must serve meanwhile.
  const pods = planPods(o);
  if (pods !== undefined && pods.type !== 'wait') return pods;
  return planLabels(o) ?? pods ?? planReplication(o) ?? planReload(o) ?? planChanges(o) ?? planCARotation(o) ?? { type: 'none' };
}
