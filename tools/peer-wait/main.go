// Command peer-wait exits 0 once every name on its command line resolves, and 1 (with the reason in the
// termination log) if they do not within --timeout. It runs as the init container of each etcd member pod.
//
// Why: etcd's rafthttp marks a peer inactive after a single failed send and, while the streams to that peer
// stay up, nothing marks it active again (etcd-io/etcd#14523). During bootstrap that single failure is often
// a DNS lookup of a member whose record does not exist yet; the leader then refuses every later MemberAdd
// ("local member has not been connected to majority peers"). Starting etcd only after every peer name resolves
// takes that race away. The etcd images have no shell, hence a static binary in its own image.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The kubelet keeps at most 4096 bytes of a termination message.
const maxTerminationMessage = 4096

// How often, at most, a round that still has unresolved names is reported: every round (default 1 s) would
// drown the pod's log while DNS catches up, which is normal for the first seconds of a new cluster.
const reportEvery = 5 * time.Second

// lookupFunc resolves one name to its addresses; tests inject their own.
type lookupFunc func(ctx context.Context, name string) ([]string, error)

// failure is a name that did not resolve in a round, with the resolver's own words.
type failure struct {
	name string
	err  error
}

// roundResult is one check of every name.
type roundResult struct {
	resolved map[string][]string
	failed   []failure
}

// checkRound resolves every name concurrently (one slow lookup must not delay the others' verdict), each
// bounded by lookupTimeout, and returns failures in the order the names were given.
func checkRound(ctx context.Context, lookup lookupFunc, names []string, lookupTimeout time.Duration) roundResult {
	type answer struct {
		addrs []string
		err   error
	}
	answers := make([]answer, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lctx, cancel := context.WithTimeout(ctx, lookupTimeout)
			defer cancel()
			addrs, err := lookup(lctx, name)
			if err == nil && len(addrs) == 0 {
				// A resolver that answers with nothing has not given etcd anything to dial either.
				err = fmt.Errorf("lookup %s: no addresses", name)
			}
			answers[i] = answer{addrs, err}
		}()
	}
	wg.Wait()
	result := roundResult{resolved: map[string][]string{}}
	for i, name := range names {
		if answers[i].err != nil {
			result.failed = append(result.failed, failure{name, answers[i].err})
			continue
		}
		addrs := append([]string(nil), answers[i].addrs...)
		sort.Strings(addrs)
		result.resolved[name] = addrs
	}
	return result
}

// describe lists the failures as `name (error)`, the form the report lines and the termination log share.
func describe(failed []failure) string {
	parts := make([]string, len(failed))
	for i, f := range failed {
		parts[i] = fmt.Sprintf("%s (%v)", f.name, f.err)
	}
	return strings.Join(parts, ", ")
}

// seconds formats a duration as the flag was most likely written (`120s`, not Go's `2m0s`).
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// waiter holds everything wait() depends on, so that tests can drive it with a fake clock and resolver.
type waiter struct {
	names         []string
	timeout       time.Duration
	interval      time.Duration
	lookupTimeout time.Duration
	lookup        lookupFunc
	now           func() time.Time
	// sleep waits for d or until ctx is done.
	sleep func(ctx context.Context, d time.Duration)
	out   io.Writer
}

// errTimeout carries the one-line reason that goes to the termination log.
type errTimeout struct{ reason string }

func (e *errTimeout) Error() string { return e.reason }

// wait checks every name once per interval until all resolve (nil) or the timeout passes (*errTimeout).
func (w *waiter) wait(ctx context.Context) error {
	start := w.now()
	deadline := start.Add(w.timeout)
	var lastReport time.Time
	reported := false
	for round := 1; ; round++ {
		result := checkRound(ctx, w.lookup, w.names, w.lookupTimeout)
		now := w.now()
		if len(result.failed) == 0 {
			parts := make([]string, len(w.names))
			for i, name := range w.names {
				parts[i] = fmt.Sprintf("%s=%s", name, strings.Join(result.resolved[name], ","))
			}
			fmt.Fprintf(w.out, "peer-wait: all %d peer names resolve after %s (round %d): %s\n", len(w.names), now.Sub(start).Round(time.Millisecond), round, strings.Join(parts, " "))
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("peer-wait: stopped while waiting for %s: %w", describe(result.failed), ctx.Err())
		}
		if !now.Before(deadline) {
			return &errTimeout{reason: fmt.Sprintf("peer names did not resolve within %s: %s", seconds(w.timeout), describe(result.failed))}
		}
		if !reported || now.Sub(lastReport) >= reportEvery {
			fmt.Fprintf(w.out, "peer-wait: %d of %d peer names unresolved after %s (round %d): %s\n", len(result.failed), len(w.names), now.Sub(start).Round(time.Millisecond), round, describe(result.failed))
			lastReport, reported = now, true
		}
		// The last sleep ends at the deadline, so the final round runs on time rather than an interval late.
		w.sleep(ctx, min(w.interval, deadline.Sub(now)))
	}
}

// writeTerminationLog writes the reason where the kubelet reads it (`kubectl describe pod` shows it as the
// init container's last state). Outside a pod the file may not be writable; stderr has the reason anyway.
func writeTerminationLog(path, reason string) {
	if path == "" {
		return
	}
	if len(reason) > maxTerminationMessage {
		reason = reason[:maxTerminationMessage-3] + "..."
	}
	if err := os.WriteFile(path, []byte(reason), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "peer-wait: could not write the termination log %s: %v\n", path, err)
	}
}

func sleepContext(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func main() {
	// The pure Go resolver reads /etc/resolv.conf, so the pod's search domains and ndots apply exactly as they
	// do for etcd (also built without cgo). It keeps no cache: each round asks the DNS server again.
	resolver := &net.Resolver{PreferGo: true}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	code := run(ctx, os.Args[1:], resolver.LookupHost, time.Now, sleepContext, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command without its process: the exit code for these arguments, resolver and clock.
func run(ctx context.Context, args []string, lookup lookupFunc, now func() time.Time, sleep func(context.Context, time.Duration), stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("peer-wait", flag.ContinueOnError)
	flags.SetOutput(stderr)
	timeout := flags.Duration("timeout", 120*time.Second, "give up (exit 1) when the names do not all resolve within this long")
	memberDir := flags.String("member-dir", "", "etcd's member directory (<data-dir>/member); when it exists the member restarts on its own data, waits at most --restart-timeout and then starts anyway")
	restartTimeout := flags.Duration("restart-timeout", 10*time.Second, "the wait of a member restarting on its own data, after which etcd starts whatever did not resolve")
	interval := flags.Duration("interval", time.Second, "time between check rounds")
	terminationLog := flags.String("termination-log", "/dev/termination-log", "file for the reason of a timeout (the kubelet's terminationMessagePath); empty for none")
	flags.Usage = func() {
		fmt.Fprintln(flags.Output(), "usage: peer-wait [--timeout=120s] [--member-dir=DIR [--restart-timeout=10s]] [--interval=1s] [--termination-log=PATH] NAME...")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		return 2
	}
	names := flags.Args()
	if len(names) == 0 || *timeout <= 0 || *interval <= 0 || *restartTimeout <= 0 {
		flags.Usage()
		return 2
	}
	w := &waiter{
		names:    names,
		timeout:  *timeout,
		interval: *interval,
		// One lookup may not take longer than a report period, or a hung server would silence the log.
		lookupTimeout: reportEvery,
		lookup:        lookup,
		now:           now,
		sleep:         sleep,
		out:           stdout,
	}
	restarting := *memberDir != "" && exists(*memberDir)
	if restarting {
		w.timeout = min(w.timeout, *restartTimeout)
	}
	err := w.wait(ctx)
	if err == nil {
		return 0
	}
	var te *errTimeout
	if restarting && errors.As(err, &te) {
		// A restarting member takes its peers from its own data, not from these names, which were the members
		// when its pod was made: a member removed since has no DNS record ever again, and waiting for it would
		// keep this one down for good (the chaos suite found two of three members so after a node restart).
		fmt.Fprintf(stdout, "peer-wait: %s exists, so etcd restarts on its own data and its own member list; starting it now: %s\n", *memberDir, te.reason)
		return 0
	}
	fmt.Fprintf(stderr, "peer-wait: %v\n", err)
	if errors.As(err, &te) {
		writeTerminationLog(*terminationLog, te.reason)
	}
	return 1
}

// exists says whether path is there. A path it may not look into counts as there: only "no such file" is absence.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil || !errors.Is(err, os.ErrNotExist)
}
