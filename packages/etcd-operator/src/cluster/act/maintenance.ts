// Storage maintenance steps: compaction and the alarm's disarm (NOSPACE recovery), and one member's
// defragmentation; each tells the reconciler what it did (ActContext.maintained) for status.maintenance.
import { EtcdError, GrpcCode } from '../../etcd/errors.ts';
import type { Handlers } from './context.ts';
import { requireEndpoint } from './etcd.ts';

const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(1)} MiB`;

export const maintenanceSteps: Handlers<'compact' | 'defragment' | 'disarmAlarm'> = {
  async compact(a, c) {
    const endpoint = requireEndpoint(c, a.via, 'compact through');
    try {
      // Physical: the answer comes once every member applied it, so the defragmentations that follow free its pages.
      await c.etcd.get(endpoint).compact(a.revision, { physical: true, signal: c.signal, timeoutMs: 60_000 });
    } catch (err) {
      // Compacted already (an earlier attempt whose answer was lost, or auto-compaction got there first): done.
      if (!(err instanceof EtcdError && err.code === GrpcCode.OutOfRange)) throw err;
    }
    await c.wrote(`etcd compact ${a.revision}`);
    c.maintained?.({ kind: 'compacted', revision: a.revision, at: new Date() });
    c.event('Normal', 'Compacted', `compacted the keyspace to revision ${a.revision} (NOSPACE recovery); every member is defragmented next`);
    return { requeueAfter: 200 };
  },
  async defragment(a, c) {
    const client = c.etcd.get(requireEndpoint(c, a.member, 'defragment'));
    // Timed around the call alone: this is how long the member served nobody.
    const started = performance.now();
    await client.defragment({ signal: c.signal, timeoutMs: a.timeoutMs });
    const durationMs = Math.round(performance.now() - started);
    await c.wrote(`etcd defragment ${a.member}`);
    const after = await client.status({ signal: c.signal }).then((st) => st.dbSize, () => undefined);
    c.maintained?.({ kind: 'defragmented', member: a.member, reason: a.reason, durationMs, dbSizeBefore: a.dbSize, ...(after !== undefined ? { dbSizeAfter: after } : {}), at: new Date() });
    c.event('Normal', 'Defragmented', `defragmented ${a.member} (${a.reason}) in ${durationMs} ms: ${mib(a.dbSize)}${after !== undefined ? ` → ${mib(after)}` : ''}; it served no requests meanwhile`);
    return { requeueAfter: 500 };
  },
  async disarmAlarm(a, c) {
    const endpoint = requireEndpoint(c, a.via, 'disarm the alarm through');
    for (const alarm of a.alarms) await c.etcd.get(endpoint).disarm({ memberId: alarm.memberId, alarm: alarm.alarm }, { signal: c.signal });
    await c.wrote('etcd alarm disarm');
    c.event('Normal', 'AlarmDisarmed', `disarmed ${a.alarms.map((x) => `${x.alarm} (${x.member})`).join(', ')}: etcd accepts writes again`);
    return { requeueAfter: 500 };
  },
};
