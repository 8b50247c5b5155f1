// The restricted Pod Security Standard, as every Quorum operator puts it on the pods it runs (its own Deployment,
// its Jobs, the workloads it manages): a numeric non-root user (images that declare no USER pass runAsNonRoot only
// with one), the runtime's seccomp profile, no privilege escalation, no capabilities, a read-only root filesystem
// (containers write only to their volumes). A namespace labelled pod-security.kubernetes.io/enforce=restricted
// admits them.

/**
 * The labels of an operator's namespace: it admits only restricted pods, and warns and audits against the same
 * level, whatever the cluster's default. Every operator labels its namespace alike, so that an install of several
 * into one namespace (quorum-system) writes the same values.
 */
export const RESTRICTED_NAMESPACE_LABELS: Readonly<Record<string, string>> = Object.freeze({
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/enforce-version': 'latest',
  'pod-security.kubernetes.io/warn': 'restricted',
  'pod-security.kubernetes.io/warn-version': 'latest',
  'pod-security.kubernetes.io/audit': 'restricted',
  'pod-security.kubernetes.io/audit-version': 'latest',
});

/** The conventional non-root uid and gid of distroless images ("nonroot"). */
export const NONROOT_UID = 65532;

/** core/v1 PodSecurityContext, the fields these defaults set (assignable to @kubernetes/client-node's V1PodSecurityContext). */
export interface RestrictedPodSecurityContext {
  runAsNonRoot: boolean;
  runAsUser: number;
  runAsGroup: number;
  /** Volumes are made the group's, so the non-root user can write them. */
  fsGroup: number;
  seccompProfile: { type: string };
}

/** core/v1 SecurityContext of a container, the fields these defaults set. */
export interface RestrictedContainerSecurityContext {
  allowPrivilegeEscalation: boolean;
  readOnlyRootFilesystem: boolean;
  capabilities: { drop: string[] };
}

export const RESTRICTED_POD_SECURITY: Readonly<RestrictedPodSecurityContext> = Object.freeze({
  runAsNonRoot: true,
  runAsUser: NONROOT_UID,
  runAsGroup: NONROOT_UID,
  fsGroup: NONROOT_UID,
  seccompProfile: Object.freeze({ type: 'RuntimeDefault' }),
});

export const RESTRICTED_CONTAINER_SECURITY: Readonly<RestrictedContainerSecurityContext> = Object.freeze({
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: Object.freeze({ drop: Object.freeze(['ALL']) as string[] }),
});

/** A pod's securityContext: the restricted defaults, each field `overrides` sets replacing one (a whole seccompProfile, say). */
export function restrictedPodSecurity<T extends object = object>(overrides: T = {} as T): RestrictedPodSecurityContext & T {
  return { ...structuredClone(RESTRICTED_POD_SECURITY), ...overrides };
}

/** A container's securityContext: the restricted defaults, each field `overrides` sets replacing one. */
export function restrictedContainerSecurity<T extends object = object>(overrides: T = {} as T): RestrictedContainerSecurityContext & T {
  return { ...structuredClone(RESTRICTED_CONTAINER_SECURITY), ...overrides };
}
