package launcher

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"iolab/runtimes/go/internal/counters"
	"iolab/runtimes/go/internal/listen"
	"iolab/runtimes/go/internal/models"
)

const (
	countersEnv = "IOLAB_GO_COUNTERS"
	rowEnv      = "IOLAB_GO_ROW"
)

// startPrefork starts `processes` copies of this program, each listening on one port with
// SO_REUSEPORT (the kernel spreads new connections among them). The launcher keeps a bound,
// not listening, socket on the port so that no one else takes it; it gets no connections.
func startPrefork(s *Settings, countersPath string) (*target, error) {
	fd, err := listen.Bound(s.Port, true)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on 127.0.0.1: %v (pick another --port, or 0)", err)
	}
	port, err := listen.Port(fd)
	if err != nil {
		syscall.Close(fd)
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		syscall.Close(fd)
		return nil, err
	}
	cs := *s
	cs.Port = port
	env := cs.encode()
	t := &target{port: port, died: make(chan error, s.Knobs["processes"])}
	type proc struct {
		cmd    *exec.Cmd
		exited chan struct{}
	}
	var procs []proc
	t.stop = func() {
		for _, p := range procs {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
		deadline := time.After(8 * time.Second)
		for _, p := range procs {
			select {
			case <-p.exited:
			case <-deadline:
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
		}
		syscall.Close(fd)
	}
	for i := 1; i <= s.Knobs["processes"]; i++ {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), childEnv+"="+env, countersEnv+"="+countersPath, rowEnv+"="+strconv.Itoa(i))
		cmd.Stdout = os.Stderr // stdout is the launcher's protocol
		cmd.Stderr = os.Stderr
		// A launcher killed outright takes its processes with it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
		if err := cmd.Start(); err != nil {
			t.stop()
			return nil, fmt.Errorf("cannot start prefork process %d: %v", i, err)
		}
		p := proc{cmd, make(chan struct{})}
		procs = append(procs, p)
		go func() {
			err := cmd.Wait()
			close(p.exited)
			t.died <- fmt.Errorf("prefork process %d (pid %d) exited: %v", i, cmd.Process.Pid, err)
		}()
	}
	return t, nil
}

// child is one prefork process: sequential on the shared port, until SIGTERM.
func child(sigs chan os.Signal) int {
	s, err := decodeChild()
	if err != nil {
		logf("%v", err)
		return 2
	}
	row, _ := strconv.Atoi(os.Getenv(rowEnv))
	c, err := counters.Open(os.Getenv(countersEnv), row)
	if err != nil {
		logf("prefork process %d: %v", row, err)
		return 1
	}
	ln, err := listen.TCP(s.Port, s.Knobs["backlog"], true)
	if err != nil {
		logf("prefork process %d: cannot listen on 127.0.0.1:%d: %v", row, s.Port, err)
		return 1
	}
	m, _ := models.Find("prefork")
	srv, sv, b, err := prepare(s, m, ln, c)
	if err != nil {
		logf("prefork process %d: %v", row, err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sv.Listener) }()
	select {
	case <-sigs:
		_ = srv.Close()
		b.Close()
		return 0
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return 0
		}
		logf("prefork process %d: %v", row, err)
		return 1
	}
}
