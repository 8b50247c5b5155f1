// The controller-runtime side of the runtime.compare.* figures (packages/runtime/bench/compare.bench.ts): the
// same tiny controller as packages/runtime/bench/compare-child.ts, written with sigs.k8s.io/controller-runtime.
// It watches the ConfigMaps of one namespace with a no-op reconcile and 4 workers, and prints JSON lines on
// stdout (the protocol both children speak, see compare-protocol.ts):
//
//	{"event":"reconciled","objects":N,"sinceStartS":…}   every one of EXPECT "cm-" ConfigMaps reconciled once
//	{"event":"memory","rssBytes":…,"heapBytes":…}        then, after a GC: VmRSS and runtime.MemStats.HeapAlloc
//	{"event":"burst","updates":N,"seconds":…,"cpuSeconds":…}  with BURST > 0: BURST update events received and
//	                                                      every key they touched reconciled since
//
// Environment: KUBECONFIG, NAMESPACE, EXPECT, BURST, WORKERS (default 4).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// tally is what the bench observes of the controller; the reconcile itself does nothing else.
type tally struct {
	mu         sync.Mutex
	expect     int
	burst      int
	seen       map[string]struct{}
	reconciled chan struct{}
	// The burst: update events counted as they pass the predicate, keys waiting for a reconcile since.
	updates      int
	pending      map[string]struct{}
	firstUpdate  time.Time
	cpuAtFirst   time.Duration
	burstDone    chan burstResult
	burstClosed  bool
	reconciledOK bool
}

type burstResult struct {
	updates    int
	seconds    float64
	cpuSeconds float64
}

func newTally(expect, burst int) *tally {
	return &tally{expect: expect, burst: burst, seen: map[string]struct{}{}, pending: map[string]struct{}{}, reconciled: make(chan struct{}), burstDone: make(chan burstResult, 1)}
}

// onUpdate is called for every update event before it is enqueued.
func (t *tally) onUpdate(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.updates == 0 {
		t.firstUpdate = time.Now()
		t.cpuAtFirst = cpuTime()
	}
	t.updates++
	t.pending[key] = struct{}{}
}

// onReconcile is called at the start of every reconcile: it reads the state after every event before it.
func (t *tally) onReconcile(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// Every namespace also has kube-root-ca.crt: count only ours.
	if strings.HasPrefix(name, "cm-") {
		t.seen[name] = struct{}{}
	}
	if !t.reconciledOK && len(t.seen) >= t.expect {
		t.reconciledOK = true
		close(t.reconciled)
	}
	delete(t.pending, name)
	if t.burst > 0 && !t.burstClosed && t.updates >= t.burst && len(t.pending) == 0 {
		t.burstClosed = true
		t.burstDone <- burstResult{updates: t.updates, seconds: time.Since(t.firstUpdate).Seconds(), cpuSeconds: (cpuTime() - t.cpuAtFirst).Seconds()}
	}
}

func cpuTime() time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}

// vmRSS reads the resident set size from /proc/self/status, as the Node side's process.memoryUsage().rss.
func vmRSS() (int64, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	return parseVmRSS(string(status))
}

func parseVmRSS(status string) (int64, error) {
	for _, line := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmRSS %q: %w", rest, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS line in /proc/self/status")
}

func emit(fields map[string]any) {
	line, _ := json.Marshal(fields)
	fmt.Println(string(line))
}

func envInt(key string, fallback int) int {
	v, err := strconv.Atoi(os.Getenv(key))
	if err != nil {
		return fallback
	}
	return v
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "controller-runtime-compare:", err)
		os.Exit(1)
	}
}

func run() error {
	ctrl.SetLogger(logr.Discard())
	namespace := os.Getenv("NAMESPACE")
	if namespace == "" {
		return fmt.Errorf("NAMESPACE is required")
	}
	t := newTally(envInt("EXPECT", 0), envInt("BURST", 0))
	mgr, err := newManager(namespace, envInt("WORKERS", 4), t)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	failed := make(chan error, 1)
	go func() { failed <- mgr.Start(ctx) }()
	select {
	case <-t.reconciled:
	case err := <-failed:
		return fmt.Errorf("manager stopped before every object was reconciled: %v", err)
	}
	emit(map[string]any{"event": "reconciled", "objects": t.expect, "sinceStartS": time.Since(start).Seconds()})
	if err := emitMemory(); err != nil {
		return err
	}
	if t.burst > 0 {
		b := <-t.burstDone
		emit(map[string]any{"event": "burst", "updates": b.updates, "seconds": b.seconds, "cpuSeconds": b.cpuSeconds})
	}
	return nil
}

func newManager(namespace string, workers int, t *tally) (ctrl.Manager, error) {
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		// The Node side serves no metrics or probes either, and strips managedFields from what it caches.
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache: cache.Options{
			DefaultNamespaces: map[string]cache.Config{namespace: {}},
			DefaultTransform:  cache.TransformStripManagedFields(),
		},
	})
	if err != nil {
		return nil, err
	}
	counting := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		t.onUpdate(e.ObjectNew.GetName())
		return true
	}}
	noop := reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		t.onReconcile(req.Name)
		return reconcile.Result{}, nil
	})
	err = ctrl.NewControllerManagedBy(mgr).
		Named("noop").
		For(&corev1.ConfigMap{}).
		WithEventFilter(counting).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(noop)
	return mgr, err
}

// emitMemory reports after a full GC, as the Node side does with --expose-gc.
func emitMemory() error {
	runtime.GC()
	runtime.GC()
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	rss, err := vmRSS()
	if err != nil {
		return err
	}
	emit(map[string]any{"event": "memory", "rssBytes": rss, "heapBytes": stats.HeapAlloc})
	return nil
}
