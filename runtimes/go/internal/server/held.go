// The contract's held connections (runtimes/README.md, "Held connections"; the Rust reference is
// crates/servers/src/held.rs):
//   - GET /ws[?steps=...]: a WebSocket (github.com/coder/websocket); each message runs the URL's
//     steps on the model's Runner, then is echoed unchanged; steps that fail close it with 1011,
//     a client silent for heldIdle with 1001.
//   - GET /events[?every=100ms]: text/event-stream, the first event at once, then one every
//     interval: `id: N` and `data: {"seq":N,"sent_unix_us":T}` (the wall clock when written).
//
// Each is served inside the model's Exec, as a /work request is run: a held connection costs the
// model what a request costs it while it lasts (a pool worker, a locked OS thread, prefork's
// process); sequential, which holds one connection at a time by design, answers 501 as the Rust
// one does.
package server

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"iolab/runtimes/go/internal/contract"
)

const (
	heldIdle     = 60 * time.Second
	heldMaxFrame = 1 << 20
	eventsEvery  = time.Second
	eventsMin    = time.Millisecond
)

var durationPart = regexp.MustCompile(`^(\d+(?:\.\d*)?|\.\d+)(us|µs|ms|min|m|s|h)`)

var durationUnits = map[string]float64{"us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "min": 60e9, "h": 3600e9}

// heldDuration reads iolab's durations (`100ms`, `1s`, `1m30s`), as crates/model units.rs does.
func heldDuration(text string) (time.Duration, bool) {
	var ns float64
	for rest := text; rest != ""; {
		m := durationPart.FindStringSubmatch(rest)
		if m == nil {
			return 0, false
		}
		n, _ := strconv.ParseFloat(m[1], 64)
		ns += n * durationUnits[m[2]]
		rest = rest[len(m[0]):]
	}
	if text == "" || ns > 7*24*3600e9 {
		return 0, false
	}
	return time.Duration(ns), true
}

// heldStop is closed once the process stops: every held connection ends (WebSockets with 1001,
// as the Rust models close them), instead of holding http.Server.Shutdown for its whole wait.
type heldStop struct {
	once sync.Once
	ch   chan struct{}
	// open counts the WebSockets not yet closed, so the stop can wait for their close handshakes.
	open sync.WaitGroup
}

func (h *heldStop) done() chan struct{} {
	h.once.Do(func() { h.ch = make(chan struct{}) })
	return h.ch
}

// StopHeld ends every held connection (http.Server.RegisterOnShutdown calls it, once).
func (s *Server) StopHeld() {
	ch := s.stop.done()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// WaitHeld waits up to `limit` for every WebSocket's close handshake after StopHeld.
func (s *Server) WaitHeld(limit time.Duration) {
	done := make(chan struct{})
	go func() { s.stop.open.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
	}
}

// held serves /ws and /events inside the model's Exec; false when the path is neither.
func (s *Server) held(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet || (r.URL.Path != "/ws" && r.URL.Path != "/events") {
		return false
	}
	if s.Model == "sequential" {
		writeError(w, 501, "sequential holds no connection (one at a time, by design): use another model for /ws and /events")
		return true
	}
	var ran bool
	refused := s.Exec(func() {
		ran = true
		if r.URL.Path == "/ws" {
			s.websocket(w, r)
		} else {
			s.events(w, r)
		}
	})
	if !ran {
		s.Counters.Reject()
		writeError(w, 503, refused)
	}
	return true
}

func writeError(w http.ResponseWriter, status int, msg string) {
	body := contract.ErrorBody(msg)
	w.Header().Set("Content-Type", contract.JSON)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (s *Server) websocket(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Sec-WebSocket-Key") == "" {
		writeError(w, 400, "GET /ws needs Upgrade: websocket and Sec-WebSocket-Key")
		return
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return // Accept answered the client itself
	}
	s.stop.open.Add(1)
	defer s.stop.open.Done()
	defer c.CloseNow()
	c.SetReadLimit(heldMaxFrame)
	var once sync.Once
	idle := time.AfterFunc(heldIdle, func() { once.Do(func() { _ = c.Close(websocket.StatusGoingAway, "idle") }) })
	defer idle.Stop()
	ended := make(chan struct{})
	defer close(ended)
	go func() {
		select {
		case <-s.stop.done():
			once.Do(func() { _ = c.Close(websocket.StatusGoingAway, "server going away") })
		case <-ended:
		}
	}()
	ctx := context.Background()
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			return // closed by the client (the library answered its close), idle, or broken
		}
		idle.Reset(heldIdle)
		if r.URL.RawQuery != "" && s.work(ctx, r.URL.RawQuery).status != 200 {
			once.Do(func() { _ = c.Close(websocket.StatusInternalError, "the message's steps failed") })
			return
		}
		if c.Write(ctx, typ, msg) != nil {
			return
		}
	}
}

func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	every := eventsEvery
	if d, ok := heldDuration(r.URL.Query().Get("every")); ok {
		every = max(d, eventsMin)
	}
	flusher, _ := w.(http.Flusher)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	if s.Close {
		h.Set("Connection", "close")
	}
	w.WriteHeader(200)
	due := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for seq := 1; ; seq++ {
		select {
		case <-r.Context().Done():
			return
		case <-s.stop.done():
			return
		case <-timer.C:
		}
		stamp := time.Now().UnixMicro()
		if _, err := fmt.Fprintf(w, "id: %d\ndata: {\"seq\":%d,\"sent_unix_us\":%d}\n\n", seq, seq, stamp); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		due = due.Add(every)
		timer.Reset(time.Until(due))
	}
}
