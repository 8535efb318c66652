package models

import (
	"fmt"
	"net"
	"runtime"
	"runtime/debug"

	"golang.org/x/net/netutil"

	"iolab/runtimes/go/internal/backends"
	"iolab/runtimes/go/internal/counters"
	"iolab/runtimes/go/internal/server"
	"iolab/runtimes/go/internal/work"
)

// Serving is a model made ready in this process: the listener to serve (perhaps wrapped) and
// the contract's handler.
type Serving struct {
	Listener net.Listener
	Server   *server.Server
	// KeepAlive is false for the one-connection-at-a-time models.
	KeepAlive bool
	// Stop ends the model's own goroutines (a pool's workers) once nothing is served.
	Stop func()
}

// Prepare sets the model up in this process on `ln` with its effective knobs. prefork's
// processes each prepare "sequential" with GOMAXPROCS 1 (the launcher starts them).
func Prepare(m Model, knobs map[string]int, ln net.Listener, b *backends.Backends, c *counters.Counters) (*Serving, error) {
	s := &Serving{
		Listener:  ln,
		KeepAlive: true,
		Stop:      func() {},
		Server: &server.Server{
			Model:    m.Name,
			Counters: c,
			Backends: b,
			Runner:   &work.Runner{Backends: b, Par: work.Goroutines, Sleep: work.GoSleep},
			Exec:     func(job func()) string { job(); return "" },
		},
	}
	if w, ok := knobs["workers"]; ok {
		runtime.GOMAXPROCS(w)
	}
	if n, ok := knobs["max_connections"]; ok {
		s.Listener = netutil.LimitListener(ln, n)
	}
	switch m.Name {
	case "virtual":
	case "pool":
		s.Server.Exec, s.Stop = pool(knobs["threads"], knobs["backlog"], c)
	case "thread-per-request":
		s.Server.Exec = lockedThreads(knobs["max_threads"])
		s.Server.Runner.Par = work.LockedThreads
		s.Server.Runner.Sleep = work.ThreadSleep
	case "sequential", "prefork":
		if m.Name == "prefork" {
			runtime.GOMAXPROCS(1)
		}
		s.Listener = netutil.LimitListener(ln, 1)
		s.KeepAlive = false
		s.Server.Close = true
		s.Server.Runner.Par = work.InOrder
	default:
		return nil, fmt.Errorf("model '%s' has no server here", m.Name)
	}
	return s, nil
}

// pool: `threads` worker goroutines take jobs from a channel of capacity `backlog`, in order; a
// job that finds it full is refused. The connection's goroutine waits for its job's answer.
func pool(threads, backlog int, c *counters.Counters) (server.Exec, func()) {
	type job struct {
		run  func()
		done chan struct{}
	}
	jobs := make(chan job, backlog)
	for range threads {
		go func() {
			for j := range jobs {
				c.Queue(-1)
				j.run()
				close(j.done)
			}
		}()
	}
	exec := func(run func()) string {
		j := job{run, make(chan struct{})}
		c.Queue(1)
		select {
		case jobs <- j:
		default:
			c.Queue(-1)
			return fmt.Sprintf("pool: %d workers busy and %d jobs queued (--backlog %d)", threads, backlog, backlog)
		}
		<-j.done
		return ""
	}
	return exec, func() { close(jobs) }
}

// lockedThreads runs each job on a new goroutine locked to its OS thread and never unlocked, so
// the thread ends with the job: a thread per request, at most `limit` at once, then refused.
func lockedThreads(limit int) server.Exec {
	// The runtime's own cap on OS threads (10,000 by default) aborts the process when passed:
	// leave room above the requests' threads for par() children and the runtime's own.
	debug.SetMaxThreads(max(10_000, limit+1_000))
	slots := make(chan struct{}, limit)
	return func(run func()) string {
		select {
		case slots <- struct{}{}:
		default:
			return fmt.Sprintf("thread-per-request: --max-threads %d reached", limit)
		}
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			defer func() { <-slots; close(done) }()
			run()
		}()
		<-done
		return ""
	}
}
