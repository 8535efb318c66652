// Package tests checks the Go runtime from outside, as iolab uses it: targets started through
// ./start --port 0 (the URL on stdout line 1), the shared vectors, the launcher protocol, each
// model's way of waiting, the real backends (IOLAB_PG, IOLAB_MC, IOLAB_HTTP_BACKEND from
// scripts/services; with IOLAB_REQUIRE_BACKENDS=1 a missing one fails), and the batches.
package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	here, _ = filepath.Abs("..")
	repo    = filepath.Join(here, "..", "..")
)

// manifestModels are the models runtime.toml declares, in its order: the one list.
func manifestModels(t *testing.T) []string {
	raw, err := os.ReadFile(filepath.Join(here, "runtime.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^\[models\.([a-z-]+)\]`).FindAllStringSubmatch(string(raw), -1) {
		out = append(out, m[1])
	}
	if len(out) == 0 {
		t.Fatal("runtime.toml declares no models")
	}
	return out
}

// target is one started ./start.
type target struct {
	t       *testing.T
	cmd     *exec.Cmd
	URL     string
	Metrics string
	Model   string
	stderr  *lockedBuf
	exited  chan struct{}
}

type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start runs ./start with args (and --port 0); withBackends false clears the backends' env.
func start(t *testing.T, withBackends bool, args ...string) *target {
	t.Helper()
	cmd := exec.Command(filepath.Join(here, "start"), append([]string{"--port", "0"}, args...)...)
	cmd.Env = os.Environ()
	if !withBackends {
		cmd.Env = nil
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "IOLAB_PG=") && !strings.HasPrefix(kv, "IOLAB_MC=") && !strings.HasPrefix(kv, "IOLAB_HTTP_BACKEND=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	tg := &target{t: t, cmd: cmd, stderr: &lockedBuf{}, exited: make(chan struct{})}
	cmd.Stderr = tg.stderr
	for i, a := range args {
		if a == "--model" && i+1 < len(args) {
			tg.Model = args[i+1]
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	go func() { _ = cmd.Wait(); close(tg.exited) }()
	t.Cleanup(func() { tg.stop() })
	select {
	case tg.URL = <-lines:
	case <-time.After(90 * time.Second):
		t.Fatalf("%v printed no URL within 90 s; stderr:\n%s", args, tg.stderr)
	}
	if !regexp.MustCompile(`^http://127\.0\.0\.1:[0-9]+$`).MatchString(tg.URL) {
		t.Fatalf("%v: stdout line 1 is %q, not the URL; stderr:\n%s", args, tg.URL, tg.stderr)
	}
	for _, a := range args {
		if a == "--metrics-port" {
			line := <-lines
			tg.Metrics = strings.TrimPrefix(line, "metrics ")
		}
	}
	return tg
}

// stop sends SIGTERM and returns the exit code (-1: killed after 10 s).
func (tg *target) stop() int {
	if tg.cmd.Process == nil {
		return -1
	}
	_ = tg.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-tg.exited:
		return tg.cmd.ProcessState.ExitCode()
	case <-time.After(10 * time.Second):
		_ = tg.cmd.Process.Kill()
		<-tg.exited
		return -1
	}
}

// answer is one GET's outcome, timed from send to the last body byte.
type answer struct {
	Status int
	Header http.Header
	Body   []byte
	Ms     float64
	Close  bool // the answer said Connection: close
}

func (a answer) JSON(t *testing.T) map[string]any {
	var v map[string]any
	if err := json.Unmarshal(a.Body, &v); err != nil {
		t.Fatalf("not JSON: %q", a.Body)
	}
	return v
}

// get sends one GET on a fresh connection.
func get(t *testing.T, url string) answer {
	t.Helper()
	c := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	t0 := time.Now()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return answer{resp.StatusCode, resp.Header, body, float64(time.Since(t0).Microseconds()) / 1e3, resp.Close}
}

// together sends every path at once, one connection each: the wall time and the answers.
func together(t *testing.T, base string, paths []string) (time.Duration, []answer) {
	t.Helper()
	out := make([]answer, len(paths))
	var wg sync.WaitGroup
	t0 := time.Now()
	for i, p := range paths {
		wg.Add(1)
		go func() { defer wg.Done(); out[i] = get(t, base+p) }()
	}
	wg.Wait()
	return time.Since(t0), out
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// metric reads one series from a /metrics text.
func metric(t *testing.T, base, series string) float64 {
	t.Helper()
	body := string(get(t, base+"/metrics").Body)
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			var v float64
			if _, err := fmt.Sscan(rest, &v); err == nil {
				return v
			}
		}
	}
	t.Fatalf("no %s in /metrics:\n%s", series, body)
	return 0
}

// backends says whether the real backends are given; with IOLAB_REQUIRE_BACKENDS=1 their
// absence fails the test instead of skipping it.
func backends(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if os.Getenv(n) == "" {
			if os.Getenv("IOLAB_REQUIRE_BACKENDS") == "1" {
				t.Fatalf("%s is not set (IOLAB_REQUIRE_BACKENDS=1): start scripts/services", n)
			}
			t.Skipf("%s is not set: start the services (scripts/services up) to run this test", n)
		}
	}
}
