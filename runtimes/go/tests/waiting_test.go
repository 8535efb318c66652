package tests

import (
	"strconv"
	"sync"
	"testing"
	"time"
)

// during runs f while `paths` are in flight (after `settle`), then waits for their answers.
func during(t *testing.T, base string, paths []string, settle time.Duration, f func()) (time.Duration, []answer) {
	t.Helper()
	var wall time.Duration
	var answers []answer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); wall, answers = together(t, base, paths) }()
	time.Sleep(settle)
	f()
	wg.Wait()
	return wall, answers
}

func statuses(as []answer) map[int]int {
	out := map[int]int{}
	for _, a := range as {
		out[a.Status]++
	}
	return out
}

// virtual: 200 waiting requests overlap and hold no OS thread each (goroutines parked on the
// runtime's timers).
func TestVirtualWaitsHoldNoThread(t *testing.T) {
	tg := start(t, false, "--model", "virtual", "--workers", "2")
	var threads, inFlight float64
	wall, as := during(t, tg.URL, repeat("/work?steps=sleep:500", 200), 300*time.Millisecond, func() {
		threads = metric(t, tg.URL, "iolab_threads")
		inFlight = metric(t, tg.URL, "iolab_requests_in_flight")
	})
	if s := statuses(as); s[200] != 200 {
		t.Fatalf("statuses %v", s)
	}
	if wall > 2*time.Second {
		t.Errorf("200 sleeps of 500 ms took %s: they did not overlap", wall)
	}
	if inFlight < 150 {
		t.Errorf("in flight %v while 200 waited", inFlight)
	}
	if threads > 40 {
		t.Errorf("%v OS threads for 200 waiting requests: goroutines should hold none", threads)
	}
}

// thread-per-request: every waiting request holds an OS thread, which ends with it; past
// max_threads the target answers 503 and counts the rejection.
func TestThreadPerRequestHoldsAThreadEach(t *testing.T) {
	tg := start(t, false, "--model", "thread-per-request")
	idle := metric(t, tg.URL, "iolab_threads")
	var threads float64
	_, as := during(t, tg.URL, repeat("/work?steps=sleep:800", 60), 400*time.Millisecond, func() {
		threads = metric(t, tg.URL, "iolab_threads")
	})
	if s := statuses(as); s[200] != 60 {
		t.Fatalf("statuses %v", s)
	}
	// Each locked goroutine takes a thread of its own (an idle one of the runtime's, or a new one).
	if threads < 60 {
		t.Errorf("%v threads while 60 requests waited (idle: %v): not a thread each", threads, idle)
	}
	time.Sleep(200 * time.Millisecond)
	if after := metric(t, tg.URL, "iolab_threads"); after > idle+10 {
		t.Errorf("%v threads after the requests (idle %v): the locked threads did not end", after, idle)
	}

	capped := start(t, false, "--model", "thread-per-request", "--max-threads", "4")
	_, as = together(t, capped.URL, repeat("/work?steps=sleep:400", 10))
	if s := statuses(as); s[200] != 4 || s[503] != 6 {
		t.Errorf("max_threads 4, 10 at once: statuses %v, want 4 x 200 and 6 x 503", s)
	}
	if n := metric(t, capped.URL, "iolab_requests_rejected_total"); n != 6 {
		t.Errorf("rejected_total %v, want 6", n)
	}
}

// pool: `threads` workers take jobs from a channel of capacity `backlog`; beyond, 503.
func TestPoolQueuesThenRejects(t *testing.T) {
	tg := start(t, false, "--model", "pool", "--threads", "4", "--backlog", "2")
	var queued float64
	wall, as := during(t, tg.URL, repeat("/work?steps=sleep:400", 10), 200*time.Millisecond, func() {
		queued = metric(t, tg.URL, "iolab_requests_queued")
	})
	if s := statuses(as); s[200] != 6 || s[503] != 4 {
		t.Fatalf("statuses %v: want 6 x 200 (4 running, 2 queued) and 4 x 503", s)
	}
	if queued != 2 {
		t.Errorf("queued %v while the channel was full, want 2", queued)
	}
	if wall < 750*time.Millisecond {
		t.Errorf("%s: the 2 queued jobs should have waited for a worker (two rounds of 400 ms)", wall)
	}
	if n := metric(t, tg.URL, "iolab_requests_rejected_total"); n != 4 {
		t.Errorf("rejected_total %v", n)
	}
}

// sequential: one request at a time, par(...) in order.
func TestSequentialServesOneAtATime(t *testing.T) {
	tg := start(t, false, "--model", "sequential")
	wall, as := together(t, tg.URL, repeat("/work?steps=sleep:200", 3))
	if s := statuses(as); s[200] != 3 {
		t.Fatalf("statuses %v", s)
	}
	if wall < 590*time.Millisecond {
		t.Errorf("3 sleeps of 200 ms took %s: they overlapped", wall)
	}
	if a := get(t, tg.URL+"/work?steps=par(sleep:150,sleep:150)"); a.Ms < 295 {
		t.Errorf("par of two 150 ms sleeps took %.0f ms: not in order", a.Ms)
	}
	if a := get(t, tg.URL+"/health"); !a.Close {
		t.Errorf("no Connection: close on sequential's answer")
	}
}

// prefork: N processes, each one request at a time, spread by the kernel (SO_REUSEPORT).
func TestPreforkProcessesEachServeOne(t *testing.T) {
	tg := start(t, false, "--model", "prefork", "--processes", "3")
	var most float64
	wall, as := during(t, tg.URL, repeat("/work?steps=sleep:100", 30), 50*time.Millisecond, func() {
		for range 5 {
			most = max(most, metric(t, tg.URL, "iolab_requests_in_flight"))
			time.Sleep(40 * time.Millisecond)
		}
	})
	if s := statuses(as); s[200] != 30 {
		t.Fatalf("statuses %v", s)
	}
	if most > 3 {
		t.Errorf("%v requests in flight on 3 single-request processes", most)
	}
	// One at a time would be 3 s; three processes share them (the kernel hashes connections to
	// processes, so not exactly evenly).
	if wall < time.Second || wall > 2400*time.Millisecond {
		t.Errorf("30 sleeps of 100 ms on 3 processes took %s", wall)
	}
}

// workers is GOMAXPROCS: two CPU-bound requests on GOMAXPROCS=1 take turns on one core (the
// process's CPU time never outgrows its wall time), on 2 they may use both.
func TestWorkersIsGOMAXPROCS(t *testing.T) {
	one := start(t, false, "--model", "virtual", "--workers", "1")
	terms := "/work?steps=cpu:" + strconv.Itoa(150_000_000)
	cpu0 := cpuSeconds(t, one.cmd.Process.Pid)
	wall, as := together(t, one.URL, repeat(terms, 2))
	cpu := cpuSeconds(t, one.cmd.Process.Pid) - cpu0
	if s := statuses(as); s[200] != 2 {
		t.Fatalf("statuses %v", s)
	}
	t.Logf("2 CPU requests on GOMAXPROCS=1: %.3f CPU-s in %.3f s", cpu, wall.Seconds())
	if cpu > 1.15*wall.Seconds() {
		t.Errorf("%.3f CPU-s in %.3f s on GOMAXPROCS=1: more than one core computed", cpu, wall.Seconds())
	}
	if cpu < 0.05 {
		t.Errorf("%.3f CPU-s: the cpu steps did not run", cpu)
	}
}
