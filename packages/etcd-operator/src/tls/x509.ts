// What the etcd operator's TLS code reads in certificates beyond what the X.509 issuer makes: the kit's helpers
// (PEM blocks, one-line names, the extended key usage OIDs), re-exported where the etcd code has always taken them.
export { OID, oneLineName, pemBlocks } from '@quorum/kit';
