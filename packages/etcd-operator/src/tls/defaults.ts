// TLS by default (issue 23): a new EtcdCluster gets operator-managed TLS for peers and clients unless its spec
// says `tls: {disabled: true}`. A cluster that already runs keeps what it runs: a CRD default on spec.tls would
// reach clusters stored before it too (the API server defaults objects as it reads them), and a plaintext
// cluster that moved to TLS by itself would cut off its clients. So the default is decided by facts: what the
// cluster's status and pods say it runs, and only a cluster that never ran anything starts with TLS.
//
// Three places apply it, as every default (docs/design.md): the mutating webhook writes it into the spec on
// create (so the stored object says what runs), and the operator and the validating webhook decide it again
// from the facts when the spec does not say (the webhooks fail open).
import type { EtcdClusterSpec, EtcdClusterStatus, TlsSpec } from '../api/etcdcluster.ts';

/** What a cluster with no TLS choice of its own gets when it starts: both sides operator-managed. */
export const DEFAULT_TLS: Readonly<Required<Pick<TlsSpec, 'peer' | 'client'>>> = { peer: {}, client: {} };

/** What the cluster runs, as far as TLS goes: its status, and its member pods (any status can be lost). */
export interface TLSFacts {
  status?: EtcdClusterStatus | undefined;
  /** Whether member pods exist (any, even plaintext ones). */
  podsExist?: boolean;
  /** Whether a member pod was made with TLS (its recorded template has a `tls` entry). */
  podsWithTLS?: boolean;
}

/** Whether spec.tls makes a choice of its own: a side, or `disabled`. Absent or `{}` leaves it to the default. */
export function tlsChosen(tls: TlsSpec | undefined): boolean {
  return tls !== undefined && (tls.disabled === true || tls.peer !== undefined || tls.client !== undefined);
}

/** Whether the cluster runs TLS it got by default or asked for: status.tls, or a member pod made with it. */
export function runsTLS(facts: TLSFacts): boolean {
  return facts.status?.tls?.peer !== undefined || facts.status?.tls?.client !== undefined || facts.podsWithTLS === true;
}

/** Whether the cluster ever ran members: its TLS is then whatever it runs, never the default for a new one. */
export function hasRun(facts: TLSFacts): boolean {
  const s = facts.status;
  return facts.podsExist === true || !!s?.clusterID || (s?.bootstrapMembers?.length ?? 0) > 0 || (s?.members?.length ?? 0) > 0 || s?.recovery !== undefined || (s?.nextMemberIndex ?? 0) > 0;
}

/**
 * spec.tls as the operator applies it: undefined for plaintext (`disabled`, or a cluster that runs plaintext and
 * made no choice), the spec's own sides when it names any, and DEFAULT_TLS for a cluster without a choice that
 * runs TLS or never ran.
 */
export function effectiveTLS(tls: TlsSpec | undefined, facts: TLSFacts): TlsSpec | undefined {
  if (tls?.disabled === true) return undefined;
  if (tlsChosen(tls)) return { ...(tls!.peer ? { peer: tls!.peer } : {}), ...(tls!.client ? { client: tls!.client } : {}) };
  return runsTLS(facts) || !hasRun(facts) ? { ...DEFAULT_TLS } : undefined;
}

/** A spec with effectiveTLS() in place of spec.tls: what the reconciler renders pods and Secrets from. */
export function withEffectiveTLS<S extends Pick<EtcdClusterSpec, 'tls'>>(spec: S, facts: TLSFacts): S {
  const { tls, ...rest } = spec;
  const effective = effectiveTLS(tls, facts);
  return (effective ? { ...rest, tls: effective } : rest) as S;
}

/**
 * `disabled: true` on a cluster that runs TLS: turning TLS off in place is not built, so the spec is refused
 * (by the validating webhook) or reported InvalidSpec (by the operator), naming what it runs.
 */
export function tlsOffIssue(tls: TlsSpec | undefined, facts: TLSFacts): string | undefined {
  if (tls?.disabled !== true || !runsTLS(facts)) return undefined;
  return 'spec.tls.disabled: the cluster runs TLS (status.tls; new clusters get operator-managed TLS by default) and turning TLS off in place is not built; remove spec.tls.disabled';
}

/**
 * The spec the mutating webhook stores for a new cluster: DEFAULT_TLS unless spec.tls makes a choice. Only on
 * create: an update never adds it (a running plaintext cluster stays plaintext until its spec asks for TLS).
 */
export function defaultTLSOnCreate<S extends Pick<EtcdClusterSpec, 'tls'>>(spec: S): S {
  return tlsChosen(spec.tls) ? spec : { ...spec, tls: { ...spec.tls, ...DEFAULT_TLS } };
}
