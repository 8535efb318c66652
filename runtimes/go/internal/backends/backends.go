// Package backends is where io steps go: the embedded `sleep`, and `http`, `pg` and `mc` when
// their addresses are given. Every client is written in Go's blocking style (the calling
// goroutine waits; the runtime parks it on the netpoller or a timer and runs another); a model
// decides which goroutine, and which OS thread, makes the call. Every call is counted in
// /metrics before it starts, whatever its outcome.
package backends

import (
	"context"
	"time"

	"iolab/runtimes/go/internal/contract"
	"iolab/runtimes/go/internal/counters"
	"iolab/runtimes/go/internal/steps"
)

// Config says where each backend is and how big its pools are.
type Config struct {
	HTTP   string // base URL of iolab's delay service, "" when none
	PG     string // PostgreSQL URL, "" when none
	MC     string // memcached HOST:PORT, "" when none
	PGPool int
	PGWait time.Duration
	MCPool int
}

// Backends are one process's clients.
type Backends struct {
	counters *counters.Counters
	http     *HTTP
	pg       *PG
	mc       *MC
}

// New makes the clients of the configured backends; none connects before its first call.
func New(cfg Config, c *counters.Counters) (*Backends, error) {
	b := &Backends{counters: c}
	if cfg.HTTP != "" {
		b.http = NewHTTP(cfg.HTTP)
	}
	if cfg.PG != "" {
		pg, err := NewPG(cfg.PG, cfg.PGPool, cfg.PGWait)
		if err != nil {
			return nil, err
		}
		b.pg = pg
	}
	if cfg.MC != "" {
		b.mc = NewMC(cfg.MC, cfg.MCPool)
	}
	return b, nil
}

// Configured reports whether steps of `kind` can run.
func (b *Backends) Configured(kind string) bool {
	switch kind {
	case "sleep":
		return true
	case "http":
		return b.http != nil
	case "pg":
		return b.pg != nil
	case "mc":
		return b.mc != nil
	}
	return false
}

// CountCall counts a call of `kind` (also one refused because it is not configured).
func (b *Backends) CountCall(kind string) { b.counters.Call(kind) }

// Call runs one io step on the calling goroutine; the fetched value for mc, else nil. `sleep`
// is how a sleep step waits (time.Sleep, or a syscall that holds the OS thread).
func (b *Backends) Call(ctx context.Context, io steps.Step, sleep func(time.Duration)) ([]byte, error) {
	b.counters.Call(io.Kind)
	d := time.Duration(io.Micros) * time.Microsecond
	switch io.Kind {
	case "sleep":
		sleep(d)
		return nil, nil
	case "http":
		return nil, b.http.Delay(ctx, io.Micros)
	case "pg":
		return nil, b.pg.Sleep(ctx, d)
	case "mc":
		return b.mc.Get(io.Key)
	}
	return nil, contract.Errorf(500, "unknown backend kind '%s'", io.Kind)
}

// Close releases the clients' connections.
func (b *Backends) Close() {
	if b.pg != nil {
		b.pg.Close()
	}
	if b.mc != nil {
		b.mc.Close()
	}
}
