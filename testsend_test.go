package herald

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
	"github.com/heraldhq/herald/store/sqlite"
)

// pushLog records what a provider was asked to send, by token.
type pushLog struct {
	mu   sync.Mutex
	sent map[string][]string // token → titles
}

func (l *pushLog) Send(_ context.Context, m *heraldtype.Message) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent[m.Device.Token] = append(l.sent[m.Device.Token], m.Notification.Title)
	return "id", nil
}

func (l *pushLog) count(tok string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sent[tok])
}

// TestTestSendPolicy (issue 37 item 5): a test-send is sent now to the
// named user — past quiet hours, the daily cap (which it does not spend),
// digests and escalation — but never past an opt-out, which its answer
// reports per channel with the reason, as it reports a channel with
// nothing to send to; it is marked a test, and the engagement report
// leaves it out. On both stores.
func TestTestSendPolicy(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) {
		t.Parallel()
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "herald.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		testSendPolicy(t, st)
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		t.Parallel()
		dsn, schema := pgtest.NewSchema(t)
		st, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema, MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		testSendPolicy(t, st)
	})
}

func testSendPolicy(t *testing.T, st store.Store) {
	ctx := t.Context()
	if err := st.(interface{ Migrate(context.Context) error }).Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	// Mid-hour, so the engagement counts below stay in one hour.
	clock := &testClock{now: time.Now().UTC().Truncate(time.Hour).Add(30 * time.Minute)}
	log := &pushLog{sent: map[string][]string{}}
	yes := true
	c, err := NewClient(Config{Store: st, Providers: map[string]Provider{"fcm": log}, Now: clock.Now,
		Logger: slog.New(slog.DiscardHandler), Worker: WorkerConfig{ReapInterval: time.Second},
		Types: map[string]TypeConfig{
			// Quiet hours apply, every notification counts toward the cap.
			"order": {Channels: []heraldtype.Channel{heraldtype.ChannelPush, heraldtype.ChannelInApp}, QuietHours: &yes, CountsTowardCap: &yes},
			// A digest type that escalates.
			"comment": {Channels: []heraldtype.Channel{heraldtype.ChannelPush}, Digest: &DigestConfig{Window: "1h", Key: "{{.post}}",
				Title: "{{.Count}} comments", Body: "new"},
				Escalate: []EscalationStepConfig{{After: "10m", Unless: heraldtype.ReceiptOpened, Channels: []heraldtype.Channel{heraldtype.ChannelInApp}}}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	work := func() {
		t.Helper()
		for {
			if err := c.elector.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			c.elector.Wait()
			n, err := c.runOnce(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				return
			}
		}
	}
	for _, typ := range []string{"order", "comment"} {
		if _, err := c.PutTemplates(ctx, typ, heraldtype.MessageTemplates{DefaultLocale: "en", SampleData: map[string]string{"post": "p1"},
			Locales: map[string]heraldtype.ChannelTemplates{"en": {Push: &heraldtype.PushTemplate{Title: "Test " + typ, Body: "post {{.post}}"}}}}); err != nil {
			t.Fatal(err)
		}
	}
	// kim: one device, inside her quiet hours, a cap of one a day, and
	// the in-app channel turned off.
	if _, err := c.PutUser(ctx, "kim", UserInput{Timezone: "UTC"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RegisterDevice(ctx, "kim", DeviceInput{DeviceID: "d1", Token: "tok-kim", Platform: "android"}); err != nil {
		t.Fatal(err)
	}
	now := clock.Now()
	if _, err := c.PutPreferences(ctx, "kim", Preferences{DailyCap: 1, OptedOutChannels: []heraldtype.Channel{heraldtype.ChannelInApp},
		QuietHours: &heraldtype.QuietHours{Start: now.Add(-time.Hour).Format("15:04"), End: now.Add(2 * time.Hour).Format("15:04")}}); err != nil {
		t.Fatal(err)
	}

	// Quiet hours defer an ordinary notification; a test is sent now, and
	// its answer names the opted-out channel.
	ordinary, err := c.Enqueue(ctx, Request{UserID: "kim", Type: "order", Title: "ordinary", Channels: []heraldtype.Channel{heraldtype.ChannelPush}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.TestSend(ctx, "order", TestSendRequest{UserID: "kim"})
	if err != nil {
		t.Fatal(err)
	}
	want := []heraldtype.TestSendChannel{
		{Channel: heraldtype.ChannelPush, Status: heraldtype.TestSendQueued, Deliveries: 1},
		{Channel: heraldtype.ChannelInApp, Status: heraldtype.TestSendSkipped, Deliveries: 1, Code: heraldtype.CodeChannelOptedOut, Reason: "the user opted out of in_app"},
	}
	if len(res.Notifications) != 1 || fmt.Sprint(res.Channels) != fmt.Sprint(want) {
		t.Fatalf("test-send answer %+v, want channels %+v", res, want)
	}
	work()
	if got := log.count("tok-kim"); got != 1 {
		t.Fatalf("sent %d to kim inside her quiet hours, want the test alone", got)
	}
	if d := only(t, c, ordinary.Notifications[0].ID); d.State != heraldtype.StatePending || d.LastErrorCode != heraldtype.CodeQuietHours {
		t.Errorf("the ordinary one: %s %s, want deferred for quiet hours", d.State, d.LastErrorCode)
	}
	n, err := c.GetNotification(ctx, res.Notifications[0].ID)
	if err != nil || !n.Source.IsTest() || !n.SendAt.IsZero() || n.TemplateVersion != 1 {
		t.Fatalf("the test's notification: %+v %v", n.Notification, err)
	}
	for _, d := range n.Deliveries {
		if d.Channel == heraldtype.ChannelInApp && d.State != heraldtype.StateOptedOut {
			t.Errorf("the in-app delivery of the test: %s, want opted_out", d.State)
		}
	}

	// Past the quiet hours, the daily cap: a test does not spend it (the
	// ordinary one does) and is not refused by it.
	clock.Advance(3 * time.Hour)
	work()
	if got := log.count("tok-kim"); got != 2 {
		t.Fatalf("after quiet hours %d sent, want 2 (the test, then the ordinary one)", got)
	}
	if _, err := c.TestSend(ctx, "order", TestSendRequest{UserID: "kim", Channels: []heraldtype.Channel{heraldtype.ChannelPush}}); err != nil {
		t.Fatal(err)
	}
	capped, err := c.Enqueue(ctx, Request{UserID: "kim", Type: "order", Title: "over the cap", Channels: []heraldtype.Channel{heraldtype.ChannelPush}})
	if err != nil {
		t.Fatal(err)
	}
	work()
	if got := log.count("tok-kim"); got != 3 {
		t.Fatalf("%d sent, want 3: the test past the spent cap", got)
	}
	if d := only(t, c, capped.Notifications[0].ID); d.State != heraldtype.StateRateLimited {
		t.Errorf("an ordinary one over the cap: %s, want rate_limited", d.State)
	}

	// A digest type: the test is its own notification, sent now, and no
	// escalation follows it.
	if _, err := c.PutPreferences(ctx, "kim", Preferences{}); err != nil {
		t.Fatal(err)
	}
	res, err = c.TestSend(ctx, "comment", TestSendRequest{UserID: "kim"})
	if err != nil || len(res.Notifications) != 1 || res.Notifications[0].Digest != "" || res.Notifications[0].Deliveries != 1 {
		t.Fatalf("a test of a digest type: %+v %v", res, err)
	}
	work()
	if got := log.count("tok-kim"); got != 4 {
		t.Fatalf("%d sent, want the digest type's test too", got)
	}
	if n, err := c.GetNotification(ctx, res.Notifications[0].ID); err != nil || len(n.Escalations) != 0 {
		t.Errorf("a test escalates: %+v %v", n.Escalations, err)
	}

	// A user without a device: push is skipped, said so.
	if _, err := c.PutUser(ctx, "ann", UserInput{}); err != nil {
		t.Fatal(err)
	}
	res, err = c.TestSend(ctx, "order", TestSendRequest{UserID: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	want = []heraldtype.TestSendChannel{
		{Channel: heraldtype.ChannelPush, Status: heraldtype.TestSendSkipped, Code: heraldtype.CodeNoDevice, Reason: "the user has no device that takes push notifications"},
		{Channel: heraldtype.ChannelInApp, Status: heraldtype.TestSendQueued, Deliveries: 1},
	}
	if fmt.Sprint(res.Channels) != fmt.Sprint(want) {
		t.Errorf("ann's answer %+v, want %+v", res.Channels, want)
	}
	if _, err := c.TestSend(ctx, "order", TestSendRequest{UserID: "nobody"}); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Errorf("an unknown user: %v, want invalid_argument", err)
	}

	// The engagement report counts the two ordinary sends' one (the other
	// was capped), none of the tests: four pushes and an inbox item.
	e, err := c.Engagement(ctx, EngagementQuery{From: now.Add(-time.Hour), To: clock.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if e.Total.Sent != 1 {
		t.Errorf("engagement counts %d sent, want 1 (the tests left out)", e.Total.Sent)
	}
}

// only is the one delivery of notification id.
func only(t *testing.T, c *Client, id string) heraldtype.Delivery {
	t.Helper()
	n, err := c.GetNotification(t.Context(), id)
	if err != nil || len(n.Deliveries) != 1 {
		t.Fatalf("notification %s: %+v %v", id, n.Deliveries, err)
	}
	return n.Deliveries[0]
}
