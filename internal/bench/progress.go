package bench

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress draws one live status line on a terminal (stderr): the phase, a
// bar, and the rates of the last interval. Plain text and carriage
// returns; no dependency.
type progress struct {
	w    io.Writer
	mu   sync.Mutex
	name string
	of   func() (done, total int64)
	st   *loadStats
	sk   *sink

	lastN, lastS int64
	lastAt       time.Time
	stopOnce     sync.Once
	done         chan struct{}
	wg           sync.WaitGroup
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, done: make(chan struct{}), lastAt: time.Now()}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
				p.draw()
			}
		}
	}()
	return p
}

// set starts a phase whose completion of returns.
func (p *progress) set(name string, of func() (int64, int64)) {
	p.mu.Lock()
	if p.name != "" && p.w != io.Discard {
		p.drawLocked()
		fmt.Fprintln(p.w)
	}
	p.name, p.of = name, of
	p.mu.Unlock()
}

// rates adds the accepted and sent rates to the line.
func (p *progress) rates(st *loadStats, sk *sink) {
	p.mu.Lock()
	p.st, p.sk = st, sk
	p.mu.Unlock()
}

func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drawLocked()
}

func (p *progress) drawLocked() {
	if p.of == nil || p.w == io.Discard {
		return
	}
	done, total := p.of()
	frac := 0.0
	if total > 0 {
		frac = min(float64(done)/float64(total), 1)
	}
	const width = 30
	bar := strings.Repeat("#", int(frac*width)) + strings.Repeat(".", width-int(frac*width))
	line := fmt.Sprintf("\r%-8s [%s] %5.1f%% %d/%d", p.name, bar, 100*frac, done, total)
	if p.st != nil {
		now := time.Now()
		dt := now.Sub(p.lastAt).Seconds()
		n, s := p.st.notifications.Load(), int64(p.sk.accepted.Load())
		if dt > 0 {
			line += fmt.Sprintf("  accepted %7.0f/s  sent %7.0f/s  p99 %v", float64(n-p.lastN)/dt,
				float64(s-p.lastS)/dt, p.sk.latency.quantile(0.99).Round(time.Millisecond))
		}
		p.lastN, p.lastS, p.lastAt = n, s, now
	}
	fmt.Fprint(p.w, line+"   ")
}

// stop draws the final line and ends it.
func (p *progress) stop() {
	p.stopOnce.Do(func() {
		close(p.done)
		p.wg.Wait()
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.of != nil && p.w != io.Discard {
			p.drawLocked()
			fmt.Fprintln(p.w)
		}
	})
}
