// /healthz, /readyz (and /metrics, unless the manager serves it over HTTPS: secure-metrics.ts) over plain HTTP, for kubelet probes and Prometheus.
import type { Server } from 'node:http';
import type { Registry } from 'prom-client';

// Not `import … from 'node:http'`: an ES module import of a built-in builds its namespace by reading every export,
// and node:http's WebSocket, MessageEvent and CloseEvent are getters that load Node's bundled undici (75 modules,
// 3.8 MiB of RSS in every operator that serves probes; issue 24, docs/memory.md).
const { createServer } = process.getBuiltinModule('node:http');

export type Check = () => Promise<void> | void;

export class ProbeServer {
  readonly #health = new Map<string, Check>();
  readonly #ready = new Map<string, Check>();
  readonly #registry: Registry | undefined;
  #server: Server | undefined;

  constructor(registry?: Registry) {
    this.#registry = registry;
  }

  addHealthCheck(name: string, check: Check): void {
    this.#health.set(name, check);
  }

  addReadyCheck(name: string, check: Check): void {
    this.#ready.set(name, check);
  }

  get port(): number {
    const address = this.#server?.address();
    return typeof address === 'object' && address ? address.port : 0;
  }

  async listen(port: number, host = '0.0.0.0'): Promise<void> {
    this.#server = createServer((req, res) => {
      void (async () => {
        const path = (req.url ?? '/').split('?')[0];
        if (path === '/metrics' && this.#registry) {
          res.writeHead(200, { 'content-type': this.#registry.contentType }).end(await this.#registry.metrics());
          return;
        }
        const checks = path === '/healthz' || path === '/livez' ? this.#health : path === '/readyz' ? this.#ready : undefined;
        if (!checks) return void res.writeHead(404).end('not found\n');
        const failures: string[] = [];
        for (const [name, check] of checks) {
          try {
            await check();
          } catch (err) {
            failures.push(`${name}: ${(err as Error).message}`);
          }
        }
        if (failures.length) res.writeHead(503, { 'content-type': 'text/plain' }).end(`${failures.join('\n')}\n`);
        else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      })();
    });
    await new Promise<void>((resolve, reject) => {
      this.#server!.once('error', reject);
      this.#server!.listen(port, host, resolve);
    });
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
    this.#server?.closeAllConnections();
  }
}
