import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NONROOT_UID, RESTRICTED_CONTAINER_SECURITY, RESTRICTED_POD_SECURITY, restrictedContainerSecurity, restrictedPodSecurity } from '../../src/pod-security.ts';

test('the restricted defaults: a numeric non-root user and group, RuntimeDefault seccomp, no escalation, no capabilities, read-only root', () => {
  assert.deepEqual(restrictedPodSecurity(), { runAsNonRoot: true, runAsUser: NONROOT_UID, runAsGroup: NONROOT_UID, fsGroup: NONROOT_UID, seccompProfile: { type: 'RuntimeDefault' } });
  assert.deepEqual(restrictedContainerSecurity(), { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
});

test('each field an override sets replaces one default, and every call returns an object of its own', () => {
  const pod = restrictedPodSecurity({ fsGroupChangePolicy: 'OnRootMismatch', seccompProfile: { type: 'Localhost', localhostProfile: 'etcd.json' } });
  assert.deepEqual(pod.seccompProfile, { type: 'Localhost', localhostProfile: 'etcd.json' });
  assert.equal(pod.fsGroupChangePolicy, 'OnRootMismatch');
  assert.equal(pod.runAsUser, NONROOT_UID);
  const container = restrictedContainerSecurity();
  container.capabilities.drop.push('NET_RAW');
  assert.deepEqual(RESTRICTED_CONTAINER_SECURITY.capabilities.drop, ['ALL']);
  assert.ok(Object.isFrozen(RESTRICTED_POD_SECURITY));
  assert.notEqual(restrictedPodSecurity(), restrictedPodSecurity());
});
