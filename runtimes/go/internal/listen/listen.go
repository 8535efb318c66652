// Package listen opens the target's listening socket on 127.0.0.1 with the two things Go's net
// package does not let a program choose: the listen backlog (net.Listen always asks for
// net.core.somaxconn) and SO_REUSEPORT (prefork's processes each listen on the same port and
// the kernel spreads new connections among them). The socket is made with system calls and
// handed to net.FileListener, so the rest is ordinary Go.
package listen

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// TCP listens on 127.0.0.1:port (0: a free port) with `backlog` (0: the kernel's somaxconn, as
// net.Listen does); reusePort sets SO_REUSEPORT before bind.
func TCP(port, backlog int, reusePort bool) (net.Listener, error) {
	fd, err := Bound(port, reusePort)
	if err != nil {
		return nil, err
	}
	if backlog <= 0 {
		backlog = Somaxconn()
	}
	if err := syscall.Listen(fd, backlog); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("listen: %w", err)
	}
	f := os.NewFile(uintptr(fd), "listener")
	defer f.Close() // FileListener holds its own duplicate
	return net.FileListener(f)
}

// Bound is a TCP socket bound to 127.0.0.1:port, not listening: prefork's launcher holds one
// to keep the port its children share (a bound socket receives no connections).
func Bound(port int, reusePort bool) (int, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	if reusePort {
		if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, 0xf /* SO_REUSEPORT */, 1); err != nil {
			syscall.Close(fd)
			return -1, fmt.Errorf("SO_REUSEPORT: %w", err)
		}
	}
	addr := &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}
	if err := syscall.Bind(fd, addr); err != nil {
		syscall.Close(fd)
		return -1, fmt.Errorf("bind 127.0.0.1:%d: %w", port, err)
	}
	return fd, nil
}

// Port is the local port of a bound socket.
func Port(fd int) (int, error) {
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return 0, err
	}
	if in, ok := sa.(*syscall.SockaddrInet4); ok {
		return in.Port, nil
	}
	return 0, fmt.Errorf("not an IPv4 socket")
}

// Somaxconn is the kernel's net.core.somaxconn, the backlog net.Listen asks for (4096 since
// Linux 5.4; 128 before).
func Somaxconn() int {
	b, err := os.ReadFile("/proc/sys/net/core/somaxconn")
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 {
			return min(n, 65535)
		}
	}
	return 4096
}
