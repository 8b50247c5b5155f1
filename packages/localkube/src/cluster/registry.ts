// Every node's containerd resolves the well-known registries to this loopback endpoint, which answers
// every request "not found" with a message saying how to get the image in. A pod whose image was never
// loaded so fails with ErrImagePull / ImagePullBackOff at once, and no pull ever leaves the machine.
import { createServer, type Server } from 'node:http';

export async function startRegistryRefusal(port: number): Promise<Server> {
  const server = createServer((req, res) => {
    req.resume();
    const body = JSON.stringify({
      errors: [
        {
          code: 'NAME_UNKNOWN',
          message: `localkube has no registry: ${req.url ?? ''} is not loaded on this node (build it as an OCI archive and run \`localkube load-image\`)`,
        },
      ],
    });
    res.writeHead(404, { 'content-type': 'application/json', 'docker-distribution-api-version': 'registry/2.0' }).end(body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return server;
}
