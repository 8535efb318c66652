// Package batch runs E3's batches (runtimes/README.md, "The batch protocol"): n calls of a
// blocking service taking `ms` each, under one executor, in Go terms:
//
//   - sequential: a plain loop on the calling goroutine.
//   - pool: `threads` worker goroutines taking the calls from a channel.
//   - virtual: a goroutine per call, each blocked in time.Sleep: Go's answer to E3 (the
//     goroutines park on the runtime's timers; GOMAXPROCS threads run them).
//   - thread-per-request: a goroutine per call locked to its own OS thread, sleeping in the
//     nanosleep system call (Scala's `blocking {}`), at most `max_threads` at once.
//
// The executors are the models runtime.toml declares (no loop-async: a goroutine parked in
// time.Sleep is Go's timer; runtime.toml says why).
//
// The input is `{"spec": BatchSpec, "executor": {"model": M, "params": {knobs}}}` (the types
// of crates/model/src/batch.rs); the output one `iolab.batch/1` document on stdout.
package batch

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"iolab/runtimes/go/internal/models"
)

// Input is the batch protocol's file.
type Input struct {
	Spec struct {
		Tasks struct {
			Kind string  `json:"kind"`
			N    uint64  `json:"n"`
			Ms   float64 `json:"ms"`
		} `json:"tasks"`
		Master    json.RawMessage `json:"master"`
		Seed      uint64          `json:"seed"`
		IOBackend string          `json:"io_backend"`
	} `json:"spec"`
	Executor *struct {
		Model  string         `json:"model"`
		Params map[string]int `json:"params"`
	} `json:"executor"`
}

// executors are the batch models and the knobs each reads.
var executors = map[string][]string{
	"sequential":         {},
	"pool":               {"threads", "workers"},
	"virtual":            {"workers"},
	"thread-per-request": {"max_threads", "workers"},
}

// maxCalls bounds n: a goroutine per call costs a few KiB, a locked thread more.
const maxCalls = 10_000_000

// Main runs `--spec FILE` and returns the exit code.
func Main(argv []string, sigs chan os.Signal) int {
	path := ""
	switch {
	case len(argv) == 2 && argv[0] == "--spec":
		path = argv[1]
	case len(argv) == 1 && strings.HasPrefix(argv[0], "--spec="):
		path = strings.TrimPrefix(argv[0], "--spec=")
	default:
		return bad("usage: runtimes/go/start --spec FILE.json")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return bad(fmt.Sprintf("cannot read the batch spec: %v", err))
	}
	var in Input
	if err := json.Unmarshal(raw, &in); err != nil {
		return bad(fmt.Sprintf("%s is not a batch spec: %v", path, err))
	}
	plan, err := check(&in)
	if err != nil {
		return bad(err.Error())
	}
	cancel := &atomic.Bool{}
	go func() { <-sigs; cancel.Store(true) }()
	res := run(plan, cancel)
	out, _ := json.Marshal(map[string]any{"schema": "iolab.batch/1", "runs": []any{res}})
	fmt.Println(string(out))
	return 0
}

func bad(msg string) int {
	fmt.Fprintln(os.Stderr, "go batch: "+msg)
	return 2
}

// Plan is a checked batch.
type Plan struct {
	Model  string
	Knobs  map[string]int // effective: defaults, then the spec's
	Params map[string]int // as given
	N      int
	Wait   time.Duration
}

func check(in *Input) (*Plan, error) {
	if len(in.Spec.Master) > 0 && string(in.Spec.Master) != "null" {
		return nil, fmt.Errorf("the go runtime runs E3's calls, not E1's master/worker batches: run those in process or on runtime scala")
	}
	if in.Spec.Tasks.Kind != "calls" {
		return nil, fmt.Errorf("tasks of kind '%s': the go runtime runs kind 'calls' (E3)", in.Spec.Tasks.Kind)
	}
	if b := in.Spec.IOBackend; b != "" && b != "sleep" {
		return nil, fmt.Errorf("io_backend '%s': the go runtime's batches wait on the embedded sleep only", b)
	}
	if in.Executor == nil {
		return nil, fmt.Errorf("no executor: give {\"executor\": {\"model\": ..., \"params\": {...}}}")
	}
	knobs, ok := executors[in.Executor.Model]
	if !ok {
		return nil, fmt.Errorf("model '%s' has no go batch executor (it has: sequential, pool, virtual, thread-per-request)", in.Executor.Model)
	}
	p := &Plan{Model: in.Executor.Model, Params: in.Executor.Params, Knobs: map[string]int{
		"threads": 200, "workers": runtime.NumCPU(), "max_threads": models.ThreadsCap,
	}}
	for k, v := range in.Executor.Params {
		found := false
		for _, want := range knobs {
			found = found || want == k
		}
		if !found {
			return nil, fmt.Errorf("%s does not apply to the go batch model '%s' (it reads: %s)", k, p.Model, strings.Join(knobs, ", "))
		}
		if v < 1 {
			return nil, fmt.Errorf("%s = %d: use 1 or more", k, v)
		}
		p.Knobs[k] = v
	}
	t := in.Spec.Tasks
	if t.N > maxCalls {
		return nil, fmt.Errorf("n = %d calls: at most %d", t.N, maxCalls)
	}
	if t.Ms < 0 || t.Ms > 3_600_000 {
		return nil, fmt.Errorf("ms = %g: use 0 to 3600000", t.Ms)
	}
	p.N = int(t.N)
	p.Wait = time.Duration(t.Ms * float64(time.Millisecond))
	return p, nil
}
