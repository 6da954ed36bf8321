package testenv

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// process is one child process (etcd or kube-apiserver) with its log file.
type process struct {
	name    string
	path    string
	args    []string
	logPath string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when the running process has exited
}

func (p *process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.path, p.args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// Pdeathsig kills the child if the test binary dies without cleaning up (a panic, a
	// -timeout); Setpgid keeps a Ctrl-C on the terminal from reaching it before we stop it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = logFile.Close()
		close(done)
	}()
	p.cmd, p.done = cmd, done
	return nil
}

// running reports whether the process was started and has not exited.
func (p *process) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop sends sig and waits for the process to exit; after grace it is killed.
func (p *process) stop(sig syscall.Signal, grace time.Duration) error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	default:
	}
	if err := cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal %s: %w", p.name, err)
	}
	select {
	case <-done:
		return nil
	case <-time.After(grace):
	}
	_ = cmd.Process.Kill()
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, cmd.Process.Pid)
	}
}

// exited returns a channel closed when the current process exits.
func (p *process) exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

// logTail returns the last n bytes of the process log, for error messages.
func (p *process) logTail(n int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}

// freePorts returns n distinct TCP ports that were free on 127.0.0.1 a moment ago.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func newProcess(name, path, dir string, args []string) *process {
	return &process{name: name, path: path, args: args, logPath: filepath.Join(dir, name+".log")}
}

// pid returns the running process's id, 0 if it is not running.
func (p *process) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	select {
	case <-p.done:
		return 0
	default:
		return p.cmd.Process.Pid
	}
}
