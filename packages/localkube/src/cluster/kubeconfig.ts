// Kubeconfig files (JSON is valid kubeconfig YAML) for the admin, each component, and ServiceAccounts.
import { readFile, writeFile } from 'node:fs/promises';
import type { CertPaths } from './pki.ts';

export type UserAuth = { clientCert: CertPaths } | { token: string };

export async function writeKubeconfig(path: string, server: string, caFile: string, user: string, auth: UserAuth): Promise<void> {
  const b64 = async (file: string): Promise<string> => (await readFile(file)).toString('base64');
  const userEntry =
    'token' in auth
      ? { token: auth.token }
      : { 'client-certificate-data': await b64(auth.clientCert.cert), 'client-key-data': await b64(auth.clientCert.key) };
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'localkube', cluster: { server, 'certificate-authority-data': await b64(caFile) } }],
    users: [{ name: user, user: userEntry }],
    contexts: [{ name: user === 'admin' ? 'localkube' : `localkube-${user}`, context: { cluster: 'localkube', user } }],
    'current-context': user === 'admin' ? 'localkube' : `localkube-${user}`,
  };
  await writeFile(path, JSON.stringify(config, null, 2) + '\n', { mode: 0o600 });
}
