// @quorum/runtime: a controller runtime for Kubernetes operators in TypeScript.
// watch → cache → queue → reconcile; see docs/runtime.md.
export * from './object.ts';
// JSON equality ignoring key order, and the plain-object test it rests on (also in @quorum/runtime/crd).
export { deepEqual, isPlainObject } from './crd/schema.ts';
export { Client, type ApplyOptions, type DeleteOptions, type JsonPatchOp, type ListOptions, type RawWatchEvent, type RequestObserver, type RequestOptions, type WriteOptions } from './client/client.ts';
export { CONNECTION_FLAGS, connect, connectionFlags, kubeconfigNamespace, loadKubeConfig, type Connection, type ConnectionFlags, type ConnectionOptions } from './client/config.ts';
export * from './client/errors.ts';
export * from './client/resources.ts';
export * from './builtin.ts';
export {
  DiscoveryClient,
  DiscoveryDocumentError,
  findResource,
  groupKindString,
  groupVersionPath,
  KindUnavailableError,
  parseAPIGroupList,
  parseAPIResourceList,
  parseAPIVersions,
  versionsByPreference,
  type APIGroup,
  type APIResource,
  type APIResourceList,
  type DiscoveredKind,
  type DiscoveryTransport,
  type GroupKind,
  type GroupVersionForDiscovery,
  type KindResolution,
  type MissingKind,
  type ResolveOptions,
  type UnavailableKind,
} from './discovery/discovery.ts';
export { watcher, ShortWatchError, SHORT_WATCH_MS, type WatcherEvent, type WatcherOptions } from './watch/watcher.ts';
export { Backoff, type BackoffOptions } from './watch/backoff.ts';
export { sleep } from './timers.ts';
export { RetryReporter, RETRY_WARN_INTERVAL_MS, errorText, retryReason, type RetryFailure, type RetryLog, type RetryMetrics, type RetryReporterOptions } from './watch/retry-reporter.ts';
export { Store, defaultIndexers, NAMESPACE_INDEX, OWNER_UID_INDEX, type Indexer } from './cache/store.ts';
export { Informer, informerComponent, stripManagedFields, type EventHandler, type InformerOptions } from './cache/informer.ts';
export * from './queue/index.ts';
export { Controller, type ControllerOptions } from './controller/controller.ts';
export { ControllerBuilder, type InformerScope, type SourceOptions } from './controller/builder.ts';
export * from './controller/predicates.ts';
export { TerminalError, type Reconciler, type ReconcileContext, type Request, type Result } from './controller/reconciler.ts';
export { Manager, LeadershipLostError, DEFAULT_INFORMER_FAILURE_BOUND_MS, shutdownSignal, type ManagerOptions, type Runnable } from './manager/manager.ts';
export { LeaderElector, type LeaderElectionOptions, type LeadershipCallbacks } from './manager/leader-election.ts';
export { RuntimeMetrics, type CollectedSample } from './manager/metrics.ts';
export { SecureMetricsServer, type SecureMetricsOptions } from './manager/secure-metrics.ts';
export { RetrySeriesScope, type RetrySeries } from './metrics/retry-series.ts';
export { ProbeServer, type Check } from './manager/health.ts';
export { createLogger, type Logger } from './manager/log.ts';
export * from './helpers/index.ts';
export * from './webhook/index.ts';
