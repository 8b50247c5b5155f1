// Tells the API server which CA to trust for our webhooks: sets `caBundle` in every webhook of the named
// configurations. A merge patch would replace the whole `webhooks` list (it has no merge key), dropping
// any webhook another writer just added; so this reads, then JSON-patches each entry, guarded by a
// `test` of the resourceVersion it read. A write that loses a race is retried at once, at most `attempts`
// times in all, each retry counted when given metrics; the last refusal is thrown with the server's words.
import type { Client, JsonPatchOp } from '../client/client.ts';
import { ConflictError, InvalidError } from '../client/errors.ts';
import { MutatingWebhookConfigurations, ValidatingWebhookConfigurations, type ResourceType } from '../client/resources.ts';
import type { KubeObject } from '../object.ts';
import { retryReason, type RetryMetrics } from '../watch/retry-reporter.ts';

export interface WebhookConfigurationNames {
  validating?: string[];
  mutating?: string[];
}

export interface PatchCaBundleOptions {
  /** Tries per configuration when it changes between read and write. Default 5. */
  attempts?: number;
  signal?: AbortSignal;
  /** Counts each retry as `runtime_retries_total{component="webhook/ca-bundle",reason}`. */
  metrics?: RetryMetrics;
}

type WebhookConfiguration = KubeObject & { webhooks?: unknown };

/** Configurations already carrying this CA in every webhook are not written. */
export async function patchCaBundle(client: Client, names: WebhookConfigurationNames, caPem: string, options: PatchCaBundleOptions = {}): Promise<void> {
  const caBundle = Buffer.from(caPem).toString('base64');
  for (const name of names.validating ?? []) await patchOne(client, ValidatingWebhookConfigurations, name, caBundle, options);
  for (const name of names.mutating ?? []) await patchOne(client, MutatingWebhookConfigurations, name, caBundle, options);
}

async function patchOne(client: Client, type: ResourceType<WebhookConfiguration>, name: string, caBundle: string, options: PatchCaBundleOptions): Promise<void> {
  const attempts = options.attempts ?? 5;
  let rejectedAt: { resourceVersion: string; error: InvalidError } | undefined;
  for (let attempt = 1; ; attempt++) {
    options.signal?.throwIfAborted();
    const config = await client.get(type, name, { signal: options.signal });
    const resourceVersion = config.metadata.resourceVersion ?? '';
    // Unchanged since a 422: the patch itself is invalid, not stale.
    if (rejectedAt?.resourceVersion === resourceVersion) throw rejectedAt.error;
    const ops = caBundleOps(config, caBundle);
    if (ops.length === 0) return;
    try {
      await client.jsonPatch(type, { namespace: '', name }, [{ op: 'test', path: '/metadata/resourceVersion', value: resourceVersion }, ...ops], { signal: options.signal });
      return;
    } catch (err) {
      // A failed `test` comes back as 422; a write racing ours as 409.
      const stale = err instanceof ConflictError || err instanceof InvalidError;
      if (!stale || attempt >= attempts) throw err;
      options.metrics?.retried('webhook/ca-bundle', retryReason(err));
      rejectedAt = err instanceof InvalidError ? { resourceVersion, error: err } : undefined;
    }
  }
}

function caBundleOps(config: WebhookConfiguration, caBundle: string): JsonPatchOp[] {
  const webhooks = Array.isArray(config.webhooks) ? (config.webhooks as { clientConfig?: { caBundle?: string } }[]) : [];
  // `add` rather than `replace`: on an object member it sets the value whether or not it exists yet,
  // and a fresh configuration usually has no caBundle at all.
  return webhooks.flatMap((webhook, i) => (webhook.clientConfig?.caBundle === caBundle ? [] : [{ op: 'add' as const, path: `/webhooks/${i}/clientConfig/caBundle`, value: caBundle }]));
}
