package tests

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Bad flags: one line on stderr naming the fault, exit code 2, nothing on stdout.
func TestBadFlagsExit2WithOneLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--port", "0"}, "--model is required"},
		{[]string{"--model", "loop-blocking"}, "unknown model 'loop-blocking' for the go runtime"},
		{[]string{"--model", "virtual", "--offload", "4"}, "--offload does not apply to model 'virtual'"},
		{[]string{"--model", "sequential", "--threads", "4"}, "it applies to: pool"},
		{[]string{"--model", "pool", "--threads", "0"}, "--threads must be a whole number from 1"},
		{[]string{"--model", "pool", "--threadz", "4"}, "unknown flag '--threadz'"},
		{[]string{"--model", "pool", "--mc", "nohost"}, "is not HOST:PORT"},
		{[]string{"--model", "pool", "--pg", "mysql://x"}, "is not a PostgreSQL URL"},
		{[]string{"--model", "pool", "--pg-wait", "0"}, "--pg-wait must be milliseconds"},
		{[]string{"--spec", "/nonexistent.json"}, "cannot read the batch spec"},
	} {
		cmd := exec.Command(filepath.Join(here, "start"), c.args...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := cmd.ProcessState.ExitCode()
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if code != 2 || stdout.Len() != 0 || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("%v: exit %d (%v), stdout %q, stderr %q; want exit 2 and one line with %q", c.args, code, err, stdout.String(), stderr.String(), c.want)
		}
	}
}

// The URL line comes once it serves, the metrics line second, and the counters are zeroed after
// the warm-up; SIGTERM ends it with exit code 0.
func TestLauncherProtocol(t *testing.T) {
	tg := start(t, false, "--model", "virtual", "--warmup", "300", "--metrics-port", "0")
	if !strings.HasPrefix(tg.Metrics, "http://127.0.0.1:") {
		t.Fatalf("metrics line: %q", tg.Metrics)
	}
	if n := metric(t, tg.Metrics, "iolab_requests_completed_total"); n != 0 {
		t.Errorf("completed_total %v after the warm-up, want 0", n)
	}
	get(t, tg.URL+"/work?steps=sleep:1")
	if n := metric(t, tg.Metrics, "iolab_requests_completed_total"); n != 1 {
		t.Errorf("completed_total %v on the metrics listener, want 1", n)
	}
	t0 := time.Now()
	if code := tg.stop(); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0; stderr:\n%s", code, tg.stderr)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("stopping took %s", d)
	}
}

// prefork: SIGTERM to the launcher ends every process it started.
func TestPreforkStopsItsProcesses(t *testing.T) {
	tg := start(t, false, "--model", "prefork", "--processes", "3")
	if n := metric(t, tg.URL, "iolab_processes"); n != 4 {
		t.Fatalf("iolab_processes = %v, want 4 (the launcher and 3 processes)", n)
	}
	kids := childrenOf(tg.cmd.Process.Pid)
	if len(kids) != 3 {
		t.Fatalf("children of the launcher: %v", kids)
	}
	if code := tg.stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, pid := range kids {
		if alive(pid) {
			t.Errorf("prefork process %d outlived the launcher", pid)
		}
	}
}
