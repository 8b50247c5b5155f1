// What the integration test and the benchmark share: the escalation webhook served in this process, reached by
// the API server through a URL, and registered fail-closed on demand (the manager grants nothing until then).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCertificates, ValidatingWebhookConfigurations, WebhookServer, writeCertificates, type Client } from '@quorum/runtime';
import { topology } from '@quorum/localkube';
import { escalationWebhook, ESCALATION_WEBHOOK_PATH, subjectAccessReviewer } from '../../src/admission/webhook.ts';
import type { RBACDefinition } from '../../src/api/rbacdefinition.ts';
import type { EscalationWebhookRef } from '../../src/controller/webhook-gate.ts';
import { escalationWebhookConfiguration } from '../../src/deploy/manifests.ts';

export interface InProcessWebhook {
  /** What createRbacManager's escalationWebhook option names. */
  ref: EscalationWebhookRef;
  /** Creates the ValidatingWebhookConfiguration pointing at this process. */
  register(): Promise<void>;
  /** Deletes the configuration (fail-closed and pointing here: it must not outlive the process), stops serving. */
  stop(): Promise<void>;
}

/** `admin` registers the configuration; `reviewer` asks the SubjectAccessReviews (the manager's client). */
export async function serveEscalationWebhook(admin: Client, reviewer: Client, configuration: string): Promise<InProcessWebhook> {
  const host = topology.CONTROL_PLANE_IP;
  const certs = await generateCertificates({ ipAddresses: [host] });
  const certDir = await mkdtemp(join(tmpdir(), 'rbac-webhook-'));
  await writeCertificates(certDir, certs);
  const server = new WebhookServer({ port: 0, host, certFile: join(certDir, 'tls.crt'), keyFile: join(certDir, 'tls.key'), logger: () => {} });
  server.registerValidating<RBACDefinition>(ESCALATION_WEBHOOK_PATH, escalationWebhook(subjectAccessReviewer(reviewer)));
  await server.start();
  const url = `https://${host}:${server.port}${ESCALATION_WEBHOOK_PATH}`;
  return {
    ref: { configuration, target: { url }, ca: { pem: certs.caCert } },
    register: async () => {
      const config = escalationWebhookConfiguration({ url }, configuration);
      (config['webhooks'] as { clientConfig: Record<string, string> }[])[0]!.clientConfig['caBundle'] = Buffer.from(certs.caCert).toString('base64');
      await admin.create(ValidatingWebhookConfigurations, config);
    },
    stop: async () => {
      await admin.delete(ValidatingWebhookConfigurations, configuration).catch(() => undefined);
      await server.stop();
      await rm(certDir, { recursive: true, force: true });
    },
  };
}
