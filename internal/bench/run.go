package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/heraldhq/herald"
	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	webhookemu "github.com/heraldhq/herald/emulator/webhook"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/provider/fcm"
)

// Run performs one benchmark and returns its measurements. It fails on a
// bad Config, an unreachable server, or deliveries that do not finish
// within DrainTimeout (the partial Result is returned with the error).
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.defaults(); err != nil {
		return Result{}, err
	}
	run := strconv.FormatInt(time.Now().UnixNano()%(1<<40), 36)
	sk := newSink(false)
	em, err := startEmulator(cfg.EmulatorAddr, sk)
	if err != nil {
		return Result{}, err
	}
	defer em.Close()
	pop := newPopulation(run, cfg.Users, cfg.DevicesPerUser, cfg.Faults.Unregistered)
	if err := injectFaults(em, cfg.Faults, pop); err != nil {
		return Result{}, err
	}
	if cfg.CredentialsOut != "" {
		if err := os.WriteFile(cfg.CredentialsOut, em.ServiceAccountJSON("herald-bench"), 0o600); err != nil {
			return Result{}, err
		}
	}

	res := Result{Server: cfg.Server, Store: "remote", Mode: "closed-loop"}
	if cfg.Rate > 0 {
		res.Mode = "open-loop"
	}
	if cfg.Backlog {
		res.Mode = "backlog"
	}
	var srv *inProcess
	var api *apiClient
	if cfg.Server == "" {
		if srv, err = startInProcess(ctx, &cfg, em, cfg.Backlog); err != nil {
			return res, fmt.Errorf("in-process server: %w", err)
		}
		defer srv.close(context.WithoutCancel(ctx))
		res.Server, res.Store = "in-process", "sqlite"
		if strings.HasPrefix(cfg.Database, "postgres") {
			res.Store = "postgres"
		}
		api = newAPIClient(srv.url, "", cfg.Concurrency)
	} else {
		api = newAPIClient(cfg.Server, cfg.APIKey, cfg.Concurrency)
		fmt.Fprintf(cfg.Progress, "waiting for %s (fcm.endpoint must be %s)\n", cfg.Server, em.URL())
		if err := api.waitReady(ctx, cfg.ReadyTimeout); err != nil {
			return res, err
		}
	}

	p := newProgress(cfg.Progress)
	defer p.stop()
	var registered atomic.Int64
	p.set("users", func() (int64, int64) { return registered.Load(), int64(len(pop.users)) })
	if err := pop.register(ctx, api, cfg.Concurrency, &registered); err != nil {
		return res, err
	}

	m, err := startMeter(ctx, srv, api, benchDatabase(cfg, res))
	if err != nil {
		return res, err
	}
	triggers := cfg.Notifications / cfg.Recipients
	expected := pop.expectedSends(triggers, cfg.Recipients)
	// A digest run ends when every digest's push was accepted: the queue is
	// empty while the digests collect, so it is not a sign of the end.
	look, wantDigests := settleLook, 0
	if cfg.DigestWindow > 0 {
		res.Mode += ", digest " + cfg.DigestWindow.String()
		maxItems := cmp.Or(cfg.DigestMaxItems, herald.DefaultMaxDigestItems)
		wantDigests, expected = pop.expectedDigests(triggers, cfg.Recipients, maxItems)
		look = cfg.DrainTimeout
	}
	var st loadStats
	p.rates(&st, sk)
	p.set("trigger", func() (int64, int64) { return st.notifications.Load(), int64(cfg.Notifications) })
	start := time.Now()
	sk.latencyFrom.Store(start.Add(cfg.Warmup).UnixNano())
	trigger(ctx, api, pop, run, triggers, cfg.Recipients, cfg.Concurrency, cfg.Rate, &st)
	res.TriggerSeconds = time.Since(start).Seconds()
	if cfg.DigestWindow > 0 && time.Since(start) >= cfg.DigestWindow {
		return res, fmt.Errorf("the triggers took %v, past the digest window (%v): users' triggers split into more digests than %d; send fewer or widen --digest-window",
			time.Since(start).Round(time.Millisecond), cfg.DigestWindow, wantDigests)
	}
	sendStart := start
	if cfg.Backlog {
		fill, err := m.stop()
		if err != nil {
			return res, err
		}
		res.FillResources = &fill
		if m, err = startMeter(ctx, srv, api, benchDatabase(cfg, res)); err != nil {
			return res, err
		}
		sendStart = time.Now()
		if err := srv.resume(ctx); err != nil {
			return res, err
		}
	}
	p.set("deliver", func() (int64, int64) { return int64(sk.accepted.Load()), int64(expected) })
	drainErr := waitDrained(ctx, api, sk, func() uint64 { return emulatorRequests(em) }, expected, look, cfg.DrainTimeout)
	if srv != nil && srv.hooks != nil && drainErr == nil {
		// A delivery.finished per push sent and a
		// notification.status_changed per notification made final.
		var want uint64
		if subscribed(cfg.WebhookEvents, heraldtype.WebhookDeliveryFinished) {
			want += sk.accepted.Load()
		}
		if subscribed(cfg.WebhookEvents, heraldtype.WebhookNotificationStatusChanged) {
			want += pop.expectedFinals(triggers, cfg.Recipients)
		}
		p.set("webhooks", func() (int64, int64) { return int64(srv.hooks.Stats().Accepted), int64(want) })
		drainErr = waitWebhooks(ctx, srv.hooks, want, cfg.DrainTimeout)
		res.Webhooks = srv.hooks.Stats().Accepted
		res.WebhookSeconds = time.Since(sendStart).Seconds()
	}
	p.stop()

	if res.Resources, err = m.stop(); err != nil {
		return res, err
	}
	if cfg.DigestWindow > 0 && drainErr == nil {
		drainErr = checkDigests(ctx, srv, em, wantDigests, expected, &res)
	}
	res.Notifications = int(st.notifications.Load())
	res.Deliveries = int(st.deliveries.Load())
	res.TriggerErrors = int(st.errors.Load())
	res.TriggerRetries = int(st.retries.Load())
	res.NotificationsPerSec = float64(res.Notifications) / res.TriggerSeconds
	stats := em.Stats()
	res.Sent, res.Rejected, res.EarlyRetries = stats.Accepted, stats.Rejected, stats.EarlyRetries
	res.Resources.Machine.perDelivery(res.Sent)
	if last := sk.lastNanos.Load(); last > 0 {
		res.SendSeconds = time.Unix(0, last).Sub(sendStart).Seconds()
		res.DeliveriesPerSec = float64(res.Sent) / res.SendSeconds
	}
	h := &sk.latency
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	res.Latency = Latency{WarmupSeconds: cfg.Warmup.Seconds(), Count: h.count(), P50: ms(h.quantile(0.50)), P95: ms(h.quantile(0.95)),
		P99: ms(h.quantile(0.99)), Max: ms(h.maxValue())}
	if drainErr == nil && res.TriggerErrors > 0 {
		drainErr = fmt.Errorf("%s failed; last error: %v", count(res.TriggerErrors, "trigger", "triggers"), st.lastErr.Load())
	}
	return res, drainErr
}

// checkDigests checks, once the pushes were counted, that the server made
// exactly the digests the users' triggers call for, each sent once: it
// waits for late pushes (a digest sent twice) for two of the digest
// worker's polls before it reads the count.
func checkDigests(ctx context.Context, srv *inProcess, em *fcmemu.Emulator, want int, sends uint64, res *Result) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(2 * time.Second):
	}
	total, sent, err := srv.digestCounts(ctx)
	res.Digests = total
	switch {
	case err != nil:
		return fmt.Errorf("reading the digests: %w", err)
	case total != want || sent != want:
		return fmt.Errorf("the server made %d digests (%d sent), want %d", total, sent, want)
	case em.Stats().Accepted != sends:
		return fmt.Errorf("the emulator accepted %d pushes for %d digests, want %d", em.Stats().Accepted, want, sends)
	}
	return nil
}

// settleLook is how often waitDrained asks the server whether its queue is
// empty.
const settleLook = 2 * time.Second

// emulatorRequests counts the sends the emulator answered, accepted or not.
func emulatorRequests(em *fcmemu.Emulator) uint64 {
	st := em.Stats()
	n := st.Accepted
	for _, r := range st.Rejected {
		n += r
	}
	return n
}

// startEmulator runs the FCM emulator that counts into sk. It keeps one
// recorded message only: the sink has what the bench needs, and recording
// 100,000 messages would inflate the memory measured in process.
func startEmulator(addr string, sk *sink) (*fcmemu.Emulator, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	em := fcmemu.New(fcmemu.Config{MaxRecorded: 1, OnAccept: sk.onAccept})
	if _, err := em.Start(addr); err != nil {
		return nil, fmt.Errorf("fcm emulator on %s: %w", addr, err)
	}
	return em, nil
}

// injectFaults sets the rate faults and marks the dead tokens.
func injectFaults(em *fcmemu.Emulator, f Faults, pop *population) error {
	err := em.SetFaults(fcmemu.Faults{
		Unavailable:   fcmemu.RateFault{Rate: f.Unavailable},
		Internal:      fcmemu.RateFault{Rate: f.Internal},
		QuotaExceeded: fcmemu.RateFault{Rate: f.Quota, RetryAfterSeconds: f.QuotaRetryAfter},
	})
	if err != nil {
		return err
	}
	for u := range pop.tokens {
		for d, tok := range pop.tokens[u] {
			if pop.dead[u][d] {
				if err := em.FailToken(tok, fcmemu.TokenFault{Code: fcm.CodeUnregistered}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// benchDatabase is the name of the PostgreSQL database an in-process
// server runs on, "" for SQLite or a remote server (whose database is
// unknown).
func benchDatabase(cfg Config, res Result) string {
	if res.Store != "postgres" || cfg.Server != "" {
		return ""
	}
	pc, err := pgconn.ParseConfig(cfg.Database)
	if err != nil {
		return ""
	}
	return pc.Database
}

// startMeter measures the server (this process, or a remote one through its
// /metrics) and the whole machine; with database (an in-process server on
// PostgreSQL), the local PostgreSQL processes serving it too.
func startMeter(ctx context.Context, srv *inProcess, api *apiClient, database string) (meter, error) {
	var m meter
	var err error
	if srv != nil {
		m, err = startProcessMeter()
	} else {
		m, err = startMetricsMeter(ctx, api)
	}
	if err != nil {
		return nil, err
	}
	return withMachine(m, database), nil
}

// waitDrained waits until the emulator has accepted every expected push,
// or, when faults make some deliveries die, until the server has no pending
// or leased delivery. One look at the server reads pending and then leased
// deliveries in two requests, and a delivery retried in between (leased at
// the first, pending again at the second) passes unseen; so the queue
// counts as empty only after two looks in a row found it so with no send
// reaching the emulator (sends counts them) between them, look apart.
func waitDrained(ctx context.Context, api *apiClient, sk *sink, sends func() uint64, expected uint64, look, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	lastCheck := time.Now()
	emptySince, wasEmpty := uint64(0), false
	for {
		if sk.accepted.Load() >= expected {
			return nil
		}
		if time.Since(lastCheck) > look {
			lastCheck = time.Now()
			before := sends()
			ok, err := api.settled(ctx)
			switch {
			case err != nil || !ok:
				wasEmpty = false
			case wasEmpty && sends() == emptySince:
				return nil
			default:
				wasEmpty, emptySince = true, before
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("deliveries not finished after %v: %d of %d pushes accepted", timeout, sk.accepted.Load(), expected)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitWebhooks waits until the receiver has accepted at least want
// messages, or timeout.
func waitWebhooks(ctx context.Context, hooks *webhookemu.Emulator, want uint64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for hooks.Stats().Accepted < want {
		if time.Now().After(deadline) {
			return fmt.Errorf("the webhook receiver accepted %d of %d messages within %v", hooks.Stats().Accepted, want, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// subscribed reports whether an endpoint subscribed to events (none:
// every type) gets eventType.
func subscribed(events []string, eventType string) bool {
	return len(events) == 0 || slices.Contains(events, eventType)
}
