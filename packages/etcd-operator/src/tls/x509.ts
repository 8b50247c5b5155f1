// What the etcd operator's TLS code reads in certificates that the kit's X.509 issuer (which makes them) does not
// cover: the PEM blocks of a bundle, an X509Certificate's name on one line for messages, and the OIDs of the two
// extended key usages a user's certificate is checked for (X509Certificate.keyUsage lists them by OID).

export const OID = {
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

/** X509Certificate's subject or issuer ("O=x\nCN=y") on one line, for messages. */
export function oneLineName(name: string): string {
  return name.replaceAll('\n', ', ');
}

/** The PEM blocks with this label in a text, e.g. each certificate of a CA bundle. */
export function pemBlocks(text: string, label = 'CERTIFICATE'): string[] {
  const pattern = new RegExp(`-----BEGIN ${label}-----[\\s\\S]*?-----END ${label}-----`, 'g');
  return text.match(pattern) ?? [];
}
