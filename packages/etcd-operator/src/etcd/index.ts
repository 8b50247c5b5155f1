// The etcd admin client: one EtcdClient per member endpoint, EtcdClusterClient over several.
export {
  DEFAULT_TIMEOUT_MS,
  EtcdClient,
  type Alarm,
  type AlarmType,
  type CallOptions,
  type EtcdClientOptions,
  type EtcdStatus,
  type EtcdTls,
  type Health,
  type KeyValue,
  type Member,
  prefixEnd,
  type RangeOptions,
  type RangeResult,
  type StoredKey,
  type Versions,
} from './client.ts';
export { activePeers, parseActivePeers } from './metrics.ts';
export {
  EtcdClusterClient,
  type EndpointFailure,
  type EndpointStatus,
  type EtcdClusterClientOptions,
  type LeaderStatus,
} from './cluster-client.ts';
export {
  EtcdError,
  EtcdProtocolError,
  EtcdUnavailableError,
  GrpcCode,
  isEtcdUnavailable,
  LearnerNotReadyError,
  MemberNotFoundError,
  NotLeaderError,
  QuorumUnavailableError,
  UnhealthyClusterError,
  type UnavailableReason,
} from './errors.ts';
export { isMemberId, memberIdFromHex, memberIdToHex } from './ids.ts';
