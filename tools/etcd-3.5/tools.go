//go:build tools

// Package tools names the upstream commands built from this module, so that go.mod and go.sum pin them.
package tools

import (
	_ "go.etcd.io/etcd/etcdctl/v3"
	_ "go.etcd.io/etcd/etcdutl/v3"
)
