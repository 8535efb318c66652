// Package work runs a parsed workload on the calling goroutine. `par(...)` is Go's fan-out: an
// errgroup.Group with one goroutine per child (E5's "errgroup over blocking calls"); the
// single-threaded models run the children in order instead, and thread-per-request gives each
// child a goroutine locked to an OS thread of its own.
package work

import (
	"context"
	"math"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"iolab/runtimes/go/internal/backends"
	"iolab/runtimes/go/internal/contract"
	"iolab/runtimes/go/internal/steps"
)

// Par says how par(...) children run.
type Par int

// The ways to run par(...) children.
const (
	// Goroutines: an errgroup, one goroutine per child.
	Goroutines Par = iota
	// InOrder: one after another on the calling goroutine.
	InOrder
	// LockedThreads: one goroutine per child, each locked to an OS thread that ends with it.
	LockedThreads
)

// Runner runs workloads.
type Runner struct {
	Backends *backends.Backends
	Par      Par
	// Sleep is how a sleep step waits.
	Sleep func(time.Duration)
}

// GoSleep parks the goroutine on a runtime timer: no OS thread waits.
func GoSleep(d time.Duration) { time.Sleep(d) }

// ThreadSleep waits in the nanosleep system call, holding the calling OS thread, as C or a JNI
// call would (the Go scheduler hands the thread's P to another thread meanwhile).
func ThreadSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	for {
		var left syscall.Timespec
		if err := syscall.Nanosleep(&ts, &left); err != syscall.EINTR {
			return
		}
		ts = left
	}
}

// Run runs `s`; the value of the last mc step fetched, in written order, or nil.
func (r *Runner) Run(ctx context.Context, s steps.Step) ([]byte, error) {
	switch s.Op {
	case steps.CPU:
		Leibniz(s.Terms)
		return nil, nil
	case steps.IO:
		return r.Backends.Call(ctx, s, r.Sleep)
	case steps.Seq:
		var last []byte
		for _, c := range s.Children {
			v, err := r.Run(ctx, c)
			if err != nil {
				return nil, err
			}
			if v != nil {
				last = v
			}
		}
		return last, nil
	}
	values := make([][]byte, len(s.Children))
	errs := make([]error, len(s.Children))
	child := func(i int) {
		defer func() {
			if p := recover(); p != nil {
				errs[i] = contract.Errorf(500, "a par(...) child failed: %v", p)
			}
		}()
		values[i], errs[i] = r.Run(ctx, s.Children[i])
	}
	switch r.Par {
	case InOrder:
		for i := range s.Children {
			child(i)
		}
	case Goroutines:
		var g errgroup.Group
		for i := range s.Children {
			g.Go(func() error { child(i); return nil })
		}
		_ = g.Wait()
	case LockedThreads:
		var g errgroup.Group
		for i := range s.Children {
			g.Go(func() error {
				runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
				child(i)
				return nil
			})
		}
		_ = g.Wait()
	}
	return firstError(values, errs)
}

// firstError: in written order, the first child's error wins; without one, the last value.
func firstError(values [][]byte, errs []error) ([]byte, error) {
	var last []byte
	for i, err := range errs {
		if err != nil {
			return nil, err
		}
		if values[i] != nil {
			last = values[i]
		}
	}
	return last, nil
}

// Leibniz computes `terms` terms of the Leibniz series for pi (crates/model/src/cpu.rs).
func Leibniz(terms uint64) float64 {
	acc, sign := 0.0, 4.0
	for i := uint64(0); i < terms; i++ {
		acc += sign / float64(2*i+1)
		sign = -sign
	}
	sink.Store(math.Float64bits(acc))
	return acc
}

// sink keeps the series from being optimised away.
var sink atomic.Uint64
