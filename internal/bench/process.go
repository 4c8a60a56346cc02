package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one `herald serve` child process.
type process struct {
	cmd  *exec.Cmd
	api  string
	done chan struct{}
	mu   sync.Mutex
	logs []string // the last lines of its log
	// dumping is set by dump: from then on every line is kept in dumped,
	// not only the last ones.
	dumping bool
	dumped  []string
}

// startProcess runs `bin serve` on a free loopback port with env added to
// this process's environment, and waits until it listens.
func startProcess(ctx context.Context, bin string, env []string) (*process, error) {
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0")
	// A non-dev serve refuses to start without an API key; the child is
	// driven through the database, so a throwaway bootstrap key will do.
	cmd.Env = append(append(os.Environ(), "HERALD_BOOTSTRAP_API_KEY=bench-bootstrap-key-0123456789abcdef"), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s serve: %w", bin, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			if p.dumping {
				p.dumped = append(p.dumped, line)
			}
			if len(p.logs) == 200 {
				p.logs = p.logs[1:]
			}
			p.logs = append(p.logs, line)
			p.mu.Unlock()
			var l struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "herald listening" {
				select {
				case addr <- l.Addr:
				default:
				}
			}
		}
		cmd.Wait() //nolint:errcheck // a killed process exits with an error on purpose
	}()
	select {
	case p.api = <-addr:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("herald exited before listening:\n%s", p.tail())
	case <-time.After(60 * time.Second):
		p.kill()
		return nil, fmt.Errorf("herald did not listen within 60 s:\n%s", p.tail())
	case <-ctx.Done():
		p.kill()
		return nil, ctx.Err()
	}
}

// tail is the end of the process's log, for an error message.
func (p *process) tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.logs[max(0, len(p.logs)-20):], "\n")
}

// kill sends SIGKILL and waits for the process to exit.
func (p *process) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL) //nolint:errcheck // it may have exited already
	<-p.done
}

// dump makes the process print every goroutine's stack and exit
// (SIGQUIT; the Go runtime's own dump) and returns the stacks, grouped
// (summarizeGoroutines). It is for a run that stalled: where herald's
// goroutines wait says what it waits for.
func (p *process) dump(timeout time.Duration) string {
	p.mu.Lock()
	p.dumping = true
	p.mu.Unlock()
	p.cmd.Process.Signal(syscall.SIGQUIT) //nolint:errcheck // it may have exited already
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.kill()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return summarizeGoroutines(p.dumped)
}

// stop asks the process to shut down gracefully, killing it after timeout.
func (p *process) stop(timeout time.Duration) {
	p.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck // it may have exited already
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.kill()
	}
}
