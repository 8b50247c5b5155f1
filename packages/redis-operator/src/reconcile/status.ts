// The status a reconcile writes, built from what it observed and the step it chose: pure, so that unit tests
// can read it. Available means a primary accepts writes through the `<name>` Service.
import { setCondition, type Condition } from '@quorum/runtime';
import { progressMessage, stepAgeMs, type StepRecord } from '@quorum/kit';
import type { InstanceStatus, Phase, PlannedFailover, RedisStatus, RolloutStatus } from '../api/redis.ts';
import { extraInstances, haltedRollout, outdatedPods, rolloutTarget } from '../plan/changes.ts';
import { decidedPrimary, instanceNames, sentinelDecision, sentinelNames } from '../plan/plan.ts';
import type { Action, InstanceReading, Observed } from '../plan/types.ts';
import { sentinelQuorum } from '../render/config.ts';
import { instanceOfHost } from '../names.ts';

function describe(action: Action): string {
  switch (action.type) {
    case 'wait':
      return action.message;
    case 'none':
      return 'nothing to do';
    case 'write-config':
      return action.reason === 'PrimaryChanged' ? `recording ${action.primary} as primary` : `writing the configuration (${action.reason})`;
    case 'create-pod':
      return `creating the pod ${action.pod}`;
    case 'delete-pod':
      return `deleting the pod ${action.pod} (${action.reason})`;
    case 'label-role':
      return `labelling ${action.pod} ${action.role ?? 'without a role'}`;
    case 'create-claim':
      return `creating the claim of ${action.instance}`;
    case 'create-services':
      return `creating the Services ${action.names.join(', ')}`;
    case 'create-secret':
      return 'generating the password Secret';
    case 'reload-tls':
      return `having ${action.instance} load its renewed TLS certificate`;
    case 'rotate-ca':
      return action.detail;
    case 'issue-tls':
      return `issuing ${action.secrets.map((x) => `${x.name} (${x.reason})`).join(', ')}`;
    case 'promote':
      return `promoting ${action.instance}`;
    case 'replicate':
      return `pointing ${action.instance} at ${action.primary}`;
    case 'delete-claim':
      return `deleting the claim of ${action.instance} (${action.reason})`;
    case 'failover':
      return `asking for a failover away from ${action.from}${action.to ? ` to ${action.to}` : ''} (${action.reason})`;
    case 'reset-sentinel':
      return `resetting ${action.sentinel} so that it forgets ${action.forget.join(', ')}`;
    case 'halt-rollout':
      return `halting the rolling update at ${action.instance} (${action.reason}): ${action.message}`;
  }
}

function reason(action: Action): string {
  if (action.type === 'wait') return action.reason;
  if (action.type === 'rotate-ca') return 'CARotation';
  return action.type.replace(/(^|-)([a-z])/g, (_, __, c: string) => c.toUpperCase());
}

function instanceStatus(o: Observed, name: string, primaryOffset: number | undefined): InstanceStatus {
  const r: InstanceReading | undefined = o.instances.get(name);
  const pod = o.pods.get(name);
  // A pod being deleted still reports Ready until its container stops; it serves nobody for long.
  const base = { name, ready: (pod?.ready ?? false) && !pod!.deleting };
  if (!r?.ok) return { ...base, role: 'unknown' };
  return {
    ...base,
    role: r.role === 'master' ? 'primary' : 'replica',
    offset: r.offset,
    ...(r.role === 'slave' ? { linkStatus: r.linkUp ? 'up' : 'down', ...(primaryOffset !== undefined ? { lagBytes: Math.max(0, primaryOffset - r.offset) } : {}) } : {}),
    version: r.version,
  };
}

/** The primary clients reach: the decided one, answering as primary, labelled for the `<name>` Service, ready. */
export function servingPrimary(o: Observed): string | undefined {
  const decided = decidedPrimary(o) ?? o.config?.primary;
  if (decided === undefined) return undefined;
  const r = o.instances.get(decided);
  const pod = o.pods.get(decided);
  return r?.ok && r.role === 'master' && pod?.roleLabel === 'primary' && pod.ready && !pod.deleting ? decided : undefined;
}

export interface StatusInput {
  observed: Observed;
  action: Action;
  step: StepRecord | undefined;
  generation: number | undefined;
  previous: RedisStatus | undefined;
  now: Date;
  stepDeadlineMs: number;
}

export function buildStatus(input: StatusInput): RedisStatus {
  const { observed: o, action, step, now } = input;
  const primary = servingPrimary(o);
  const primaryReading = primary === undefined ? undefined : o.instances.get(primary);
  const primaryOffset = primaryReading?.ok ? primaryReading.offset : undefined;
  const instances = instanceNames(o).filter((n) => o.pods.has(n)).map((n) => instanceStatus(o, n, primaryOffset));
  const readyReplicas = instances.filter((i) => i.ready).length;
  const sentinelsReady = sentinelNames(o).filter((n) => o.pods.get(n)?.ready && !o.pods.get(n)!.deleting).length;
  const stalled = action.type !== 'none' && stepAgeMs(step, now) >= input.stepDeadlineMs;
  const rollout = rolloutRecord(input);
  const problems = [
    ...(rollout?.halted ? [`rolling update halted at ${rollout.halted.instance} (${rollout.halted.reason})`] : []),
    ...(readyReplicas < o.spec.replicas + 1 ? [`${o.spec.replicas + 1 - readyReplicas} of ${o.spec.replicas + 1} instances not ready`] : []),
    ...(sentinelsReady < o.spec.sentinel.replicas ? [`${o.spec.sentinel.replicas - sentinelsReady} of ${o.spec.sentinel.replicas} Sentinels not ready`] : []),
    ...(stalled ? [`no progress past the step's bound: ${describe(action)}`] : []),
    ...(o.tls?.problem ? [o.tls.problem.message] : []),
    ...(o.usersProblem !== undefined ? [o.usersProblem] : []),
  ];
  const failover = failoverProblems(o, primary);
  problems.push(...failover);
  const generation = input.generation;
  const set = (list: Condition[], type: string, status: 'True' | 'False', why: string, message: string): Condition[] => setCondition(list, { type, status, reason: why, message, ...(generation !== undefined ? { observedGeneration: generation } : {}) }, now);
  let conditions = input.previous?.conditions ?? [];
  conditions = set(conditions, 'Available', primary ? 'True' : 'False', primary ? 'PrimaryServing' : 'NoPrimary', primary ? `${primary} accepts writes through the Service ${o.redis}` : 'no primary accepts writes through the Service');
  conditions =
    action.type === 'none'
      ? set(conditions, 'Progressing', 'False', 'Stable', 'nothing to do')
      : set(conditions, 'Progressing', stalled ? 'False' : 'True', stalled ? 'ProgressDeadlineExceeded' : reason(action), progressMessage(describe(action), step, now));
  conditions = set(conditions, 'Degraded', problems.length > 0 ? 'True' : 'False', rollout?.halted ? 'RolloutHalted' : o.tls?.problem ? o.tls.problem.reason : o.usersProblem !== undefined ? 'UserSecretMissing' : stalled ? 'StepStalled' : problems.length > failover.length ? 'NotAllReady' : failover.length > 0 ? 'SentinelsCannotFailOver' : 'AsExpected', problems.join('; ') || 'every instance and Sentinel is ready');

  const failingOver = !primary && (action.type === 'wait' && action.reason === 'WaitingForFailover' || (action.type === 'write-config' && action.reason === 'PrimaryChanged') || input.previous?.phase === 'Running' || input.previous?.phase === 'Updating' || input.previous?.phase === 'FailingOver');
  const changing = rollout !== undefined && rollout.halted === undefined || extraInstances(o).length > 0 || action.type === 'failover' || (action.type === 'wait' && action.reason === 'PlannedFailover');
  const phase: Phase = o.config === undefined ? 'Pending' : failingOver ? 'FailingOver' : !primary ? 'Creating' : rollout?.halted ? 'Degraded' : changing ? 'Updating' : problems.length > 0 ? 'Degraded' : 'Running';
  const planned = plannedFailoverRecord(input);
  const decision = sentinelDecision(o);
  return {
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    phase,
    conditions,
    ...(primary ? { primary } : {}),
    replicas: instances.length,
    readyReplicas,
    instances,
    ...(o.spec.sentinel.replicas > 0
      ? {
          sentinel: {
            ...(decision ? { primary: decision } : {}),
            reporting: [...o.sentinels.values()].filter((s) => s.ok).length,
            agreeing: decision === undefined ? 0 : [...o.sentinels.values()].filter((s) => s.ok && s.primaryHost?.split('.')[0] === decision).length,
            ableToFailOver: sentinelsAbleToFailOver(o, decision),
            quorum: sentinelQuorum(o.spec.sentinel.replicas),
          },
        }
      : {}),
    ...(step ? { step } : {}),
    ...(rollout ? { rollout } : {}),
    ...(planned ? { plannedFailover: planned } : {}),
  };
}

/**
 * Sentinels that could fail `decision` over now. A Sentinel learns the replicas from the primary's INFO and the
 * other Sentinels from the primary's hello channel, so one that has not learned them yet when the primary is lost
 * never will: it cannot promote a replica it does not know, nor win an election without the others.
 */
function sentinelsAbleToFailOver(o: Observed, decision: string | undefined): number {
  if (decision === undefined) return 0;
  const others = sentinelNames(o).length - 1;
  const replicas = instanceNames(o).filter((n) => n !== decision);
  return [...o.sentinels.values()].filter(
    (s) => s.ok && instanceOfHost(o.redis, s.primaryHost ?? '') === decision && (s.knownSentinels?.length ?? 0) >= others && (s.goodReplicas ?? []).some((r) => replicas.includes(r)),
  ).length;
}

/** With replicas to promote, a primary too few Sentinels could fail over is a Degraded Redis, said so. */
function failoverProblems(o: Observed, primary: string | undefined): string[] {
  if (o.spec.sentinel.replicas === 0 || o.spec.replicas === 0 || primary === undefined) return [];
  const able = sentinelsAbleToFailOver(o, sentinelDecision(o));
  const quorum = sentinelQuorum(o.spec.sentinel.replicas);
  return able < quorum ? [`only ${able} of ${o.spec.sentinel.replicas} Sentinels could fail ${primary} over (${quorum} needed): the others do not know the other Sentinels or a replica to promote yet`] : [];
}

/**
 * status.rollout: a halt as the action records it; a halt that still holds (same target, no retry) kept; while
 * pods are outdated, or a pod this rollout deleted is not back yet, the target and how far it got; else nothing.
 */
function rolloutRecord(input: StatusInput): RolloutStatus | undefined {
  const { observed: o, action, now } = input;
  const target = rolloutTarget(o);
  const { instances, sentinels } = outdatedPods(o);
  const total = instanceNames(o).length + sentinelNames(o).length;
  const token = o.rollout.retryToken !== undefined ? { retryToken: o.rollout.retryToken } : {};
  const base = { target, updated: total - instances.length - sentinels.length - missing(o), total, ...token };
  if (action.type === 'halt-rollout') return { ...base, halted: { instance: action.instance, reason: action.reason, message: action.message.slice(0, 4096), at: now.toISOString() } };
  const halted = haltedRollout(o);
  if (halted !== undefined) return { ...base, halted };
  const podsOut = o.rollout.record?.target === target && missing(o) > 0;
  return instances.length + sentinels.length > 0 || podsOut ? base : undefined;
}

function missing(o: Observed): number {
  return [...instanceNames(o), ...sentinelNames(o)].filter((n) => o.pods.get(n) === undefined || o.pods.get(n)!.deleting).length;
}

/** status.plannedFailover: set when one is asked for, kept while its primary is still the primary. */
function plannedFailoverRecord(input: StatusInput): PlannedFailover | undefined {
  const { observed: o, action, now, previous } = input;
  if (action.type === 'failover') return { from: action.from, askedAt: now.toISOString() };
  const record = previous?.plannedFailover;
  const primary = decidedPrimary(o) ?? o.config?.primary;
  return record !== undefined && record.from === primary ? record : undefined;
}
