package server

import (
	"testing"
	"time"
)

// The /events interval is read as iolab reads durations (crates/model units.rs).
func TestHeldDuration(t *testing.T) {
	good := map[string]time.Duration{
		"100ms": 100 * time.Millisecond, "1s": time.Second, "1m30s": 90 * time.Second,
		"2min": 2 * time.Minute, "250us": 250 * time.Microsecond, "1.5s": 1500 * time.Millisecond,
	}
	for text, want := range good {
		if got, ok := heldDuration(text); !ok || got != want {
			t.Errorf("heldDuration(%q) = %v, %v; want %v", text, got, ok, want)
		}
	}
	for _, bad := range []string{"", "100", "ms", "1x", "1 s", "1mins", "200h"} {
		if got, ok := heldDuration(bad); ok {
			t.Errorf("heldDuration(%q) = %v; want refused", bad, got)
		}
	}
}
