//go:build tools

// Package tools names the upstream commands built from this module, so that go.mod and go.sum pin them.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
