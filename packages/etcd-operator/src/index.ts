// The etcd operator (issue 4) lands here.
export {};
