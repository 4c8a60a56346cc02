package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Resources is what the server used during the measured phase.
type Resources struct {
	// CPUSeconds is user + system CPU time.
	CPUSeconds float64 `json:"cpu_seconds"`
	// CPUCores is CPUSeconds per wall-clock second (2.0 = two cores busy).
	CPUCores float64 `json:"cpu_cores"`
	// PeakRSSBytes is the highest resident set size: getrusage's ru_maxrss
	// in process, the highest process_resident_memory_bytes sampled from
	// /metrics for a remote server.
	PeakRSSBytes uint64 `json:"peak_rss_bytes"`
	// PeakGoBytes is the highest memory the Go runtime had mapped
	// (runtime/metrics /memory/classes/total:bytes); in process only.
	PeakGoBytes uint64 `json:"peak_go_bytes,omitempty"`
	// Source says what was measured: "process" (this process: Herald, the
	// emulator and the load generator together) or "metrics" (a remote
	// server's /metrics).
	Source string `json:"source"`
	// Machine is the whole machine's CPU use over the same phase (Linux
	// only).
	Machine *MachineCPU `json:"machine,omitempty"`
}

// meter samples a server's resource use until stopped.
type meter interface {
	stop() (Resources, error)
}

// processMeter measures this process with getrusage and runtime/metrics.
type processMeter struct {
	start   time.Time
	cpu0    float64
	done    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	peakGo  uint64
	samples []metrics.Sample
}

func startProcessMeter() (*processMeter, error) {
	cpu, _, err := rusage()
	if err != nil {
		return nil, err
	}
	m := &processMeter{start: time.Now(), cpu0: cpu, done: make(chan struct{}),
		samples: []metrics.Sample{{Name: "/memory/classes/total:bytes"}}}
	m.sample()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.done:
				return
			case <-t.C:
				m.sample()
			}
		}
	}()
	return m, nil
}

func (m *processMeter) sample() {
	metrics.Read(m.samples)
	if m.samples[0].Value.Kind() == metrics.KindUint64 {
		v := m.samples[0].Value.Uint64()
		m.mu.Lock()
		m.peakGo = max(m.peakGo, v)
		m.mu.Unlock()
	}
}

func (m *processMeter) stop() (Resources, error) {
	close(m.done)
	m.wg.Wait()
	m.sample()
	cpu, rss, err := rusage()
	if err != nil {
		return Resources{}, err
	}
	wall := time.Since(m.start).Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	return Resources{CPUSeconds: cpu - m.cpu0, CPUCores: (cpu - m.cpu0) / wall, PeakRSSBytes: rss,
		PeakGoBytes: m.peakGo, Source: "process"}, nil
}

// rusage returns this process's CPU seconds and peak RSS in bytes (Linux
// reports ru_maxrss in kilobytes).
func rusage() (float64, uint64, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, fmt.Errorf("getrusage: %w", err)
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	return cpu, uint64(ru.Maxrss) * 1024, nil
}

// metricsMeter scrapes a remote server's Prometheus endpoint.
type metricsMeter struct {
	api     *apiClient
	start   time.Time
	cpu0    float64
	done    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	peakRSS float64
	err     error
}

func startMetricsMeter(ctx context.Context, api *apiClient) (*metricsMeter, error) {
	v, err := scrape(ctx, api)
	if err != nil {
		return nil, err
	}
	m := &metricsMeter{api: api, start: time.Now(), cpu0: v["process_cpu_seconds_total"],
		peakRSS: v["process_resident_memory_bytes"], done: make(chan struct{})}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.done:
				return
			case <-t.C:
				m.sample(ctx)
			}
		}
	}()
	return m, nil
}

func (m *metricsMeter) sample(ctx context.Context) map[string]float64 {
	v, err := scrape(ctx, m.api)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.err = err
		return nil
	}
	m.peakRSS = max(m.peakRSS, v["process_resident_memory_bytes"])
	return v
}

func (m *metricsMeter) stop() (Resources, error) {
	close(m.done)
	m.wg.Wait()
	v := m.sample(context.Background())
	m.mu.Lock()
	defer m.mu.Unlock()
	if v == nil {
		return Resources{}, fmt.Errorf("scraping /metrics: %w", m.err)
	}
	cpu := v["process_cpu_seconds_total"] - m.cpu0
	return Resources{CPUSeconds: cpu, CPUCores: cpu / time.Since(m.start).Seconds(),
		PeakRSSBytes: uint64(m.peakRSS), Source: "metrics"}, nil
}

// scrape reads the process_* gauges of a Prometheus text exposition.
func scrape(ctx context.Context, api *apiClient) (map[string]float64, error) {
	resp, err := api.do(ctx, http.MethodGet, "/metrics", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(name, "process_") {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
			out[name] = f
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if _, ok := out["process_cpu_seconds_total"]; !ok {
		return nil, fmt.Errorf("GET /metrics has no process_cpu_seconds_total: is it a Herald server?")
	}
	return out, nil
}
