// A plaintext HTTP/2 (h2c) proxy in front of a real etcd that flips one byte in the middle of one gRPC
// response message: the way to make a real server's snapshot stream arrive corrupted, to test the checks
// that must catch it. Only for tests; loopback only.
import { connect, constants, createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';

export interface CorruptingProxy {
  url: string;
  /** Whether a byte was flipped yet. */
  readonly flipped: boolean;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

function forwardable(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(':') || HOP_BY_HOP.has(name) || value === undefined) continue;
    out[name] = value;
  }
  return out;
}

/** Proxies to `target` (http://host:port), flipping the middle byte of gRPC response message `messageIndex` (0-based). */
export async function startCorruptingProxy(target: string, messageIndex: number): Promise<CorruptingProxy> {
  let flipped = false;
  const server = createServer();
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('stream', (down, headers) => {
    const upstream = connect(target);
    upstream.on('error', () => down.close(constants.NGHTTP2_INTERNAL_ERROR));
    const up = upstream.request({ ...forwardable(headers), ':method': headers[':method'] ?? 'POST', ':path': headers[':path'] ?? '/' }, { endStream: false });
    down.pipe(up);
    let trailers: OutgoingHttpHeaders = {};
    up.on('response', (h) => down.respond({ ':status': Number(h[':status']), ...forwardable(h) }, { waitForTrailers: true }));
    up.on('trailers', (t: IncomingHttpHeaders) => {
      trailers = forwardable(t);
    });
    down.on('wantTrailers', () => down.sendTrailers(trailers));
    // Where the scanner is in the gRPC byte stream: a 5-byte prefix, then `length` message bytes.
    let prefix = Buffer.alloc(0);
    let length = -1;
    let offset = 0;
    let index = 0;
    up.on('data', (chunk: Buffer) => {
      const out = Buffer.from(chunk);
      for (let i = 0; i < out.length; ) {
        if (length < 0) {
          const need = 5 - prefix.length;
          const part = out.subarray(i, i + need);
          prefix = Buffer.concat([prefix, part]);
          i += part.length;
          if (prefix.length === 5) {
            length = prefix.readUInt32BE(1);
            offset = 0;
            prefix = Buffer.alloc(0);
          }
          continue;
        }
        const take = Math.min(length - offset, out.length - i);
        const middle = Math.floor(length / 2);
        if (index === messageIndex && middle >= offset && middle < offset + take) {
          out[i + middle - offset]! ^= 0xff;
          flipped = true;
        }
        offset += take;
        i += take;
        if (offset === length) {
          length = -1;
          index++;
        }
      }
      down.write(out);
    });
    up.on('end', () => {
      down.end();
      upstream.close();
    });
    up.on('error', () => down.close(constants.NGHTTP2_INTERNAL_ERROR));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get flipped() {
      return flipped;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) session.destroy();
      }),
  };
}
