// Package launcher is the Go runtime's launcher (runtimes/README.md, "The launcher protocol"):
// flags in, the model served, the URL out once it serves (after the warm-up, with the counters
// zeroed), SIGTERM or SIGINT end it with exit code 0. prefork's processes are this same program,
// started again with their settings in IOLAB_GO_CHILD.
package launcher

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"iolab/runtimes/go/internal/backends"
	"iolab/runtimes/go/internal/batch"
	"iolab/runtimes/go/internal/counters"
	"iolab/runtimes/go/internal/listen"
	"iolab/runtimes/go/internal/models"
	"iolab/runtimes/go/internal/server"
)

const (
	readyWait = 55 * time.Second // under the manifest's start_timeout_s
	stopWait  = 5 * time.Second  // graceful stop, then close: all gone well within 10 s
)

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "go target: "+format+"\n", args...)
}

// Main runs the launcher (or a prefork process, or a batch) and returns the exit code.
func Main(argv []string) int {
	// First of all: a SIGTERM that comes while the program starts ends it with exit code 0,
	// not the Go runtime's default death by signal.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	if os.Getenv(childEnv) != "" {
		return child(sigs)
	}
	if len(argv) > 0 && (argv[0] == "--spec" || strings.HasPrefix(argv[0], "--spec=")) {
		return batch.Main(argv, sigs)
	}
	if len(argv) > 0 && (argv[0] == "-h" || argv[0] == "--help") {
		fmt.Print(usage())
		return 0
	}
	s, err := Parse(argv, os.Getenv)
	if err != nil {
		logf("%v", err)
		return 2
	}
	return run(s, sigs)
}

func usage() string {
	var b strings.Builder
	b.WriteString("usage: runtimes/go/start --model MODEL [--port P] [--KNOB N ...] [--http-backend URL]\n")
	b.WriteString("       [--pg URL] [--mc HOST:PORT] [--pg-wait MS] [--warmup N] [--metrics-port P]\n")
	b.WriteString("       runtimes/go/start --spec FILE.json    (a batch: runtimes/README.md)\n\nmodels (knobs, defaults on this machine):\n")
	for _, m := range models.All {
		d := m.Defaults(models.Cores())
		var ks []string
		for _, k := range m.Knobs {
			if v, ok := d[k]; ok {
				ks = append(ks, fmt.Sprintf("--%s [%d]", flagName(k), v))
			} else {
				ks = append(ks, fmt.Sprintf("--%s [no limit]", flagName(k)))
			}
		}
		fmt.Fprintf(&b, "  %s: %s\n      %s\n", m.Name, m.About, strings.Join(ks, ", "))
	}
	b.WriteString("backends: flags, else IOLAB_HTTP_BACKEND, IOLAB_PG, IOLAB_MC.\n")
	b.WriteString("stdout: line 1 the URL once it serves; line 2 `metrics URL` with --metrics-port.\n")
	return b.String()
}

// target is what serves: this process, or prefork's processes.
type target struct {
	port int
	died chan error // a server or process that stopped on its own
	stop func()
}

func run(s *Settings, sigs chan os.Signal) int {
	dir, err := os.MkdirTemp("", "iolab-go-")
	if err != nil {
		logf("cannot make a temporary folder: %v", err)
		return 1
	}
	defer os.RemoveAll(dir)
	rows := 1
	if s.Model == "prefork" {
		rows += s.Knobs["processes"]
	}
	path := filepath.Join(dir, "counters")
	c, err := counters.Create(path, rows)
	if err != nil {
		logf("cannot make the counters file: %v", err)
		return 1
	}
	var t *target
	if s.Model == "prefork" {
		t, err = startPrefork(s, path)
	} else {
		t, err = serveHere(s, c)
	}
	if err != nil {
		logf("%v", err)
		return 1
	}
	defer t.stop()
	var metricsURL string
	if s.MetricsPort >= 0 {
		ln, err := listen.TCP(s.MetricsPort, 0, false)
		if err != nil {
			logf("cannot listen for metrics on 127.0.0.1: %v (pick another --metrics-port, or 0)", err)
			return 1
		}
		ms := &http.Server{Handler: server.Metrics(c), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = ms.Serve(ln) }()
		defer ms.Close()
		metricsURL = "http://" + ln.Addr().String()
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", t.port)
	if stopped := waitReady(base, c, rows, sigs, t.died); stopped != nil {
		return *stopped
	}
	if s.Warmup > 0 {
		warmup(base, s.Warmup)
		c.Zero()
	}
	select {
	case <-sigs:
		return 0
	default:
	}
	fmt.Println(base)
	if metricsURL != "" {
		fmt.Println("metrics " + metricsURL)
	}
	select {
	case <-sigs:
		return 0
	case err := <-t.died:
		logf("the server stopped: %v", err)
		return 1
	}
}

// serveHere serves the model in this process.
func serveHere(s *Settings, c *counters.Counters) (*target, error) {
	m, _ := models.Find(s.Model)
	// pool's `backlog` is its jobs channel; its listen socket keeps Go's default.
	backlog := s.Knobs["backlog"]
	if m.Name == "pool" {
		backlog = 0
	}
	ln, err := listen.TCP(s.Port, backlog, false)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on 127.0.0.1: %v (pick another --port, or 0)", err)
	}
	srv, sv, b, err := prepare(s, m, ln, c)
	if err != nil {
		ln.Close()
		return nil, err
	}
	// Held connections end when Shutdown begins: it does not wait for hijacked WebSockets, and
	// would wait out stopWait for an /events stream.
	srv.RegisterOnShutdown(sv.Server.StopHeld)
	t := &target{port: ln.Addr().(*net.TCPAddr).Port, died: make(chan error, 1)}
	go func() {
		if err := srv.Serve(sv.Listener); !errors.Is(err, http.ErrServerClosed) {
			t.died <- err
		}
	}()
	t.stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopWait)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
		// Shutdown does not wait for hijacked connections: the WebSockets' close handshakes.
		sv.Server.WaitHeld(time.Second)
		sv.Stop()
		b.Close()
	}
	return t, nil
}

// prepare makes the backends and the model's server on ln.
func prepare(s *Settings, m models.Model, ln net.Listener, c *counters.Counters) (*http.Server, *models.Serving, *backends.Backends, error) {
	b, err := backends.New(backends.Config{
		HTTP: s.HTTP, PG: s.PG, MC: s.MC,
		PGPool: s.Knobs["pg_pool"], PGWait: s.PGWait, MCPool: s.Knobs["mc_pool"],
	}, c)
	if err != nil {
		return nil, nil, nil, err
	}
	sv, err := models.Prepare(m, s.Knobs, ln, b, c)
	if err != nil {
		b.Close()
		return nil, nil, nil, err
	}
	srv := &http.Server{
		Handler: sv.Server,
		// A client that opens a connection and says nothing is let go, as the Rust targets
		// do after 20 s (it would hold sequential's one connection for ever).
		ReadHeaderTimeout: 20 * time.Second,
	}
	srv.SetKeepAlivesEnabled(sv.KeepAlive)
	return srv, sv, b, nil
}

// waitReady waits until /health answers 200 and every process has its counters row; nil when
// ready, else the exit code (0: a signal came first).
func waitReady(base string, c *counters.Counters, rows int, sigs chan os.Signal, died chan error) *int {
	code := func(n int) *int { return &n }
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(readyWait)
	for time.Now().Before(deadline) {
		select {
		case <-sigs:
			return code(0)
		case err := <-died:
			logf("the server stopped before it was ready: %v", err)
			return code(1)
		default:
		}
		if c.Registered() >= rows {
			if resp, err := client.Get(base + "/health"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					return nil
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	logf("the server did not become ready within %s", readyWait)
	return code(1)
}
