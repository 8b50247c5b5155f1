// A minimal, deterministic ustar writer: fixed owner (0:0) and mtime (0), entries in the order given,
// so that the same inputs always give the same bytes (and so the same image digests).
const BLOCK = 512;

export type TarEntry =
  | { type: 'file'; path: string; mode: number; data: Buffer }
  | { type: 'dir'; path: string; mode: number }
  | { type: 'symlink'; path: string; target: string };

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function splitName(path: string): { name: string; prefix: string } {
  if (Buffer.byteLength(path) <= 100) return { name: path, prefix: '' };
  // ustar splits long names at a slash: prefix (≤155 bytes) + name (≤100 bytes).
  for (let i = path.lastIndexOf('/'); i > 0; i = path.lastIndexOf('/', i - 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100) return { name, prefix };
  }
  throw new Error(`tar: path too long for ustar: ${path}`);
}

function header(entry: TarEntry, size: number): Buffer {
  const block = Buffer.alloc(BLOCK);
  const path = entry.type === 'dir' && !entry.path.endsWith('/') ? `${entry.path}/` : entry.path;
  const { name, prefix } = splitName(path);
  const mode = entry.type === 'symlink' ? 0o777 : entry.mode;
  block.write(name, 0, 100, 'utf8');
  block.write(octal(mode, 8), 100, 8, 'ascii');
  block.write(octal(0, 8), 108, 8, 'ascii');
  block.write(octal(0, 8), 116, 8, 'ascii');
  block.write(octal(size, 12), 124, 12, 'ascii');
  block.write(octal(0, 12), 136, 12, 'ascii');
  block.write(' '.repeat(8), 148, 8, 'ascii');
  block.write(entry.type === 'file' ? '0' : entry.type === 'dir' ? '5' : '2', 156, 1, 'ascii');
  if (entry.type === 'symlink') block.write(entry.target, 157, 100, 'utf8');
  block.write('ustar\0', 257, 6, 'ascii');
  block.write('00', 263, 2, 'ascii');
  block.write('root', 265, 32, 'ascii');
  block.write('root', 297, 32, 'ascii');
  block.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(octal(sum, 7) + ' ', 148, 8, 'ascii');
  return block;
}

/** The whole archive, in memory: localkube's images are tens of MiB. */
export function tar(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const data = entry.type === 'file' ? entry.data : Buffer.alloc(0);
    parts.push(header(entry, data.length), data);
    const pad = (BLOCK - (data.length % BLOCK)) % BLOCK;
    if (pad) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(parts);
}
