package main

import (
	"testing"
	"time"
)

func TestParseVmRSS(t *testing.T) {
	rss, err := parseVmRSS("Name:\tx\nVmPeak:\t  9000 kB\nVmRSS:\t   66048 kB\nRssAnon:\t 1 kB\n")
	if err != nil || rss != 66048*1024 {
		t.Fatalf("parseVmRSS = %d, %v; want %d", rss, err, 66048*1024)
	}
	if _, err := parseVmRSS("Name:\tx\n"); err == nil {
		t.Fatal("parseVmRSS without a VmRSS line: want an error")
	}
}

func TestTallyReportsReconciledOnceEveryExpectedObjectIsSeen(t *testing.T) {
	tl := newTally(2, 0)
	tl.onReconcile("kube-root-ca.crt")
	tl.onReconcile("cm-0")
	tl.onReconcile("cm-0")
	select {
	case <-tl.reconciled:
		t.Fatal("reconciled with one of two objects seen")
	default:
	}
	tl.onReconcile("cm-1")
	select {
	case <-tl.reconciled:
	case <-time.After(time.Second):
		t.Fatal("not reconciled with both objects seen")
	}
	tl.onReconcile("cm-2") // a second close would panic
}

func TestTallyEndsTheBurstWhenEveryUpdatedKeyIsReconciledAfterItsEvent(t *testing.T) {
	tl := newTally(0, 3)
	tl.onUpdate("cm-0")
	tl.onUpdate("cm-1")
	tl.onReconcile("cm-0")
	tl.onUpdate("cm-0") // after its reconcile began: pending again
	tl.onReconcile("cm-1")
	select {
	case <-tl.burstDone:
		t.Fatal("burst done with cm-0 still pending")
	default:
	}
	tl.onReconcile("cm-0")
	select {
	case b := <-tl.burstDone:
		if b.updates != 3 {
			t.Fatalf("burst updates = %d, want 3", b.updates)
		}
	case <-time.After(time.Second):
		t.Fatal("burst not done with every key reconciled")
	}
}
