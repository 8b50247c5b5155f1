//go:build tools

// Package tools names the upstream command built from this module, so that go.mod and go.sum pin it.
package tools

import _ "github.com/coreos/etcd-operator/cmd/operator"
