package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeDNS answers from a table that changes with the (fake) time, as records appear while pods start.
type fakeDNS struct {
	clock *fakeClock
	// appearsAt: when each name starts resolving; names absent never resolve.
	appearsAt map[string]time.Duration
	calls     map[string]int
	// checkRound looks names up concurrently.
	mu sync.Mutex
}

func (d *fakeDNS) lookup(_ context.Context, name string) ([]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls[name]++
	if at, ok := d.appearsAt[name]; ok && d.clock.elapsed() >= at {
		return []string{"10.0.0.2", "10.0.0.1"}, nil
	}
	return nil, errors.New("lookup " + name + " on 10.0.0.10:53: no such host")
}

type fakeClock struct{ start, t time.Time }

func (c *fakeClock) now() time.Time                           { return c.t }
func (c *fakeClock) elapsed() time.Duration                   { return c.t.Sub(c.start) }
func (c *fakeClock) sleep(_ context.Context, d time.Duration) { c.t = c.t.Add(d) }

func newWaiter(dns *fakeDNS, clock *fakeClock, out *bytes.Buffer, names ...string) *waiter {
	return &waiter{names: names, timeout: 120 * time.Second, interval: time.Second, lookupTimeout: time.Second, lookup: dns.lookup, now: clock.now, sleep: clock.sleep, out: out}
}

func setup() (*fakeClock, *fakeDNS) {
	t0 := time.Unix(1_700_000_000, 0)
	clock := &fakeClock{start: t0, t: t0}
	return clock, &fakeDNS{clock: clock, appearsAt: map[string]time.Duration{}, calls: map[string]int{}}
}

func TestCheckRoundKeepsOrderAndErrors(t *testing.T) {
	_, dns := setup()
	dns.appearsAt["a.c1.ns.svc"] = 0
	r := checkRound(context.Background(), dns.lookup, []string{"c.c1.ns.svc", "a.c1.ns.svc", "b.c1.ns.svc"}, time.Second)
	if len(r.failed) != 2 || r.failed[0].name != "c.c1.ns.svc" || r.failed[1].name != "b.c1.ns.svc" {
		t.Fatalf("failed = %+v, want c then b", r.failed)
	}
	if got := strings.Join(r.resolved["a.c1.ns.svc"], ","); got != "10.0.0.1,10.0.0.2" {
		t.Fatalf("resolved = %v, want two sorted addresses", got)
	}
	if want := "c.c1.ns.svc (lookup c.c1.ns.svc on 10.0.0.10:53: no such host), b.c1.ns.svc (lookup b.c1.ns.svc on 10.0.0.10:53: no such host)"; describe(r.failed) != want {
		t.Fatalf("describe = %q, want %q", describe(r.failed), want)
	}
}

func TestCheckRoundEmptyAnswerIsAFailure(t *testing.T) {
	empty := func(context.Context, string) ([]string, error) { return nil, nil }
	r := checkRound(context.Background(), empty, []string{"x"}, time.Second)
	if len(r.failed) != 1 || !strings.Contains(r.failed[0].err.Error(), "no addresses") {
		t.Fatalf("failed = %+v", r.failed)
	}
}

func TestCheckRoundBoundsEachLookup(t *testing.T) {
	hang := func(ctx context.Context, name string) ([]string, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	start := time.Now()
	r := checkRound(context.Background(), hang, []string{"a", "b"}, 20*time.Millisecond)
	if len(r.failed) != 2 || !errors.Is(r.failed[0].err, context.DeadlineExceeded) {
		t.Fatalf("failed = %+v", r.failed)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatal("lookups were not bounded (or ran one after another)")
	}
}

func TestWaitSucceedsOnceEveryNameResolves(t *testing.T) {
	clock, dns := setup()
	dns.appearsAt["c1-0.c1.bar.svc"] = 0
	dns.appearsAt["c1-1.c1.bar.svc"] = 12 * time.Second
	dns.appearsAt["c1-2.c1.bar.svc"] = 3 * time.Second
	var out bytes.Buffer
	if err := newWaiter(dns, clock, &out, "c1-0.c1.bar.svc", "c1-1.c1.bar.svc", "c1-2.c1.bar.svc").wait(context.Background()); err != nil {
		t.Fatalf("wait: %v", err)
	}
	if clock.elapsed() != 12*time.Second {
		t.Fatalf("returned after %s, want as soon as the last name resolves (12s)", clock.elapsed())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// Rounds at 0..11 s are unresolved; reports at 0, 5 and 10 s only, then the success line.
	if len(lines) != 4 {
		t.Fatalf("want 3 progress lines and 1 success line, got:\n%s", out.String())
	}
	if !strings.Contains(lines[0], "2 of 3 peer names unresolved") || !strings.Contains(lines[0], "c1-1.c1.bar.svc (lookup c1-1.c1.bar.svc on 10.0.0.10:53: no such host)") {
		t.Fatalf("first report: %s", lines[0])
	}
	if !strings.Contains(lines[1], "1 of 3") || !strings.Contains(lines[1], "after 5s") || !strings.Contains(lines[2], "after 10s") {
		t.Fatalf("reports are not every 5 s:\n%s", out.String())
	}
	if !strings.Contains(lines[3], "all 3 peer names resolve") || !strings.Contains(lines[3], "c1-1.c1.bar.svc=10.0.0.1,10.0.0.2") {
		t.Fatalf("success line: %s", lines[3])
	}
}

func TestWaitResolvedAtOncePrintsOnlySuccess(t *testing.T) {
	clock, dns := setup()
	dns.appearsAt["a"] = 0
	var out bytes.Buffer
	if err := newWaiter(dns, clock, &out, "a").wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if strings.Count(out.String(), "\n") != 1 || !strings.Contains(out.String(), "round 1") {
		t.Fatalf("output: %q", out.String())
	}
}

func TestWaitTimesOutWithTheReason(t *testing.T) {
	clock, dns := setup()
	dns.appearsAt["c1-0.c1.bar.svc"] = 0
	var out bytes.Buffer
	w := newWaiter(dns, clock, &out, "c1-0.c1.bar.svc", "c1-1.c1.bar.svc")
	w.interval = 7 * time.Second
	err := w.wait(context.Background())
	var te *errTimeout
	if !errors.As(err, &te) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	want := "peer names did not resolve within 120s: c1-1.c1.bar.svc (lookup c1-1.c1.bar.svc on 10.0.0.10:53: no such host)"
	if te.reason != want {
		t.Fatalf("reason = %q\nwant     %q", te.reason, want)
	}
	// The last sleep is cut short so that the final round happens at the deadline, not after it.
	if clock.elapsed() != 120*time.Second {
		t.Fatalf("gave up after %s, want 120s", clock.elapsed())
	}
	// 7 s rounds: every round is at least 5 s after the previous report, so each one is reported.
	if n := strings.Count(out.String(), "unresolved"); n != 18 {
		t.Fatalf("%d reports, want 18 (rounds at 0, 7, …, 119 s):\n%s", n, out.String())
	}
}

func TestWaitStopsWhenCancelled(t *testing.T) {
	clock, dns := setup()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	err := newWaiter(dns, clock, &out, "a").wait(ctx)
	var te *errTimeout
	if err == nil || errors.As(err, &te) {
		t.Fatalf("err = %v, want a non-timeout error", err)
	}
}

func TestSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{120 * time.Second: "120s", 1500 * time.Millisecond: "1.5s", time.Minute: "60s"} {
		if got := seconds(d); got != want {
			t.Errorf("seconds(%s) = %s, want %s", d, got, want)
		}
	}
}

func TestWriteTerminationLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "termination-log")
	writeTerminationLog(path, "peer names did not resolve within 1s: x (boom)")
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "peer names did not resolve within 1s: x (boom)" {
		t.Fatalf("read %q, %v", got, err)
	}
	writeTerminationLog(path, strings.Repeat("x", 5000))
	got, _ = os.ReadFile(path)
	if len(got) != maxTerminationMessage {
		t.Fatalf("%d bytes written, want the kubelet's limit %d", len(got), maxTerminationMessage)
	}
	// An unwritable path (not in a pod) is reported, not fatal.
	writeTerminationLog(filepath.Join(t.TempDir(), "missing", "log"), "x")
}

func TestRunRestartingOnItsOwnDataStartsAfterTheRestartTimeout(t *testing.T) {
	// c1-5 was a member when the pod was made and has been removed since: its name never resolves again.
	clock, dns := setup()
	dns.appearsAt["c1-0.c1.bar.svc"] = 0
	memberDir := existingMemberDir(t)
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"--member-dir=" + memberDir, "--termination-log=", "c1-0.c1.bar.svc", "c1-5.c1.bar.svc"}, dns.lookup, clock.now, clock.sleep, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d, want 0; stderr: %s", code, errOut.String())
	}
	if clock.elapsed() != 10*time.Second {
		t.Fatalf("started after %s, want the restart timeout of 10s", clock.elapsed())
	}
	if !strings.Contains(out.String(), "exists, so etcd restarts on its own data and its own member list; starting it now: peer names did not resolve within 10s: c1-5.c1.bar.svc") {
		t.Fatalf("no reason given:\n%s", out.String())
	}
}

func TestRunNewMemberStillWaitsForEveryNameAndFails(t *testing.T) {
	// No member directory yet: a member's first start, where etcd dials the names it was given.
	clock, dns := setup()
	dns.appearsAt["c1-0.c1.bar.svc"] = 0
	dir := t.TempDir()
	logPath := filepath.Join(dir, "termination-log")
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"--member-dir=" + filepath.Join(dir, "member"), "--termination-log=" + logPath, "c1-0.c1.bar.svc", "c1-5.c1.bar.svc"}, dns.lookup, clock.now, clock.sleep, &out, &errOut)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if clock.elapsed() != 120*time.Second {
		t.Fatalf("gave up after %s, want 120s", clock.elapsed())
	}
	reason, _ := os.ReadFile(logPath)
	if !strings.HasPrefix(string(reason), "peer names did not resolve within 120s: c1-5.c1.bar.svc") {
		t.Fatalf("termination log %q", reason)
	}
}

func TestRunRestartingWhenEveryNameResolvesStartsAtOnce(t *testing.T) {
	clock, dns := setup()
	dns.appearsAt["c1-0.c1.bar.svc"] = 0
	memberDir := existingMemberDir(t)
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"--member-dir=" + memberDir, "c1-0.c1.bar.svc"}, dns.lookup, clock.now, clock.sleep, &out, &errOut); code != 0 || clock.elapsed() != 0 {
		t.Fatalf("exit %d after %s, want 0 at once", code, clock.elapsed())
	}
}

// existingMemberDir makes the member directory etcd leaves behind, as on a member that ran before.
func existingMemberDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "member")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}
