package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeEtcdutl stands in for etcdutl's file effect only: it creates the --data-dir it is given, as etcdutl does.
func fakeEtcdutl(fail bool, calls *[][]string) runner {
	return func(name string, args []string) ([]byte, error) {
		*calls = append(*calls, append([]string{name}, args...))
		for _, a := range args {
			if dir, ok := strings.CutPrefix(a, "--data-dir="); ok {
				if err := os.MkdirAll(filepath.Join(dir, "member", "snap"), 0o700); err != nil {
					return nil, err
				}
			}
		}
		if fail {
			return []byte("Error: snapshot file integrity check failed"), errors.New("exit status 1")
		}
		return nil, nil
	}
}

func TestRestoreOnceThenSkip(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "snapshot.db")
	data := filepath.Join(dir, "data")
	if err := os.WriteFile(snap, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	var calls [][]string
	if _, err := restore(snap, data, []string{"etcdutl", "snapshot", "restore", snap, "--name=m"}, fakeEtcdutl(false, &calls)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(data, "member")); err != nil {
		t.Fatalf("data dir not in place: %v", err)
	}
	if _, err := os.Stat(snap); !os.IsNotExist(err) {
		t.Fatal("the snapshot should be deleted after a restore")
	}
	if got := calls[0][len(calls[0])-1]; got != "--data-dir="+data+".restoring" {
		t.Fatalf("etcdutl must write a scratch dir, got %s", got)
	}
	// A second run (the pod's sandbox recreated) changes nothing, even without a snapshot.
	msg, err := restore(snap, data, []string{"etcdutl"}, fakeEtcdutl(false, &calls))
	if err != nil || !strings.Contains(msg, "nothing to do") || len(calls) != 1 {
		t.Fatalf("second run: %q %v %d calls", msg, err, len(calls))
	}
}

func TestRefusedSnapshotLeavesNoDataDir(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "snapshot.db")
	data := filepath.Join(dir, "data")
	_ = os.WriteFile(snap, []byte("x"), 0o600)
	// A scratch dir from an interrupted attempt is cleared first.
	_ = os.MkdirAll(data+".restoring/member", 0o700)
	var calls [][]string
	_, err := restore(snap, data, []string{"etcdutl", "snapshot", "restore", snap}, fakeEtcdutl(true, &calls))
	if err == nil || !strings.Contains(err.Error(), "integrity check failed") {
		t.Fatalf("want etcdutl's refusal, got %v", err)
	}
	for _, p := range []string{data, data + ".restoring"} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s must not exist after a refused restore", p)
		}
	}
}

func TestMissingSnapshot(t *testing.T) {
	dir := t.TempDir()
	var calls [][]string
	_, err := restore(filepath.Join(dir, "none.db"), filepath.Join(dir, "data"), []string{"etcdutl"}, fakeEtcdutl(false, &calls))
	if err == nil || !strings.Contains(err.Error(), "is missing") || len(calls) != 0 {
		t.Fatalf("got %v, %d calls", err, len(calls))
	}
}
