package tests

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// mcSet stores value under key in the memcached at IOLAB_MC (text protocol).
func mcSet(t *testing.T, key, value string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", os.Getenv("IOLAB_MC"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "set %s 0 0 %d\r\n%s\r\n", key, len(value), value)
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "STORED\r\n" {
		t.Fatalf("set %s: %q %v", key, line, err)
	}
}

// pg: pgxpool holds `pg_pool` connections; the rest wait for one, and past --pg-wait are 503.
func TestPgPoolBoundsQueries(t *testing.T) {
	backends(t, "IOLAB_PG")
	tg := start(t, true, "--model", "virtual", "--pg-pool", "2")
	wall, as := together(t, tg.URL, repeat("/work?steps=pg:300", 6))
	if s := statuses(as); s[200] != 6 {
		t.Fatalf("statuses %v: %s", s, as[0].Body)
	}
	if wall < 850*time.Millisecond {
		t.Errorf("6 queries of 300 ms on 2 connections took %s: the pool did not bound them", wall)
	}
	short := start(t, true, "--model", "virtual", "--pg-pool", "1", "--pg-wait", "100")
	_, as = together(t, short.URL, repeat("/work?steps=pg:400", 3))
	s := statuses(as)
	if s[200] != 1 || s[503] != 2 {
		t.Fatalf("pg_pool 1, pg-wait 100 ms, 3 at once: statuses %v", s)
	}
	for _, a := range as {
		if a.Status == 503 && !strings.Contains(string(a.Body), "backend 'pg' pool timeout after 100 ms") {
			t.Errorf("503 body: %s", a.Body)
		}
	}
}

// mc: one connection (mc_pool 1, E4's set-up) serves many requests in turn; body=value answers
// the value's bytes; a miss is a 502 naming the key.
func TestMcOneConnection(t *testing.T) {
	backends(t, "IOLAB_MC")
	value := strings.Repeat("go-mc-", 20_000) // 120 KB: several reads
	mcSet(t, "iolab-go-test", value)
	tg := start(t, true, "--model", "virtual", "--mc-pool", "1")
	_, as := together(t, tg.URL, repeat("/work?steps=mc:iolab-go-test&body=value", 20))
	for _, a := range as {
		if a.Status != 200 || string(a.Body) != value || a.Header.Get("Content-Type") != "application/octet-stream" {
			t.Fatalf("status %d, %d bytes, %s", a.Status, len(a.Body), a.Header.Get("Content-Type"))
		}
	}
	miss := get(t, tg.URL+"/work?steps=mc:iolab-go-absent-key")
	if miss.Status != 502 || !strings.Contains(string(miss.Body), "'iolab-go-absent-key' not found") {
		t.Errorf("miss: %d %s", miss.Status, miss.Body)
	}
	if n := metric(t, tg.URL, `iolab_backend_calls_total{kind="mc"}`); n != 21 {
		t.Errorf("mc calls %v, want 21", n)
	}
}

// mc against a server that is not there: 503, and the target keeps serving.
func TestMcUnavailableIs503(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	tg := start(t, false, "--model", "pool", "--mc", addr)
	a := get(t, tg.URL+"/work?steps=mc:k")
	if a.Status != 503 || !strings.Contains(string(a.Body), "backend 'mc' unavailable") {
		t.Errorf("%d %s", a.Status, a.Body)
	}
	if a := get(t, tg.URL+"/work?steps=sleep:1"); a.Status != 200 {
		t.Errorf("after: %d", a.Status)
	}
}

// http: net/http's client, no cap: 30 calls of 300 ms overlap.
func TestHttpCallsOverlap(t *testing.T) {
	backends(t, "IOLAB_HTTP_BACKEND")
	tg := start(t, true, "--model", "virtual")
	wall, as := together(t, tg.URL, repeat("/work?steps=par(http:300,http:300)", 30))
	if s := statuses(as); s[200] != 30 {
		t.Fatalf("statuses %v: %s", s, as[0].Body)
	}
	if wall > 1500*time.Millisecond {
		t.Errorf("30 x par(http:300,http:300) took %s: not overlapped", wall)
	}
}
