package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func TestLookupReportsAddressesAndExitsZero(t *testing.T) {
	var out, errOut bytes.Buffer
	resolve := func(_ context.Context, name string) ([]string, error) { return []string{"10.0.0.2", "10.0.0.1"}, nil }
	if code := lookup("m.c.ns.svc", resolve, &out, &errOut); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	if want := "Name:      m.c.ns.svc\nAddress 1: 10.0.0.1\nAddress 2: 10.0.0.2\n"; out.String() != want {
		t.Fatalf("stdout %q, want %q", out.String(), want)
	}
}

func TestLookupFailsOnErrorOrNoAddresses(t *testing.T) {
	for _, resolve := range []func(context.Context, string) ([]string, error){
		func(context.Context, string) ([]string, error) { return nil, errors.New("no such host") },
		func(context.Context, string) ([]string, error) { return nil, nil },
	} {
		var out, errOut bytes.Buffer
		if code := lookup("x", resolve, &out, &errOut); code != 1 {
			t.Fatalf("exit %d, want 1", code)
		}
		if !strings.Contains(errOut.String(), "can't resolve 'x'") {
			t.Fatalf("stderr %q", errOut.String())
		}
	}
}
