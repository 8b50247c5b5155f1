// Membership changes (add a learner, promote, remove, update a peer URL) sent through each voting member in turn.
// etcd checks connectivity on the member that receives the call ("unhealthy cluster" when it has not been
// connected to its peers for 5 s), and a member can keep a stale "inactive" view of a peer for as long as
// its streams stay up (etcd-io/etcd#14523): the same change sent to another member may be accepted.
// Before each attempt the member list is read again through that member, so that a change that was
// applied (even if its answer was lost) is never made twice.
import type { Member } from '../etcd/client.ts';
import { EtcdError, UnhealthyClusterError } from '../etcd/errors.ts';
import type { EtcdClients } from '../etcd/clients.ts';
import type { MemberEndpoint as ClientEndpoint } from '../tls/members.ts';

export type MembershipChange =
  | { kind: 'add'; peerURL: string }
  | { kind: 'promote'; id: string }
  | { kind: 'remove'; id: string }
  | { kind: 'update'; id: string; peerURL: string };

export interface MemberEndpoint {
  member: string;
  /** Its client URL, or the URL with the TLS to dial it with (tls/members.ts clientEndpoint). */
  endpoint: string | ClientEndpoint;
}

export interface ChangeResult {
  /** The member the change went through. */
  through: string;
  /** Members that refused before it, with etcd's words. */
  refusals: { member: string; error: string }[];
  /** True when the re-read member list showed the change already made (a lost answer). */
  alreadyDone: boolean;
}

/** Every member asked refused (or could not be asked); `everywhere` when all refusals were "unhealthy cluster". */
export class MembershipRefusedError extends Error {
  readonly refusals: { member: string; error: string; unhealthy: boolean }[];
  readonly everywhere: boolean;
  readonly reason: string;
  /** Each member's refusal, in etcd's words. */
  readonly detail: string;
  constructor(description: string, refusals: { member: string; error: string; unhealthy: boolean }[]) {
    const everywhere = refusals.length > 0 && refusals.every((r) => r.unhealthy);
    const detail = refusals.map((r) => `${r.error} through ${r.member}`).join('; ') || 'no voting member has a pod to send it to';
    super(`${description}: ${detail}`);
    this.detail = detail;
    this.name = 'MembershipRefusedError';
    this.refusals = refusals;
    this.everywhere = everywhere;
    this.reason = everywhere ? 'UnhealthyCluster' : 'Refused';
  }
}

function applied(change: MembershipChange, members: Member[]): boolean {
  switch (change.kind) {
    case 'add': return members.some((m) => m.peerURLs.includes(change.peerURL));
    case 'promote': return members.some((m) => m.id === change.id && !m.isLearner);
    case 'remove': return !members.some((m) => m.id === change.id);
    case 'update': return members.some((m) => m.id === change.id && m.peerURLs.length === 1 && m.peerURLs[0] === change.peerURL);
  }
}

/**
 * Sends `change` through `endpoints` (voting members, the leader first) until one accepts. An error
 * other than "unhealthy cluster" (a learner not caught up, an invalid request) is etcd's answer for the
 * whole cluster and is thrown as it is.
 */
export async function changeMembership(change: MembershipChange, endpoints: MemberEndpoint[], clients: EtcdClients, signal: AbortSignal): Promise<ChangeResult> {
  const refusals: { member: string; error: string; unhealthy: boolean }[] = [];
  for (const { member, endpoint } of endpoints) {
    const client = clients.get(endpoint);
    try {
      const members = await client.memberList({ linearizable: true, signal });
      if (applied(change, members)) return { through: member, refusals, alreadyDone: true };
      switch (change.kind) {
        case 'add': await client.memberAdd([change.peerURL], { learner: true, signal }); break;
        case 'promote': await client.memberPromote(change.id, { signal }); break;
        case 'remove': await client.memberRemove(change.id, { signal }); break;
        case 'update': await client.memberUpdate(change.id, [change.peerURL], { signal }); break;
      }
      return { through: member, refusals, alreadyDone: false };
    } catch (err) {
      if (err instanceof UnhealthyClusterError) {
        refusals.push({ member, error: `etcd refused (${err.etcdMessage.replace(/^etcdserver: /, '')})`, unhealthy: true });
        continue;
      }
      if (err instanceof EtcdError) throw err;
      // No answer from this member: say so, and try the next one.
      refusals.push({ member, error: `no answer (${err instanceof Error ? err.message : String(err)})`, unhealthy: false });
    }
  }
  throw new MembershipRefusedError(describe(change), refusals);
}

function describe(change: MembershipChange): string {
  switch (change.kind) {
    case 'add': return `adding ${change.peerURL} as a learner`;
    case 'promote': return `promoting ${change.id}`;
    case 'remove': return `removing ${change.id}`;
    case 'update': return `changing the peer URL of ${change.id} to ${change.peerURL}`;
  }
}
