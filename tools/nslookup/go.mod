// An nslookup that resolves as glibc does, for the etcd image of Quorum's peers benchmark (see main.go).
module quorum.dev/tools/nslookup

go 1.26.0
