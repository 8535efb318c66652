package launcher

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// warmupPaths are what the warm-up asks for, in turn: a sleep, a sleep then some CPU, a fan-out.
var warmupPaths = []string{"/work?steps=sleep:1", "/work?steps=seq(sleep:1,cpu:100)", "/work?steps=par(sleep:1,sleep:1)"}

// warmup sends n requests from 16 keep-alive connections (the counters are zeroed after it).
// Go compiles ahead of time, so this warms pools, goroutine stacks and the allocator, not a JIT.
func warmup(base string, n int) {
	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 16},
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				resp, err := client.Get(base + warmupPaths[i%int64(len(warmupPaths))])
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	client.CloseIdleConnections()
}
