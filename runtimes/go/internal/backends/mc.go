package backends

// A memcached client of its own, on the text protocol's `get`, because neither Go client fits:
// github.com/bradfitz/gomemcache has no tagged release (pseudo-versions only) and cannot cap its
// connections (it dials a new one for every concurrent get beyond its idle ones), while the lab
// needs `mc_pool` to be exactly the connections held (1: E4's single connection). The protocol
// part is three lines: `get KEY`, then `VALUE KEY FLAGS BYTES` + data + `END`, or `END` alone.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"iolab/runtimes/go/internal/contract"
)

// Waits of the mc client, as the other runtimes' (30 s for a connection and for an answer).
const (
	mcLeaseWait = 30 * time.Second
	mcIOWait    = 30 * time.Second
	mcConnect   = 5 * time.Second
)

// MC is `mc:KEY`: `mc_pool` connections leased one get at a time, first come first served (a
// buffered channel hands a returned slot to the longest waiter), waiting up to 30 s for one.
type MC struct {
	addr  string
	slots chan *mcConn
}

type mcConn struct {
	c net.Conn
	r *bufio.Reader
}

// NewMC makes the lease; connections are dialled on first use.
func NewMC(addr string, pool int) *MC {
	m := &MC{addr: addr, slots: make(chan *mcConn, pool)}
	for range pool {
		m.slots <- &mcConn{}
	}
	return m
}

// Get fetches `key`'s value; a miss is a 502 naming the key.
func (m *MC) Get(key string) ([]byte, error) {
	var s *mcConn
	timer := time.NewTimer(mcLeaseWait)
	select {
	case s = <-m.slots:
		timer.Stop()
	case <-timer.C:
		return nil, contract.Errorf(503, "backend 'mc' pool timeout after %d ms", mcLeaseWait.Milliseconds())
	}
	defer func() { m.slots <- s }()
	if s.c == nil {
		c, err := net.DialTimeout("tcp", m.addr, mcConnect)
		if err != nil {
			return nil, contract.Errorf(503, "backend 'mc' unavailable: %s: %v", m.addr, err)
		}
		s.c, s.r = c, bufio.NewReaderSize(c, 16*1024)
	}
	value, found, err := s.get(key)
	if err != nil {
		// A get cut off mid-answer leaves bytes on the connection: drop it.
		s.c.Close()
		s.c, s.r = nil, nil
		return nil, contract.Errorf(503, "backend 'mc' unavailable: %s: %v", m.addr, err)
	}
	if !found {
		return nil, contract.Errorf(502, "backend 'mc': key '%s' not found (store it with `iolab backend mc-fill --key %s`)", key, key)
	}
	return value, nil
}

func (s *mcConn) get(key string) ([]byte, bool, error) {
	_ = s.c.SetDeadline(time.Now().Add(mcIOWait))
	if _, err := io.WriteString(s.c, "get "+key+"\r\n"); err != nil {
		return nil, false, err
	}
	line, err := s.r.ReadSlice('\n')
	if err != nil {
		return nil, false, err
	}
	if bytes.Equal(line, []byte("END\r\n")) {
		return nil, false, nil
	}
	f := bytes.Fields(line)
	if len(f) < 4 || string(f[0]) != "VALUE" || string(f[1]) != key {
		return nil, false, fmt.Errorf("unexpected answer %q", bytes.TrimSpace(line))
	}
	n, err := strconv.Atoi(string(f[3]))
	if err != nil || n < 0 {
		return nil, false, fmt.Errorf("bad length in %q", bytes.TrimSpace(line))
	}
	value := make([]byte, n+2)
	if _, err := io.ReadFull(s.r, value); err != nil {
		return nil, false, err
	}
	if end, err := s.r.ReadSlice('\n'); err != nil || !bytes.Equal(end, []byte("END\r\n")) {
		return nil, false, fmt.Errorf("no END after the value (%v)", err)
	}
	return value[:n], true, nil
}

// Close closes the idle connections.
func (m *MC) Close() {
	for {
		select {
		case s := <-m.slots:
			if s.c != nil {
				s.c.Close()
			}
		default:
			return
		}
	}
}
