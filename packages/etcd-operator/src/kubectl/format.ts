// What `kubectl quorum` prints, from the objects as read: kubectl-like tables and short summaries. Pure
// functions of the objects and the time, so the unit tests read exactly what a user reads.
import type { Condition } from '@quorum/runtime';
import type { Destination } from '../api/destination.ts';
import type { EtcdBackup } from '../api/etcdbackup.ts';
import type { EtcdBackupSchedule } from '../api/etcdbackupschedule.ts';
import type { EtcdCluster, EtcdClusterCondition, TlsStatus } from '../api/etcdcluster.ts';
import type { EtcdRestore } from '../api/etcdrestore.ts';

/** Columns padded to their widest cell, two spaces apart, as kubectl prints. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n') + '\n';
}

/** kubectl's short ages: 45s, 12m, 5h, 3d. */
export function age(iso: string | undefined, now: number): string {
  if (!iso) return '';
  const s = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 120 * 60) return `${Math.floor(s / 60)}m`;
  if (s < 48 * 3600) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

export function bytes(n: number | undefined): string {
  if (n === undefined) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${n} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** `s3://bucket/prefix`, `gs://…`, `azure://container/prefix`, `pvc://claim/path`: the same scheme as status.location. */
export function destinationText(d: Destination): string {
  const join = (root: string, prefix: string | undefined): string => (prefix ? `${root}/${prefix}` : root);
  if (d.s3) return join(`s3://${d.s3.bucket}`, d.s3.prefix) + (d.s3.endpoint ? ` (${d.s3.endpoint})` : '');
  if (d.gcs) return join(`gs://${d.gcs.bucket}`, d.gcs.prefix);
  if (d.azure) return join(`azure://${d.azure.container}`, d.azure.prefix);
  if (d.pvc) return join(`pvc://${d.pvc.claimName}`, d.pvc.path);
  return '(no destination)';
}

const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, ' | ').trim();
const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Conditions that are good news when True (the others, Degraded, EvenReplicas, QuorumLost, when False). */
const POSITIVE_CONDITIONS: readonly string[] = ['Available', 'MembersUpToDate'];

/**
 * Whether a condition needs no one's attention: Available and MembersUpToDate True, Progressing False and
 * Stable; any other type, False. Progressing True is shown too: it says what the operator is doing.
 */
export function conditionIsFine(c: EtcdClusterCondition): boolean {
  if (POSITIVE_CONDITIONS.includes(c.type)) return c.status === 'True';
  if (c.type === 'Progressing') return c.status === 'False' && c.reason === 'Stable';
  return c.status === 'False';
}

export function conditionLine(c: Pick<Condition, 'type' | 'status' | 'reason' | 'message'>): string {
  return `${c.type}=${c.status} ${c.reason}${c.message ? `: ${oneLine(c.message)}` : ''}`;
}

const clusterKey = (namespace: string | undefined, name: string): string => `${namespace ?? ''}/${name}`;

/** When a backup ended, or began, or was made: the time to order backups by. */
const backupTime = (b: EtcdBackup): string => b.status?.completedAt ?? b.status?.startedAt ?? b.metadata.creationTimestamp ?? '';
const newestFirst = (a: EtcdBackup, b: EtcdBackup): number => backupTime(b).localeCompare(backupTime(a));

/** The backups of one cluster, newest first. */
export function backupsOf(cluster: EtcdCluster, backups: readonly EtcdBackup[]): EtcdBackup[] {
  const key = clusterKey(cluster.metadata.namespace, cluster.metadata.name!);
  return backups.filter((b) => clusterKey(b.metadata.namespace, b.spec.clusterName) === key).sort(newestFirst);
}

export function schedulesOf(cluster: EtcdCluster, schedules: readonly EtcdBackupSchedule[]): EtcdBackupSchedule[] {
  const key = clusterKey(cluster.metadata.namespace, cluster.metadata.name!);
  return schedules.filter((s) => clusterKey(s.metadata.namespace, s.spec.clusterName) === key).sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!));
}

export function failure(conditions: readonly Condition[] | undefined): Condition | undefined {
  return conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
}

function versionText(cluster: EtcdCluster): string {
  const s = cluster.status;
  const current = s?.currentVersion ?? '?';
  return s?.clusterVersion ? `${current} (${s.clusterVersion})` : current;
}

function tlsText(tls: TlsStatus | undefined, cluster: EtcdCluster): string {
  const sides = (['peer', 'client'] as const).filter((side) => tls?.[side] !== undefined || cluster.spec.tls?.[side] !== undefined);
  return sides.length === 0 ? 'none' : sides.join('+');
}

function rolloutText(cluster: EtcdCluster): string {
  const r = cluster.status?.rollout;
  if (!r) return '-';
  if (r.halted) return `halted at ${r.halted.member} (${r.halted.reason})`;
  return `to ${r.targetVersion}${r.member ? ` (${r.member})` : ''}`;
}

/** The newest Succeeded backup as `NAME AGE`, or none. */
function lastBackupText(backups: readonly EtcdBackup[], now: number): string {
  const ok = backups.find((b) => b.status?.phase === 'Succeeded');
  return ok ? `${ok.metadata.name} (${age(ok.status?.completedAt, now)} ago)` : 'none';
}

/**
 * The lines under the status table: for each cluster, every condition that is not fine, a halted rollout,
 * and a newer backup than the last Succeeded one that failed or is under way.
 */
function clusterNotes(cluster: EtcdCluster, backups: readonly EtcdBackup[], now: number): string[] {
  const notes: string[] = [];
  for (const c of cluster.status?.conditions ?? []) if (!conditionIsFine(c)) notes.push(conditionLine(c));
  const halted = cluster.status?.rollout?.halted;
  if (halted) notes.push(`rollout to ${cluster.status!.rollout!.targetVersion} halted at ${halted.member} (${halted.reason}) ${age(halted.at, now)} ago: ${oneLine(halted.message)}`);
  const newest = backups[0];
  if (newest && newest.status?.phase !== 'Succeeded') notes.push(backupLine(newest, now));
  return notes;
}

/** `b2 Failed 5m ago: AccessDenied: …`, `b3 Running since 20s`. */
export function backupLine(b: EtcdBackup, now: number): string {
  const phase = b.status?.phase ?? 'Pending';
  if (phase === 'Succeeded') return `backup ${b.metadata.name} Succeeded ${age(b.status?.completedAt, now)} ago: ${b.status?.location ?? ''} (${bytes(b.status?.sizeBytes)}, revision ${b.status?.revision ?? '?'})`;
  if (phase === 'Failed') {
    const f = failure(b.status?.conditions);
    return `backup ${b.metadata.name} Failed ${age(b.status?.completedAt, now)} ago${f ? `: ${f.reason}: ${oneLine(f.message)}` : ''}`;
  }
  return `backup ${b.metadata.name} ${phase} for ${age(b.status?.startedAt ?? b.metadata.creationTimestamp, now)}`;
}

/** `kubectl quorum status`: one row per cluster, then what needs attention, cluster by cluster. */
export function statusTable(clusters: readonly EtcdCluster[], backups: readonly EtcdBackup[], now: number, options: { withNamespace: boolean }): string {
  const header = [...(options.withNamespace ? ['NAMESPACE'] : []), 'NAME', 'PHASE', 'READY', 'VERSION (CLUSTER)', 'LEADER', 'TLS', 'ROLLOUT', 'LAST BACKUP', 'AGE'];
  const rows: string[][] = [header];
  const notes: string[] = [];
  for (const cluster of clusters) {
    const s = cluster.status;
    const own = backupsOf(cluster, backups);
    rows.push([
      ...(options.withNamespace ? [cluster.metadata.namespace ?? ''] : []),
      cluster.metadata.name!,
      s?.phase ?? 'Pending',
      `${s?.readyReplicas ?? 0}/${cluster.spec.replicas ?? '?'}`,
      versionText(cluster),
      s?.leader ?? '-',
      tlsText(s?.tls, cluster),
      rolloutText(cluster),
      lastBackupText(own, now),
      age(cluster.metadata.creationTimestamp, now),
    ]);
    const who = options.withNamespace ? `${cluster.metadata.namespace}/${cluster.metadata.name}` : cluster.metadata.name!;
    for (const note of clusterNotes(cluster, own, now)) notes.push(`${who}: ${note}`);
  }
  return table(rows) + (notes.length > 0 ? `\n${notes.join('\n')}\n` : '');
}

function tlsDetail(cluster: EtcdCluster): string {
  const tls = cluster.status?.tls;
  const parts: string[] = [];
  for (const side of ['peer', 'client'] as const) {
    const s = tls?.[side];
    if (s) {
      const source = s.mode === 'Operator' ? 'operator-managed' : `Secret ${cluster.spec.tls?.[side]?.secretName ?? ''}`.trim();
      const rotation = s.caRotation ? `, CA rotation ${s.caRotation.phase}${s.caRotation.message ? `: ${s.caRotation.message}` : ''}` : '';
      parts.push(`${side} ${source}${s.notAfter ? `, expires ${s.notAfter}` : ''}${rotation}`);
    } else if (cluster.spec.tls?.[side]) parts.push(`${side} (asked for; not in use yet)`);
  }
  if (parts.length === 0) return 'none (plaintext)';
  return parts.join('; ') + (tls?.clientSecret ? `; client certificate in Secret ${tls.clientSecret}` : '');
}

function scheduleLine(s: EtcdBackupSchedule, now: number): string {
  const st = s.status;
  const parts = [`${s.metadata.name} "${s.spec.schedule}" to ${destinationText(s.spec.destination)}`];
  if (s.spec.suspend) parts.push('suspended');
  parts.push(st?.lastSuccessfulTime ? `last success ${age(st.lastSuccessfulTime, now)} ago` : 'no success yet');
  if (st?.nextScheduleTime) parts.push(`next ${st.nextScheduleTime}`);
  if (st?.active) parts.push(`running ${st.active}`);
  if (st?.lastFailure) parts.push(`last failure ${age(st.lastFailure.time, now)} ago (${st.lastFailure.backup}: ${st.lastFailure.reason}: ${oneLine(st.lastFailure.message)})`);
  for (const c of st?.conditions ?? []) if ((c.type === 'Ready' && c.status !== 'True') || (c.type !== 'Ready' && c.status === 'True')) parts.push(conditionLine(c));
  return parts.join(', ');
}

/** `kubectl quorum status NAME`: everything about one cluster a person on call asks first. */
export function clusterDetail(cluster: EtcdCluster, backups: readonly EtcdBackup[], schedules: readonly EtcdBackupSchedule[], now: number): string {
  const s = cluster.status;
  const lines: [string, string][] = [];
  const members = s?.members ?? [];
  lines.push(['phase', `${s?.phase ?? 'Pending'}${cluster.spec.paused ? ' (spec.paused)' : ''}`]);
  lines.push(['ready', `${s?.readyReplicas ?? 0}/${cluster.spec.replicas ?? '?'} (${members.length} member(s)${members.some((m) => m.learner) ? `, learner ${members.filter((m) => m.learner).map((m) => m.name).join(', ')}` : ''}${s?.updatedReplicas !== undefined ? `, ${s.updatedReplicas} updated` : ''})`]);
  const target = s?.targetVersion && s.targetVersion !== s.currentVersion ? `, target ${s.targetVersion}` : '';
  lines.push(['version', `${s?.currentVersion ?? '?'}${s?.clusterVersion ? ` (cluster version ${s.clusterVersion})` : ''}${target}`]);
  lines.push(['leader', s?.leader ?? 'none']);
  if (s?.clientEndpoint) lines.push(['endpoint', s.clientEndpoint]);
  lines.push(['tls', tlsDetail(cluster)]);
  const r = s?.rollout;
  if (r) {
    const from = r.fromVersion ? `${r.fromVersion} → ` : '';
    const at = r.halted ? `HALTED at ${r.halted.member} (${r.halted.reason}): ${oneLine(r.halted.message)}` : r.member ? `updating ${r.member}` : 'choosing the next member';
    lines.push(['rollout', `${from}${r.targetVersion}, started ${age(r.startedAt, now)} ago; ${at}`]);
  } else lines.push(['rollout', 'none']);
  if (s?.step) {
    const step = s.step;
    lines.push(['step', `${step.name} for ${age(step.startedAt, now)}${step.failures ? `, ${step.failures} failure(s)` : ''}${step.stalled ? ', STALLED' : ''}${step.lastError ? `; last error: ${oneLine(step.lastError)}` : ''}`]);
  }
  if (s?.recovery) {
    const rec = s.recovery;
    lines.push(['recovery', `${rec.method} from ${rec.from} at revision ${rec.revision}, ${rec.completedAt ? `done ${age(rec.completedAt, now)} ago` : `under way since ${age(rec.startedAt, now)}`}; lost ${rec.lostMembers.join(', ')}`]);
  }
  const notFine = (s?.conditions ?? []).filter((c) => !conditionIsFine(c));
  lines.push(['conditions', notFine.length === 0 ? (s?.conditions?.length ? 'all fine' : 'none yet') : notFine.map(conditionLine).join('\n')]);
  const own = backupsOf(cluster, backups);
  const ok = own.find((b) => b.status?.phase === 'Succeeded');
  const backupLines = [ok ? backupLine(ok, now) : 'no Succeeded backup'];
  if (own[0] && own[0] !== ok && own[0].status?.phase !== 'Succeeded') backupLines.push(backupLine(own[0], now));
  if (cluster.spec.backup?.destination) backupLines.push(`spec.backup.destination ${destinationText(cluster.spec.backup.destination)} (before version changes: ${cluster.spec.backup.beforeVersionChange ?? 'Always'})`);
  lines.push(['backups', backupLines.join('\n')]);
  const own2 = schedulesOf(cluster, schedules);
  lines.push(['schedules', own2.length === 0 ? 'none' : own2.map((x) => scheduleLine(x, now)).join('\n')]);

  const width = Math.max(...lines.map(([k]) => k.length)) + 2;
  const body = lines.map(([k, v]) => `${`${k}:`.padEnd(width)}${v.split('\n').join(`\n${' '.repeat(width)}`)}`).join('\n');
  return `EtcdCluster ${cluster.metadata.namespace}/${cluster.metadata.name}\n${body}\n`;
}

/** `kubectl quorum members NAME`: status.members, then each member's last error in full. */
export function membersTable(cluster: EtcdCluster): string {
  const members = cluster.status?.members ?? [];
  const yes = (b: boolean): string => (b ? 'yes' : 'no');
  const rows: string[][] = [['NAME', 'ID', 'READY', 'LEADER', 'LEARNER', 'VERSION', 'DB SIZE', 'PEER URL', 'LAST ERROR']];
  for (const m of members) rows.push([m.name, m.id ?? '', yes(m.ready), yes(m.leader), yes(m.learner), m.version ?? '', bytes(m.dbSize), m.peerURL ?? '', m.lastError ? clip(oneLine(m.lastError), 60) : '']);
  const errors = members.filter((m) => m.lastError && oneLine(m.lastError).length > 60);
  const full = errors.map((m) => `\n${m.name} last error:\n${m.lastError!.trimEnd().split('\n').map((l) => `  ${l}`).join('\n')}\n`).join('');
  return table(rows) + full;
}

/** The end of `kubectl quorum backup --wait`: where the snapshot is, or why there is none. */
export function backupSummary(b: EtcdBackup): string {
  const s = b.status;
  const head = `EtcdBackup ${b.metadata.namespace}/${b.metadata.name} ${s?.phase ?? 'Pending'}`;
  if (s?.phase === 'Failed') {
    const f = failure(s.conditions);
    return `${head}${f ? `: ${f.reason}: ${f.message}` : ''}\n`;
  }
  const lines = [
    ['location', s?.location],
    ['size', s?.sizeBytes !== undefined ? bytes(s.sizeBytes) : undefined],
    ['sha256', s?.sha256],
    ['revision', s?.revision !== undefined ? `${s.revision}${s.member ? ` (from member ${s.member}, etcd ${s.etcdVersion ?? '?'})` : ''}` : undefined],
    ['completed', s?.completedAt],
  ].filter((x): x is [string, string] => x[1] !== undefined);
  return `${head}\n${lines.map(([k, v]) => `  ${`${k}:`.padEnd(10)}${v}`).join('\n')}\n`;
}

/** The end of `kubectl quorum restore --wait`. */
export function restoreSummary(r: EtcdRestore, cluster: EtcdCluster | undefined): string {
  const s = r.status;
  const head = `EtcdRestore ${r.metadata.namespace}/${r.metadata.name} ${s?.phase ?? 'Pending'}`;
  const f = failure(s?.conditions);
  if (s?.phase === 'Failed' || f) return `${head}${f ? `: ${f.reason}: ${f.message}` : ''}\n`;
  const complete = s?.conditions?.find((c) => c.type === 'Complete');
  const lines = [`${head}${complete && complete.status !== 'True' ? `: ${complete.reason}: ${complete.message}` : ''}`];
  if (cluster) {
    const cs = cluster.status;
    lines.push(`  cluster:  EtcdCluster ${cluster.metadata.namespace}/${cluster.metadata.name}, ${cs?.phase ?? 'Pending'}, ${cs?.readyReplicas ?? 0}/${cluster.spec.replicas ?? '?'} ready, etcd ${cs?.currentVersion ?? '?'}`);
    if (cs?.clientEndpoint) lines.push(`  endpoint: ${cs.clientEndpoint}`);
  }
  return lines.join('\n') + '\n';
}
