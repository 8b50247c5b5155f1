// The init container that holds an etcd member back until every peer name it will dial resolves (our own, like tools/pause).
module quorum.dev/tools/peer-wait

go 1.24.0
