package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

type batchRun struct {
	Model       string  `json:"model"`
	Tasks       int     `json:"tasks"`
	TotalS      float64 `json:"total_s"`
	PeakThreads int     `json:"peak_threads"`
	PeakRssMb   float64 `json:"peak_rss_mb"`
	ByType      map[string]struct {
		Count  int     `json:"count"`
		MeanMs float64 `json:"mean_ms"`
	} `json:"by_type"`
	Counters map[string]float64 `json:"counters"`
}

// runBatch runs ./start --spec with E3's calls (n of ms) under model and params.
func runBatch(t *testing.T, model string, params map[string]int, n int, ms float64) batchRun {
	t.Helper()
	spec := map[string]any{
		"spec":     map[string]any{"tasks": map[string]any{"kind": "calls", "n": n, "ms": ms}, "seed": 1},
		"executor": map[string]any{"model": model, "params": params},
	}
	path := filepath.Join(t.TempDir(), "spec.json")
	raw, _ := json.Marshal(spec)
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(here, "start"), "--spec", path).Output()
	if err != nil {
		t.Fatalf("%s: %v", model, err)
	}
	var doc struct {
		Schema string     `json:"schema"`
		Runs   []batchRun `json:"runs"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || doc.Schema != "iolab.batch/1" || len(doc.Runs) != 1 {
		t.Fatalf("%s: not one iolab.batch/1 run: %v %s", model, err, out)
	}
	r := doc.Runs[0]
	if r.Tasks != n || r.ByType["io"].Count != n {
		t.Fatalf("%s: %d tasks, %d io counted, want %d", model, r.Tasks, r.ByType["io"].Count, n)
	}
	return r
}

// E3's shape in Go: T(n) = ceil(n / P) x S for P workers; a goroutine per
// call takes about S whatever n; a locked thread per call holds n OS threads.
func TestE3Shape(t *testing.T) {
	seq := runBatch(t, "sequential", nil, 5, 40)
	if seq.TotalS < 0.2 {
		t.Errorf("sequential 5 x 40 ms in %.3f s", seq.TotalS)
	}
	pool := runBatch(t, "pool", map[string]int{"threads": 4}, 10, 100)
	if pool.TotalS < 0.3 || pool.TotalS > 0.6 {
		t.Errorf("pool of 4, 10 calls of 100 ms: %.3f s, want about ceil(10/4) x 0.1 = 0.3", pool.TotalS)
	}
	virt := runBatch(t, "virtual", nil, 2000, 200)
	if virt.TotalS > 0.8 {
		t.Errorf("a goroutine per call, 2,000 calls of 200 ms: %.3f s, want about 0.2", virt.TotalS)
	}
	if virt.PeakThreads > 40 {
		t.Errorf("2,000 waiting goroutines on %d OS threads", virt.PeakThreads)
	}
	if virt.Counters["peak_io_in_service"] < 1500 {
		t.Errorf("peak in service %v", virt.Counters["peak_io_in_service"])
	}
	locked := runBatch(t, "thread-per-request", nil, 100, 300)
	if locked.PeakThreads < 100 {
		t.Errorf("100 calls on locked threads peaked at %d OS threads", locked.PeakThreads)
	}
	capped := runBatch(t, "thread-per-request", map[string]int{"max_threads": 10}, 30, 100)
	if capped.TotalS < 0.3 || capped.Counters["cap_waits"] < 1 {
		t.Errorf("max_threads 10, 30 calls of 100 ms: %.3f s, cap_waits %v", capped.TotalS, capped.Counters["cap_waits"])
	}
}

func TestBatchRefusesWhatItCannotRun(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{`{"spec":{"tasks":{"kind":"calls","n":1,"ms":1},"master":{"workers":2,"worker":"blocking"},"seed":1}}`, "not E1's master/worker"},
		{`{"spec":{"tasks":{"kind":"calls","n":1,"ms":1},"seed":1,"io_backend":"pg"},"executor":{"model":"pool","params":{}}}`, "embedded sleep only"},
		{`{"spec":{"tasks":{"kind":"calls","n":1,"ms":1},"seed":1},"executor":{"model":"loop-async","params":{}}}`, "has no go batch executor"},
		{`{"spec":{"tasks":{"kind":"calls","n":1,"ms":1},"seed":1},"executor":{"model":"pool","params":{"offload":2}}}`, "offload does not apply"},
		{`not json`, "is not a batch spec"},
	} {
		path := filepath.Join(t.TempDir(), "spec.json")
		_ = os.WriteFile(path, []byte(c.spec), 0o600)
		cmd := exec.Command(filepath.Join(here, "start"), "--spec", path)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, _ := cmd.Output()
		if cmd.ProcessState.ExitCode() != 2 || len(out) != 0 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", c.spec, cmd.ProcessState.ExitCode(), out, stderr.String())
		}
	}
}
