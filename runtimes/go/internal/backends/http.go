package backends

import (
	"context"
	"io"
	"net"
	"net/http"
	"time"

	"iolab/runtimes/go/internal/contract"
	"iolab/runtimes/go/internal/steps"
)

// HTTP is `http:MS`: `GET {base}/delay?ms=MS` on iolab's delay service through net/http's
// client, the way Go code calls a service. No cap on connections, as in the Rust and JVM
// targets: the delay service is not the resource under study; idle ones are kept for reuse.
type HTTP struct {
	base   string
	client *http.Client
}

// NewHTTP makes the client; it connects on the first call.
func NewHTTP(base string) *HTTP {
	t := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        0, // no overall cap
		MaxIdleConnsPerHost: 1000,
		IdleConnTimeout:     90 * time.Second,
	}
	return &HTTP{base: base, client: &http.Client{Transport: t}}
}

// Delay calls the delay service for `micros` and reads its answer.
func (h *HTTP) Delay(ctx context.Context, micros int64) error {
	// The step's own delay plus a margin: a hung service must not hang the target.
	ctx, cancel := context.WithTimeout(ctx, time.Duration(micros)*time.Microsecond+30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.base+"/delay?ms="+steps.MillisText(micros), nil)
	if err != nil {
		return contract.Errorf(500, "backend 'http': %v", err)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return contract.Errorf(503, "backend 'http' unavailable: %v", err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return contract.Errorf(503, "backend 'http' unavailable: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		return contract.Errorf(502, "backend 'http': delay service answered %d", resp.StatusCode)
	}
	return nil
}
