// Package counters holds the /metrics numbers of one target, shared by every process of it
// through a small mmap'd file: prefork runs N server processes, a scrape may land on any of them
// (or on the launcher's metrics listener), so each process adds to its own row with atomic
// operations and a reader sums the rows. Row 0 is the launcher's (the only row of a
// single-process model); row i is prefork child i.
package counters

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"unsafe"

	"iolab/runtimes/go/internal/steps"
)

// Slots of one row (int64 each).
const (
	slotPid = iota
	slotInFlight
	slotQueued
	slotCompleted
	slotRejected
	slotCalls // + index of the kind in steps.Kinds
	slots     = 16
)

// Counters is one process's view of the target's shared counters.
type Counters struct {
	mem  []byte
	rows int
	row  int
}

// Create makes the file at path with `rows` rows and maps it; this process writes row 0.
func Create(path string, rows int) (*Counters, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := f.Truncate(int64(rows * slots * 8)); err != nil {
		return nil, err
	}
	return mapFile(f, rows, 0)
}

// Open maps the file a launcher made; this process writes row `row`.
func Open(path string, row int) (*Counters, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	rows := int(st.Size()) / (slots * 8)
	if row < 0 || row >= rows {
		return nil, fmt.Errorf("counters file %s has %d rows, not row %d", path, rows, row)
	}
	return mapFile(f, rows, row)
}

func mapFile(f *os.File, rows, row int) (*Counters, error) {
	mem, err := syscall.Mmap(int(f.Fd()), 0, rows*slots*8, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	c := &Counters{mem: mem, rows: rows, row: row}
	c.slot(row, slotPid).Store(int64(os.Getpid()))
	return c, nil
}

// Private is a single row in this process's memory (tests, batches).
func Private() *Counters {
	c := &Counters{mem: make([]byte, slots*8), rows: 1}
	c.slot(0, slotPid).Store(int64(os.Getpid()))
	return c
}

func (c *Counters) slot(row, s int) *atomic.Int64 {
	return (*atomic.Int64)(unsafe.Pointer(&c.mem[(row*slots+s)*8]))
}

func (c *Counters) add(s int, d int64) { c.slot(c.row, s).Add(d) }

// Begin counts a /work request in flight; End takes it out and counts it completed.
func (c *Counters) Begin() { c.add(slotInFlight, 1) }

// End: a /work request answered (whatever its status).
func (c *Counters) End() {
	c.add(slotInFlight, -1)
	c.add(slotCompleted, 1)
}

// Queue moves the queued gauge by d (a pool's jobs channel).
func (c *Counters) Queue(d int64) { c.add(slotQueued, d) }

// Reject counts a request refused with 503 because no worker or thread could be had.
func (c *Counters) Reject() { c.add(slotRejected, 1) }

// Call counts one backend call of `kind`.
func (c *Counters) Call(kind string) {
	for i, k := range steps.Kinds {
		if k == kind {
			c.add(slotCalls+i, 1)
			return
		}
	}
}

// Zero resets every row's counters and gauges (after the warm-up, which is over).
func (c *Counters) Zero() {
	for r := 0; r < c.rows; r++ {
		for s := slotInFlight; s < slots; s++ {
			c.slot(r, s).Store(0)
		}
	}
}

// Pids are the processes that registered a row.
func (c *Counters) Pids() []int {
	var out []int
	for r := 0; r < c.rows; r++ {
		if p := c.slot(r, slotPid).Load(); p > 0 {
			out = append(out, int(p))
		}
	}
	return out
}

// Registered is the number of rows whose process has started.
func (c *Counters) Registered() int { return len(c.Pids()) }

func (c *Counters) sum(s int) int64 {
	var n int64
	for r := 0; r < c.rows; r++ {
		n += c.slot(r, s).Load()
	}
	return n
}

// Snapshot is the target's numbers, summed over its processes.
type Snapshot struct {
	InFlight, Queued, Completed, Rejected int64
	Calls                                 []int64 // by steps.Kinds
	Threads, Processes                    int
}

// Snapshot sums every row; threads are read from /proc.
func (c *Counters) Snapshot() Snapshot {
	s := Snapshot{
		InFlight:  max(c.sum(slotInFlight), 0),
		Queued:    max(c.sum(slotQueued), 0),
		Completed: c.sum(slotCompleted),
		Rejected:  c.sum(slotRejected),
	}
	for i := range steps.Kinds {
		s.Calls = append(s.Calls, c.sum(slotCalls+i))
	}
	for _, p := range c.Pids() {
		if n := threadsOf(p); n > 0 {
			s.Threads += n
			s.Processes++
		}
	}
	return s
}

// threadsOf counts the live OS threads of one process (its /proc/PID/task entries; 0 if gone).
func threadsOf(pid int) int {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0
	}
	return len(entries)
}

// Render is /metrics as Prometheus text (format 0.0.4), with the Rust targets' names.
func (c *Counters) Render() []byte {
	s := c.Snapshot()
	var b strings.Builder
	metric := func(name, kind, help string, v int64) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s %d\n", name, help, name, kind, name, v)
	}
	metric("iolab_requests_in_flight", "gauge", "/work requests executing now.", s.InFlight)
	metric("iolab_requests_queued", "gauge", "Requests waiting in the pool's jobs channel for a worker goroutine.", s.Queued)
	metric("iolab_requests_completed_total", "counter", "/work requests answered, whatever the status, except overload rejections.", s.Completed)
	metric("iolab_requests_rejected_total", "counter", "Requests refused with 503 because no worker goroutine or thread could be had.", s.Rejected)
	metric("iolab_threads", "gauge", "Live OS threads of the target's processes.", int64(s.Threads))
	metric("iolab_processes", "gauge", "Live processes of the target (the launcher and prefork's children).", int64(s.Processes))
	b.WriteString("# HELP iolab_backend_calls_total Backend calls made, by kind.\n# TYPE iolab_backend_calls_total counter\n")
	for i, k := range steps.Kinds {
		fmt.Fprintf(&b, "iolab_backend_calls_total{kind=\"%s\"} %d\n", k, s.Calls[i])
	}
	return []byte(b.String())
}
