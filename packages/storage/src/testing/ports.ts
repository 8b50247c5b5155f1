// Free loopback ports for the servers unit tests start (object stores here, etcd in the operator's tests),
// from one reservation per process, so servers started side by side never share a port.
import { createServer, type Server } from 'node:net';

// Ports already handed out in this process: the kernel may hand a closed port out again, and clusters
// started in parallel must never share one.
const usedPorts = new Set<number>();

/** Free loopback ports, never one this process has handed out before. */
export async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    while (ports.length < n) {
      const server = createServer();
      // Held open until every port is chosen, so the kernel cannot give the same one twice in this call.
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('no port');
      if (usedPorts.has(address.port)) continue;
      usedPorts.add(address.port);
      ports.push(address.port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}
