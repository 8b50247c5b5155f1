// Command nslookup resolves one name with the pod's /etc/resolv.conf, search domains and ndots included, and
// exits 0 if it has addresses, 1 if not. It stands in for busybox:1.28.0-glibc's nslookup in the etcd image
// Quorum's peers benchmark gives coreos/etcd-operator v0.9.4 (packages/etcd-operator/bench/peers/).
//
// Why: that operator's member pods wait in an init container with `nslookup <member>.<cluster>.<ns>.svc`, a
// name that only resolves through the pod's search domains (<ns>.svc.cluster.local, svc.cluster.local, …).
// busybox 1.28's glibc build resolved through getaddrinfo, which applies them; busybox >= 1.29 (Debian
// bookworm's 1.35 included) has its own resolver, which applies no search domain to a name that has a dot,
// so the wait never ends. Go's resolver (CGO_ENABLED=0) reads resolv.conf's search and ndots as glibc does.
// Only the exit status matters to the operator's script; the output mimics busybox 1.28's for its logs.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"sort"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: nslookup NAME")
		os.Exit(2)
	}
	os.Exit(lookup(os.Args[1], net.DefaultResolver.LookupHost, os.Stdout, os.Stderr))
}

// lookup resolves name with resolve (bounded, like a resolver's own timeouts) and reports what it found.
func lookup(name string, resolve func(context.Context, string) ([]string, error), stdout, stderr interface{ Write([]byte) (int, error) }) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addrs, err := resolve(ctx, name)
	if err == nil && len(addrs) == 0 {
		err = fmt.Errorf("no addresses")
	}
	if err != nil {
		fmt.Fprintf(stderr, "nslookup: can't resolve '%s': %v\n", name, err)
		return 1
	}
	sort.Strings(addrs)
	fmt.Fprintf(stdout, "Name:      %s\n", name)
	for i, a := range addrs {
		fmt.Fprintf(stdout, "Address %d: %s\n", i+1, a)
	}
	return 0
}
