// Package models is the Go runtime's models, each what it is in Go terms, with the iolab knobs it
// reads and the defaults of the real system (runtime.toml says the same; a test checks they
// agree):
//
//   - virtual: net/http's goroutine per connection, handlers written blocking (time.Sleep, pgx,
//     net/http's client, a memcached client); a waiting goroutine is parked on a timer or the
//     netpoller and holds no OS thread. GOMAXPROCS (`workers`) threads run goroutines.
//   - pool: N worker goroutines fed by a bounded channel (`threads`, `backlog` its capacity);
//     a request that finds the channel full is answered 503.
//   - thread-per-request: each request on a new goroutine locked to its OS thread
//     (runtime.LockOSThread, never unlocked, so the thread ends with it) and sleeping in the
//     nanosleep system call: every waiting request holds an OS thread.
//   - sequential: one connection at a time (netutil.LimitListener(ln, 1), Connection: close),
//     par(...) in order.
//   - prefork: `processes` processes listening on one port with SO_REUSEPORT, each GOMAXPROCS=1
//     and sequential.
//
// What Go cannot express: loop-blocking (the scheduler never lets a blocking call stall the
// other goroutines: a blocked system call's P is handed to another thread, a parked goroutine
// frees its thread), loop-offload (there is no loop to offload from: every goroutine already
// waits off the scheduler's threads) and loop-async as a separate model (the netpoller is the
// event loop under every blocking call; `virtual` is what loop-async is in Go).
package models

import (
	"runtime"
	"slices"
	"sort"
)

// Model is one model the Go runtime serves.
type Model struct {
	Name  string
	About string
	// Knobs it reads, beyond none.
	Knobs []string
	// Defaults of the knobs on a machine of `cores` cores (only knobs it reads; a knob with no
	// entry has no limit unless set).
	Defaults func(cores int) map[string]int
}

// Knobs every model reads: the backends' pools.
var pools = []string{"pg_pool", "mc_pool"}

// pgxDefault is pgxpool's own default pool size: max(4, runtime.NumCPU()), the CPUs the
// process may run on (not GOMAXPROCS).
func pgxDefault(cores int) int { return max(4, cores) }

// ThreadsCap is thread-per-request's default cap: below the Go runtime's own limit of 10,000
// OS threads (debug.SetMaxThreads), past which it aborts the process.
const ThreadsCap = 9000

// Backlog is the listen backlog Go's net.Listen asks for: net.core.somaxconn, 4096 on a
// current kernel.
const Backlog = 4096

// All models, in the order of runtime.toml.
var All = []Model{
	{
		Name:  "virtual",
		About: "net/http: a goroutine per connection, blocking-style handlers parked on the netpoller; GOMAXPROCS = workers",
		Knobs: append([]string{"workers", "max_connections", "backlog"}, pools...),
		Defaults: func(c int) map[string]int {
			return map[string]int{"workers": c, "backlog": Backlog, "pg_pool": pgxDefault(c), "mc_pool": 1}
		},
	},
	{
		Name:  "pool",
		About: "`threads` worker goroutines fed by a jobs channel of capacity `backlog`; full: 503",
		Knobs: append([]string{"threads", "backlog", "max_connections", "workers"}, pools...),
		Defaults: func(c int) map[string]int {
			return map[string]int{"threads": 200, "backlog": 100, "workers": c, "pg_pool": pgxDefault(c), "mc_pool": 1}
		},
	},
	{
		Name:  "thread-per-request",
		About: "each request on a goroutine locked to its own OS thread (LockOSThread), sleeping in nanosleep; at most max_threads, then 503",
		Knobs: append([]string{"max_threads", "backlog", "workers"}, pools...),
		Defaults: func(c int) map[string]int {
			return map[string]int{"max_threads": ThreadsCap, "backlog": Backlog, "workers": c, "pg_pool": pgxDefault(c), "mc_pool": 1}
		},
	},
	{
		Name:  "sequential",
		About: "one connection at a time (netutil.LimitListener 1, Connection: close), par() in order",
		Knobs: append([]string{"backlog"}, pools...),
		Defaults: func(c int) map[string]int {
			return map[string]int{"backlog": Backlog, "pg_pool": pgxDefault(c), "mc_pool": 1}
		},
	},
	{
		Name:  "prefork",
		About: "`processes` processes on one port (SO_REUSEPORT), each GOMAXPROCS=1 and sequential",
		Knobs: append([]string{"processes", "backlog"}, pools...),
		Defaults: func(c int) map[string]int {
			// Each process has its own pool; pgxpool sizes it by NumCPU, not GOMAXPROCS.
			return map[string]int{"processes": c, "backlog": Backlog, "pg_pool": pgxDefault(c), "mc_pool": 1}
		},
	},
}

// Find is the model called name.
func Find(name string) (Model, bool) {
	for _, m := range All {
		if m.Name == name {
			return m, true
		}
	}
	return Model{}, false
}

// Names lists the models, for messages.
func Names() []string {
	out := make([]string, len(All))
	for i, m := range All {
		out[i] = m.Name
	}
	return out
}

// Reads reports whether the model reads knob k.
func (m Model) Reads(k string) bool { return slices.Contains(m.Knobs, k) }

// UsersOf lists the models that read knob k.
func UsersOf(k string) []string {
	var out []string
	for _, m := range All {
		if m.Reads(k) {
			out = append(out, m.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Cores is what the Go runtime sizes itself by: runtime.NumCPU, the CPUs this process may run on
// (its affinity mask, read at start).
func Cores() int { return runtime.NumCPU() }

// AllKnobs are iolab's knob names (crates/model/src/knob.rs), in its order.
var AllKnobs = []string{"threads", "max_connections", "backlog", "workers", "offload", "max_threads", "processes", "mc_pool", "pg_pool"}
