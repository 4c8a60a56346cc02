package herald

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/fanout"
	"github.com/heraldhq/herald/provider/fcm"
	"github.com/heraldhq/herald/store"
)

// BenchmarkRuleFanOut measures issue 20 item 7's fan-out (S3.13): one
// price-drop event whose audience is b.N users — each with a VIEW
// interest in the product and one Android device — is applied (Track)
// and fanned out by the rule runner (batches of 1,000, no pause) until
// every recipient's push delivery is enqueued. The figures: the whole
// fan-out in seconds, recipients/s, and the time from the event to its
// first batch committed (the first send follows at the workers' next
// claim, woken by the commit). The users, devices and interests are
// bulk-inserted by SQL in the setup, outside the timer.
//
//	go test -run '^$' -bench RuleFanOut/postgres -benchtime 100000x -timeout 30m .
func BenchmarkRuleFanOut(b *testing.B) {
	for _, db := range []string{"sqlite", "postgres"} {
		b.Run(db, func(b *testing.B) {
			d := openBenchDB(b, db)
			ctx := b.Context()
			em := fcmemu.New(fcmemu.Config{Seed: 1})
			if _, err := em.Start("127.0.0.1:0"); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { em.Close() })
			push, err := fcm.New(fcm.Config{CredentialsJSON: em.ServiceAccountJSON("p"), Endpoint: em.URL()})
			if err != nil {
				b.Fatal(err)
			}
			c, err := NewClient(Config{Store: d.st, Providers: map[string]Provider{"fcm": push},
				Types:  map[string]TypeConfig{"price_drop": {Channels: []heraldtype.Channel{heraldtype.ChannelPush}}},
				Logger: slog.New(slog.DiscardHandler), DisableWorkers: true, Rules: RuleConfig{Pause: -1}})
			if err != nil {
				b.Fatal(err)
			}
			bulkAudience(b, d, c, b.N)
			r := priceDropRule()
			r.Audience.Limit = max(b.N, 1)
			if _, _, err := c.PutRule(ctx, r); err != nil {
				b.Fatal(err)
			}
			ev := priceChange("ev-bench", 10000, 8500)
			ev.Subject = "product:0"
			cpu := startCPU(b, d)
			b.ResetTimer()
			start := time.Now()
			out, err := c.Track(ctx, ev)
			if err != nil || len(out.Rules) != 1 || out.Rules[0].Run == "" {
				b.Fatalf("Track: %+v %v", out, err)
			}
			runs, err := d.st.RunningRuleRuns(ctx, 1)
			if err != nil || len(runs) != 1 {
				b.Fatalf("running: %+v %v", runs, err)
			}
			first := time.Duration(0)
			run, err := newFirstBatchRunner(c, func() {
				if first == 0 {
					first = time.Since(start)
				}
			})
			if err != nil {
				b.Fatal(err)
			}
			if err := run.Execute(ctx, runs[0]); err != nil {
				b.Fatal(err)
			}
			elapsed := time.Since(start)
			b.StopTimer()
			cpu.report(b, b.N)
			page, err := c.ListRuleRuns(ctx, heraldtype.RuleRunFilter{Rule: r.Name, Limit: 1})
			if err != nil || page.Runs[0].Enqueued != b.N || page.Runs[0].State != heraldtype.RunDone {
				b.Fatalf("run: %+v %v", page.Runs, err)
			}
			b.ReportMetric(elapsed.Seconds(), "fanout-s")
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "recipients/s")
			b.ReportMetric(float64(first.Milliseconds()), "first-batch-ms")
		})
	}
}

// BenchmarkRuleEvents measures issue 20 item 7's sustained intake (S3.13):
// b.N price-change events, each about its own product watched by 5 users
// (so no event is de-duplicated by another), are applied by 8 goroutines at
// once — 8 Kafka partitions' worth — against a started Client: its workers,
// its leader's rule runner and the FCM emulator. The figures: events/s
// from the first Track to the last push received, and each event's time to
// its first push at the emulator (p50, p99).
//
//	go test -run '^$' -bench RuleEvents/postgres -benchtime 2000x -timeout 30m .
func BenchmarkRuleEvents(b *testing.B) {
	const watchers, producers = 5, 8
	for _, db := range []string{"sqlite", "postgres"} {
		b.Run(db, func(b *testing.B) {
			d := openBenchDB(b, db)
			ctx := b.Context()
			em := fcmemu.New(fcmemu.Config{Seed: 1, MaxRecorded: watchers*b.N + 100})
			if _, err := em.Start("127.0.0.1:0"); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { em.Close() })
			push, err := fcm.New(fcm.Config{CredentialsJSON: em.ServiceAccountJSON("p"), Endpoint: em.URL()})
			if err != nil {
				b.Fatal(err)
			}
			c, err := NewClient(Config{Store: d.st, Providers: map[string]Provider{"fcm": push},
				Types:  map[string]TypeConfig{"price_drop": {Channels: []heraldtype.Channel{heraldtype.ChannelPush}}},
				Logger: slog.New(slog.DiscardHandler), Rules: RuleConfig{PollInterval: 100 * time.Millisecond}})
			if err != nil {
				b.Fatal(err)
			}
			bulkAudienceOf(b, d, c, b.N, watchers)
			r := priceDropRule()
			r.Source = heraldtype.RuleSource{}
			r.Notify.Title = "{{.subject}}"
			if _, _, err := c.PutRule(ctx, r); err != nil {
				b.Fatal(err)
			}
			if err := c.Start(ctx); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { c.Stop(context.Background()) })
			for !c.IsLeader() {
				time.Sleep(10 * time.Millisecond)
			}
			starts := make([]time.Time, b.N)
			var wg sync.WaitGroup
			errs := make(chan error, producers)
			b.ResetTimer()
			begin := time.Now()
			for w := range producers {
				wg.Go(func() {
					for i := w; i < b.N; i += producers {
						starts[i] = time.Now()
						ev := Event{ID: fmt.Sprint("ev-", i), Name: "PRICE_CHANGE", Subject: fmt.Sprint("product:", i),
							Data: map[string]string{"product_name": "p", "previous_price": "10000", "current_price": "8500"}}
						if _, err := c.Track(ctx, ev); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			tracked := time.Since(begin)
			select {
			case err := <-errs:
				b.Fatal(err)
			default:
			}
			deadline := time.Now().Add(10 * time.Minute)
			for em.Stats().Accepted < uint64(watchers*b.N) {
				if time.Now().After(deadline) {
					b.Fatalf("%d of %d pushes after 10 minutes", em.Stats().Accepted, watchers*b.N)
				}
				time.Sleep(5 * time.Millisecond)
			}
			elapsed := time.Since(begin)
			b.StopTimer()
			first := make([]time.Duration, b.N)
			for _, m := range em.Messages() {
				var msg struct {
					Notification struct{ Title string } `json:"notification"`
				}
				if err := json.Unmarshal(m.Message, &msg); err != nil {
					b.Fatal(err)
				}
				var i int
				if _, err := fmt.Sscanf(msg.Notification.Title, "product:%d", &i); err != nil {
					b.Fatalf("title %q: %v", msg.Notification.Title, err)
				}
				if lat := m.ReceivedAt.Sub(starts[i]); first[i] == 0 || lat < first[i] {
					first[i] = lat
				}
			}
			slices.Sort(first)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
			b.ReportMetric(float64(b.N)/tracked.Seconds(), "tracked/s")
			b.ReportMetric(float64(first[len(first)/2].Milliseconds()), "first-push-p50-ms")
			b.ReportMetric(float64(first[len(first)*99/100].Milliseconds()), "first-push-p99-ms")
		})
	}
}

// bulkAudience writes n users u0…u{n-1}, each with one Android device and
// a VIEW interest in product:0 an hour ago: copies, by one INSERT …
// SELECT each, of a user, device and interest made through the API.
func bulkAudience(b *testing.B, d benchDB, c *Client, n int) {
	b.Helper()
	bulkAudienceOf(b, d, c, 1, n)
}

// bulkAudienceOf writes products × watchers users, u0…, user i watching
// product:{i / watchers}, each with one
// Android device.
func bulkAudienceOf(b *testing.B, d benchDB, c *Client, products, watchers int) {
	b.Helper()
	n := products * watchers
	ctx := b.Context()
	if _, err := c.PutUser(ctx, "template", UserInput{}); err != nil {
		b.Fatal(err)
	}
	if _, err := c.RegisterDevice(ctx, "template", DeviceInput{DeviceID: "template", Token: "tok-template", Platform: "android"}); err != nil {
		b.Fatal(err)
	}
	at := time.Now().Add(-time.Hour)
	if _, err := c.RecordInterests(ctx, []InterestInput{{UserID: "template", Subject: "product:42", Kind: "VIEW", At: &at}}); err != nil {
		b.Fatal(err)
	}
	users, devices, interests := d.table("users"), d.table("devices"), d.table("interests")
	series := `WITH RECURSIVE g (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM g WHERE i + 1 < ?) `
	if d.name == "postgres" {
		series = `WITH g (i) AS (SELECT generate_series(0, $1 - 1)) `
	}
	copies := []string{
		`INSERT INTO ` + users + ` (id, timezone, locale, email, phone, created_at, updated_at)
SELECT 'u' || g.i, t.timezone, t.locale, t.email, t.phone, t.created_at, t.updated_at FROM g, ` + users + ` t WHERE t.id = 'template'`,
		`INSERT INTO ` + interests + ` (subject, user_id, kind, last_at, data)
SELECT 'product:' || (g.i / ` + fmt.Sprint(watchers) + `),
	'u' || g.i, t.kind, t.last_at, t.data FROM g, ` + interests + ` t WHERE t.user_id = 'template'`,
	}
	for _, q := range copies {
		if err := d.exec(ctx, series+q, n); err != nil {
			b.Fatalf("bulk copy: %v", err)
		}
	}
	if err := d.exec(ctx, series+deviceCopySQL(devices), n); err != nil {
		b.Fatalf("devices: %v", err)
	}
	if d.name == "postgres" {
		if err := d.exec(ctx, `ANALYZE `+users+`, `+devices+`, `+interests); err != nil {
			b.Fatal(err)
		}
		if err := d.exec(ctx, `CHECKPOINT`); err != nil {
			b.Fatal(err)
		}
	} else if err := d.exec(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
}

// deviceCopySQL copies the template user's device to each u{i}, with its
// own id and token.
func deviceCopySQL(devices string) string {
	return `INSERT INTO ` + devices + ` (id, user_id, platform, token, app_version, push_opt_in, status, fail_count,
	last_seen_at, invalid_reason, created_at, updated_at)
SELECT 'd' || g.i, 'u' || g.i, t.platform, 'tok-' || g.i, t.app_version, t.push_opt_in, t.status, t.fail_count,
	t.last_seen_at, t.invalid_reason, t.created_at, t.updated_at FROM g, ` + devices + ` t WHERE t.user_id = 'template'`
}

// newFirstBatchRunner is a rule runner of c that calls batch after each
// batch it wrote.
func newFirstBatchRunner(c *Client, batch func()) (*fanout.Runner, error) {
	return fanout.New(fanout.Config{Store: c.store, Build: c.buildRuleBatch, Pause: -1,
		Enqueued: func(typ string, res store.EnqueueResult) {
			batch()
			c.enqueued(typ, res, true)
		}})
}
