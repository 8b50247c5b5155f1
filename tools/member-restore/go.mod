// Restores an etcd member's data directory from a snapshot, once, inside the etcd image (our own, like tools/peer-wait).
module quorum.dev/tools/member-restore

go 1.24.0
