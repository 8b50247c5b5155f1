// The four prom-client classes the runtime uses, loaded from their own modules rather than from prom-client's main
// module. That one also loads Summary (tdigest, bintrees), the Pushgateway, the cluster aggregator and the default
// metrics, and the default metrics load @opentelemetry/api (44 modules) for exemplars the runtime never records:
// about 1.5 MiB of every operator process (docs/memory.md). The types are prom-client's own; the paths are those
// of the prom-client version package-lock.json pins, and a unit test loads them (an upgrade that moves them fails
// there, not in a running operator).
import { createRequire } from 'node:module';
import type * as Prom from 'prom-client';

const load = createRequire(import.meta.url);

export const Registry = load('prom-client/lib/registry') as typeof Prom.Registry;
export const Counter = load('prom-client/lib/counter') as typeof Prom.Counter;
export const Gauge = load('prom-client/lib/gauge') as typeof Prom.Gauge;
export const Histogram = load('prom-client/lib/histogram') as typeof Prom.Histogram;
export type Registry = Prom.Registry;
export type Counter<L extends string = string> = Prom.Counter<L>;
export type Gauge<L extends string = string> = Prom.Gauge<L>;
export type Histogram<L extends string = string> = Prom.Histogram<L>;
