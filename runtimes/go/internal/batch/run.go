package batch

import (
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"iolab/runtimes/go/internal/work"
)

// timings hold every call's start and end, in ns since the batch start (+1; 0: not yet).
type timings struct {
	start time.Time
	slots []atomic.Int64
}

func (t *timings) now() int64  { return time.Since(t.start).Nanoseconds() + 1 }
func (t *timings) begin(i int) { t.slots[2*i].Store(t.now()) }
func (t *timings) end(i int)   { t.slots[2*i+1].Store(t.now()) }
func (t *timings) span(i int) (int64, int64, bool) {
	s, e := t.slots[2*i].Load(), t.slots[2*i+1].Load()
	return s - 1, e - 1, s != 0 && e != 0
}

// call is one blocking call: the service's wait on the goroutine (parked on a timer).
func call(t *timings, i int, d time.Duration) {
	t.begin(i)
	time.Sleep(d)
	t.end(i)
}

func run(p *Plan, cancel *atomic.Bool) map[string]any {
	runtime.GOMAXPROCS(p.Knobs["workers"])
	t := &timings{slots: make([]atomic.Int64, 2*p.N)}
	peak := sample()
	cpu0 := cpuSeconds()
	t.start = time.Now()
	counters := map[string]float64{}
	switch p.Model {
	case "sequential":
		for i := 0; i < p.N && !cancel.Load(); i++ {
			call(t, i, p.Wait)
		}
	case "pool":
		calls := make(chan int)
		var wg sync.WaitGroup
		for range p.Knobs["threads"] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range calls {
					call(t, i, p.Wait)
				}
			}()
		}
		for i := 0; i < p.N && !cancel.Load(); i++ {
			calls <- i
		}
		close(calls)
		wg.Wait()
	case "virtual":
		var wg sync.WaitGroup
		for i := 0; i < p.N && !cancel.Load(); i++ {
			wg.Add(1)
			go func() { defer wg.Done(); call(t, i, p.Wait) }()
		}
		wg.Wait()
	case "thread-per-request":
		slots := make(chan struct{}, p.Knobs["max_threads"])
		var wg sync.WaitGroup
		waits := 0
		for i := 0; i < p.N && !cancel.Load(); i++ {
			select {
			case slots <- struct{}{}:
			default:
				waits++
				slots <- struct{}{}
			}
			wg.Add(1)
			go func() {
				runtime.LockOSThread() // never unlocked: the thread ends with the call
				defer func() { <-slots; wg.Done() }()
				t.begin(i)
				work.ThreadSleep(p.Wait)
				t.end(i)
			}()
		}
		wg.Wait()
		counters["cap_waits"] = float64(waits)
	}
	total := time.Since(t.start)
	cpu := cpuSeconds() - cpu0
	peakThreads, peakRSS := peak()
	stats, done, inService := statsOf(t, p.N)
	counters["peak_io_in_service"] = float64(inService)
	res := map[string]any{
		"model":           p.Model,
		"params":          p.Params,
		"tasks":           p.N,
		"failed":          0,
		"total_s":         total.Seconds(),
		"by_type":         map[string]any{"io": stats},
		"peak_threads":    peakThreads,
		"peak_rss_mb":     peakRSS,
		"cpu_utilisation": cpu / (total.Seconds() * float64(runtime.NumCPU())),
		"counters":        counters,
	}
	if done < p.N {
		res["failure"] = "interrupted: " + strconv.Itoa(done) + " of " + strconv.Itoa(p.N) + " calls ran"
		res["tasks"] = done
	}
	if res["params"] == nil {
		res["params"] = map[string]int{}
	}
	return res
}

// statsOf: per-call times (done = end since batch start; wait = start; service = end - start),
// as crates/batch/src/measure.rs computes them; the calls that ran; most in service at once.
func statsOf(t *timings, n int) (map[string]float64, int, int) {
	var doneMs, waitMs, serviceMs []float64
	type edge struct {
		at    int64
		delta int
	}
	var edges []edge
	for i := range n {
		s, e, ok := t.span(i)
		if !ok {
			continue
		}
		doneMs = append(doneMs, float64(e)/1e6)
		waitMs = append(waitMs, float64(s)/1e6)
		serviceMs = append(serviceMs, float64(e-s)/1e6)
		edges = append(edges, edge{s, 1}, edge{e, -1})
	}
	sort.Slice(edges, func(a, b int) bool {
		if edges[a].at != edges[b].at {
			return edges[a].at < edges[b].at
		}
		return edges[a].delta < edges[b].delta // an end at t closes before a start at t
	})
	open, most := 0, 0
	for _, e := range edges {
		open += e.delta
		most = max(most, open)
	}
	return map[string]float64{
		"count":           float64(len(doneMs)),
		"mean_ms":         mean(doneMs),
		"p99_ms":          p99(doneMs),
		"wait_mean_ms":    mean(waitMs),
		"service_mean_ms": mean(serviceMs),
		"wait_p99_ms":     p99(waitMs),
		"service_p99_ms":  p99(serviceMs),
	}, len(doneMs), most
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// p99 is the nearest-rank 99th percentile.
func p99(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	rank := int(math.Ceil(float64(len(v))*0.99)) - 1
	return v[max(0, min(rank, len(v)-1))]
}

// sample starts a sampler of /proc/self/status's Threads every 5 ms; the returned function
// stops it and gives the peak threads and the peak RSS (VmHWM) in MiB.
func sample() func() (int, float64) {
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		most := 0
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			most = max(most, statusField("Threads:"))
			select {
			case <-stop:
				done <- max(most, statusField("Threads:"))
				return
			case <-tick.C:
			}
		}
	}()
	return func() (int, float64) {
		close(stop)
		threads := <-done
		return threads, float64(statusField("VmHWM:")) / 1024
	}
}

// statusField is a number field of /proc/self/status (kB for the Vm* ones).
func statusField(name string) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.Atoi(f[0])
				return n
			}
		}
	}
	return 0
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
