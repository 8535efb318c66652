// Package server answers the target contract over net/http: /health, /metrics, /work, whose
// running is the model's (an Exec: on the connection's goroutine, on a pool worker, on a locked
// OS thread), and the held /ws and /events (held.go).
package server

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"iolab/runtimes/go/internal/backends"
	"iolab/runtimes/go/internal/contract"
	"iolab/runtimes/go/internal/counters"
	"iolab/runtimes/go/internal/work"
)

// Exec runs one /work job where the model runs requests and returns once it has run; or it
// refuses it (no worker, no thread) and returns the 503 message without running it.
type Exec func(job func()) (refused string)

// Server is one process's contract.
type Server struct {
	Model    string
	Counters *counters.Counters
	Backends *backends.Backends
	Runner   *work.Runner
	Exec     Exec
	// Close marks every answer Connection: close (sequential, prefork).
	Close bool
	// stop ends the held connections (held.go).
	stop heldStop
}

type reply struct {
	status int
	ctype  string
	body   []byte
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.held(w, r) {
		return
	}
	var rep reply
	switch {
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		rep = reply{405, contract.JSON, contract.MethodNotAllowed(r.Method)}
	case r.URL.Path == "/health":
		rep = reply{200, contract.JSON, contract.Health(s.Model)}
	case r.URL.Path == "/metrics":
		rep = reply{200, contract.Prometheus, s.Counters.Render()}
	case r.URL.Path == "/work":
		var ran bool
		refused := s.Exec(func() {
			ran = true
			rep = s.work(r.Context(), r.URL.RawQuery)
		})
		if !ran {
			s.Counters.Reject()
			rep = reply{503, contract.JSON, contract.ErrorBody(refused)}
		}
	default:
		rep = reply{404, contract.JSON, contract.NotFound(r.URL.Path)}
	}
	h := w.Header()
	h.Set("Content-Type", rep.ctype)
	h.Set("Content-Length", strconv.Itoa(len(rep.body)))
	if s.Close {
		h.Set("Connection", "close")
	}
	w.WriteHeader(rep.status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(rep.body)
	}
}

// work runs one /work and makes its answer; counted in flight while it runs and completed
// before it is written, so a client that reads /metrics after its answer always sees it.
func (s *Server) work(ctx context.Context, query string) reply {
	s.Counters.Begin()
	defer s.Counters.End()
	started := time.Now()
	wk, perr := contract.ParseWork(query, s.Backends.Configured, s.Backends.CountCall)
	if perr != nil {
		return reply{perr.Status, contract.JSON, contract.ErrorBody(perr.Message)}
	}
	// The request's context is not passed on: a client that gives up does not cut the work
	// short, as in every other runtime (the target's own view of its load stays whole).
	value, err := s.Runner.Run(context.WithoutCancel(ctx), wk.Step)
	if err != nil {
		if we, ok := err.(*contract.Error); ok {
			return reply{we.Status, contract.JSON, contract.ErrorBody(we.Message)}
		}
		return reply{500, contract.JSON, contract.ErrorBody(err.Error())}
	}
	if wk.Value {
		if value == nil {
			return reply{500, contract.JSON, contract.ErrorBody("body=value: the steps ran but fetched no value")}
		}
		return reply{200, contract.OctetStream, value}
	}
	elapsed := float64(time.Since(started).Nanoseconds()) / 1e6
	return reply{200, contract.JSON, contract.OK(s.Model, wk.Step.Leaves(), elapsed)}
}

// Metrics serves /metrics (and /health) alone, for the launcher's --metrics-port listener.
func Metrics(c *counters.Counters) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics":
			w.Header().Set("Content-Type", contract.Prometheus)
			_, _ = w.Write(c.Render())
		case "/health":
			w.Header().Set("Content-Type", contract.JSON)
			_, _ = w.Write([]byte(`{"ok":true}`))
		default:
			w.Header().Set("Content-Type", contract.JSON)
			w.WriteHeader(404)
			_, _ = w.Write(contract.ErrorBody("the metrics listener serves /metrics only"))
		}
	})
}
