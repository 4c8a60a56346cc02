package herald

// "Why didn't this user get it?" (issue 34 item 2): each answer is drawn
// from records the real pipeline wrote — the FCM emulator and a fake
// e-mail provider behind the real worker and policy — on both stores.

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/provider/fcm"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
	"github.com/heraldhq/herald/store/sqlite"
)

// mailbox is an e-mail provider that refuses the addresses it is told to,
// as a hard bounce does: permanently, asking for suppression.
type mailbox struct {
	mu      sync.Mutex
	bounces map[string]bool
	sent    []string
}

func (m *mailbox) Send(_ context.Context, msg *heraldtype.Message) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bounces[msg.Address] {
		return "", &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: "550", Message: "5.1.1 mailbox unavailable", Suppress: true}
	}
	m.sent = append(m.sent, msg.Address)
	return "mail-1", nil
}

type explainRig struct {
	*pipeline
	mail *mailbox
}

// explainStores runs f against SQLite and PostgreSQL.
func explainStores(t *testing.T, f func(t *testing.T, r *explainRig)) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			f(t, newExplainRig(t, kind))
		})
	}
}

func newExplainRig(t *testing.T, kind string) *explainRig {
	t.Helper()
	ctx := t.Context()
	var st store.Store
	switch kind {
	case "sqlite":
		s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "herald.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		st = s
	default:
		dsn, schema := pgtest.NewSchema(t)
		s, err := postgres.Open(ctx, dsn, postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		st = s
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	clock := &testClock{now: time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)} // 12:00 in Seoul
	em := fcmemu.New(fcmemu.Config{Now: clock.Now, Seed: 1, AcceptAnyToken: true})
	if _, err := em.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { em.Close() })
	push, err := fcm.New(fcm.Config{CredentialsJSON: em.ServiceAccountJSON("p"), Endpoint: em.URL()})
	if err != nil {
		t.Fatal(err)
	}
	mail := &mailbox{bounces: map[string]bool{}}
	// Every run goes through the runner (no inline batch, issue 39 item
	// 3): a run the runner has not reached yet is what is explained.
	c, err := NewClient(Config{Store: st, Providers: map[string]Provider{"fcm": push, "smtp": mail},
		Types: map[string]TypeConfig{"promo": {CountsTowardCap: &capped}}, Now: clock.Now,
		Rules:  RuleConfig{Pause: -1, InlineRecipients: -1},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return &explainRig{pipeline: &pipeline{t: t, ctx: ctx, client: c, em: em, clock: clock}, mail: mail}
}

func (r *explainRig) explain(req ExplainRequest) Explanation {
	r.t.Helper()
	x, err := r.client.Explain(r.ctx, req)
	if err != nil {
		r.t.Fatalf("explain %+v: %v", req, err)
	}
	if x.Message == "" || x.NotificationID != "" && (len(x.Reasons) == 0 || x.Reasons[0].Code != x.Verdict) {
		r.t.Fatalf("explanation without a message or a deciding reason: %+v", x)
	}
	return x
}

func (r *explainRig) prefs(user string, p Preferences) {
	r.t.Helper()
	if _, err := r.client.PutPreferences(r.ctx, user, p); err != nil {
		r.t.Fatal(err)
	}
}

func TestExplainRefusesBadRequests(t *testing.T) {
	r := newExplainRig(t, "sqlite")
	r.user("u1", "Asia/Seoul", "tok-1")
	r.user("u2", "Asia/Seoul", "tok-2")
	other := r.enqueue(Request{UserID: "u2", Type: "promo"}).Notifications[0].ID
	for _, c := range []struct {
		name        string
		req         ExplainRequest
		code, field string
	}{
		{"no user", ExplainRequest{Type: "promo"}, heraldtype.EINVALID, "user_id"},
		{"neither type nor notification", ExplainRequest{UserID: "u1"}, heraldtype.EINVALID, "type"},
		{"bad type", ExplainRequest{UserID: "u1", Type: "Not A Type"}, heraldtype.EINVALID, "type"},
		{"bad notification id", ExplainRequest{UserID: "u1", NotificationID: "a/b"}, heraldtype.EINVALID, "notification_id"},
		{"since in the future", ExplainRequest{UserID: "u1", Type: "promo", Since: r.clock.Now().Add(time.Hour)}, heraldtype.EINVALID, "since"},
		{"unknown user", ExplainRequest{UserID: "nobody", Type: "promo"}, heraldtype.ENOTFOUND, ""},
		{"unknown notification", ExplainRequest{UserID: "u1", NotificationID: "01NOPE"}, heraldtype.ENOTFOUND, ""},
		{"another user's notification", ExplainRequest{UserID: "u1", NotificationID: other}, heraldtype.ENOTFOUND, ""},
		{"rule without its run", ExplainRequest{UserID: "u1", Rule: "price-drop"}, heraldtype.EINVALID, "rule_run"},
		{"run without its rule", ExplainRequest{UserID: "u1", RuleRun: "http/ev-1"}, heraldtype.EINVALID, "rule"},
		{"unknown rule run", ExplainRequest{UserID: "u1", Rule: "price-drop", RuleRun: "http/ev-1"}, heraldtype.ENOTFOUND, ""},
		{"event source without the event", ExplainRequest{UserID: "u1", EventSource: "product.inventory.v1"}, heraldtype.EINVALID, "event"},
		{"event namespace without the event", ExplainRequest{UserID: "u1", EventNamespace: "key-1"}, heraldtype.EINVALID, "event"},
		{"bad event id", ExplainRequest{UserID: "u1", Event: "a/b"}, heraldtype.EINVALID, "event"},
		{"bad event namespace", ExplainRequest{UserID: "u1", Event: "ev-1", EventNamespace: "a/b"}, heraldtype.EINVALID, "event_namespace"},
		{"unknown event", ExplainRequest{UserID: "u1", Event: "ev-1"}, heraldtype.ENOTFOUND, ""},
		{"type of another notification", ExplainRequest{UserID: "u2", NotificationID: other, Type: "order"}, heraldtype.EINVALID, "type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.client.Explain(r.ctx, c.req)
			var he *heraldtype.Error
			if !errors.As(err, &he) || he.Code != c.code || he.Field != c.field {
				t.Fatalf("err = %#v, want %s naming %q", err, c.code, c.field)
			}
		})
	}
}

func TestExplainSentPendingAndNone(t *testing.T) {
	explainStores(t, func(t *testing.T, r *explainRig) {
		r.user("u1", "Asia/Seoul", "tok-1")
		x := r.explain(ExplainRequest{UserID: "u1", Type: "promo"})
		if x.Verdict != heraldtype.ExplainNoNotification || x.NotificationID != "" {
			t.Fatalf("before any: %+v", x)
		}
		id := r.enqueue(Request{UserID: "u1", Type: "promo"}).Notifications[0].ID
		x = r.explain(ExplainRequest{UserID: "u1", Type: "promo"})
		if x.Verdict != heraldtype.ExplainPending || x.NotificationID != id || x.Reasons[0].Until == nil {
			t.Fatalf("before the worker: %+v", x)
		}
		r.work()
		x = r.explain(ExplainRequest{UserID: "u1", NotificationID: id})
		if x.Verdict != heraldtype.ExplainSent || x.Status != heraldtype.HistorySent || x.Reasons[0].DeviceID != "dev-u1" || x.Reasons[0].At == nil {
			t.Fatalf("after the send: %+v", x)
		}
		// By the trigger's key: its notification; an unknown key is not
		// found.
		keyed := r.enqueue(Request{UserID: "u1", Type: "order", IdempotencyKey: "order-7-shipped"}).Notifications[0].ID
		if x = r.explain(ExplainRequest{UserID: "u1", IdempotencyKey: "order-7-shipped"}); x.NotificationID != keyed {
			t.Fatalf("by idempotency key: %+v", x)
		}
		if _, err := r.client.Explain(r.ctx, ExplainRequest{UserID: "u1", IdempotencyKey: "nope"}); !isCode(err, heraldtype.ENOTFOUND) {
			t.Fatalf("unknown idempotency key: %v", err)
		}
		// Since after the notification: none of the type since then.
		r.clock.Advance(time.Minute)
		x = r.explain(ExplainRequest{UserID: "u1", Type: "promo", Since: r.clock.Now()})
		if x.Verdict != heraldtype.ExplainNoNotification {
			t.Fatalf("since later: %+v", x)
		}
	})
}

func TestExplainQuietHours(t *testing.T) {
	explainStores(t, func(t *testing.T, r *explainRig) {
		r.user("u1", "Asia/Seoul", "tok-1")
		r.prefs("u1", Preferences{QuietHours: &QuietHours{Start: "22:00", End: "08:00"}})
		r.setClock(time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC)) // 23:00 in Seoul
		r.enqueue(Request{UserID: "u1", Type: "promo"})
		r.work()
		x := r.explain(ExplainRequest{UserID: "u1", Type: "promo"})
		want := time.Date(2026, 11, 23, 23, 0, 0, 0, time.UTC) // 08:00 in Seoul
		rs := x.Reasons[0]
		if x.Verdict != heraldtype.ExplainQuietHours || x.Status != heraldtype.HistoryDeferred || rs.Until == nil || !rs.Until.Equal(want) || rs.At == nil {
			t.Fatalf("quiet hours: %+v", x)
		}
		if !containsAll(x.Message, "22:00", "2026-11-24T08:00:00+09:00") {
			t.Fatalf("message %q does not say the window and the local time it ends", x.Message)
		}
	})
}

func TestExplainOptedOut(t *testing.T) {
	explainStores(t, func(t *testing.T, r *explainRig) {
		r.user("u1", "Asia/Seoul", "tok-1")
		r.prefs("u1", Preferences{Types: map[string]TypePreference{"promo": {Disabled: true}}})
		x := r.explain(ExplainRequest{UserID: "u1", Type: "promo"})
		// None yet: the answer says what would stop one now.
		if x.Verdict != heraldtype.ExplainNoNotification || len(x.Reasons) != 1 || x.Reasons[0].Code != heraldtype.ExplainOptedOut ||
			x.Reasons[0].ErrorCode != heraldtype.CodeTypeDisabled {
			t.Fatalf("before any: %+v", x)
		}
		r.enqueue(Request{UserID: "u1", Type: "promo"})
		r.work()
		x = r.explain(ExplainRequest{UserID: "u1", Type: "promo"})
		if x.Verdict != heraldtype.ExplainOptedOut || x.Reasons[0].ErrorCode != heraldtype.CodeTypeDisabled || x.Status != heraldtype.HistoryOptedOut {
			t.Fatalf("opted out: %+v", x)
		}
	})
}

func TestExplainNoDeviceAndInvalidDevice(t *testing.T) {
	explainStores(t, func(t *testing.T, r *explainRig) {
		if _, err := r.client.PutUser(r.ctx, "bare", UserInput{Timezone: "Asia/Seoul"}); err != nil {
			t.Fatal(err)
		}
		r.enqueue(Request{UserID: "bare", Type: "promo"})
		x := r.explain(ExplainRequest{UserID: "bare", Type: "promo"})
		if x.Verdict != heraldtype.ExplainNoDevice || x.Status != heraldtype.HistoryFailed {
			t.Fatalf("no device: %+v", x)
		}

		r.user("u1", "Asia/Seoul", "tok-1")
		if err := r.em.FailToken("tok-1", fcmemu.TokenFault{Code: "UNREGISTERED"}); err != nil {
			t.Fatal(err)
		}
		first := r.enqueue(Request{UserID: "u1", Type: "promo"}).Notifications[0].ID
		r.work()
		x = r.explain(ExplainRequest{UserID: "u1", NotificationID: first})
		if x.Verdict != heraldtype.ExplainProviderFailure || x.Reasons[0].ErrorCode != "UNREGISTERED" ||
			len(x.Reasons) != 2 || x.Reasons[1].Code != heraldtype.ExplainDeviceInvalid || x.Reasons[1].At == nil {
			t.Fatalf("the send that invalidated the device: %+v", x)
		}
		r.clock.Advance(time.Minute)
		r.enqueue(Request{UserID: "u1", Type: "promo"})
		x = r.explain(ExplainRequest{UserID: "u1", Type: "promo"})
		rs := x.Reasons[0]
		if x.Verdict != heraldtype.ExplainDeviceInvalid || rs.DeviceID != "dev-u1" || rs.ErrorCode != "UNREGISTERED" || rs.At == nil {
			t.Fatalf("after the invalidation: %+v", x)
		}
	})
}

func TestExplainDuplicateAndDailyCap(t *testing.T) {
	explainStores(t, func(t *testing.T, r *explainRig) {
		r.user("u1", "Asia/Seoul", "tok-1")
		first := r.enqueue(Request{UserID: "u1", Type: "order", DedupeKey: "order-7"}).Notifications[0].ID
		r.work()
		r.clock.Advance(time.Minute)
		second := r.enqueue(Request{UserID: "u1", Type: "order", DedupeKey: "order-7"}).Notifications[0].ID
		r.work()
		x := r.explain(ExplainRequest{UserID: "u1", NotificationID: second})
		if x.Verdict != heraldtype.ExplainDuplicate || !slices.Equal(x.Reasons[0].NotificationIDs, []string{first}) {
			t.Fatalf("duplicate: %+v", x)
		}

		r.user("u2", "Asia/Seoul", "tok-2")
		r.prefs("u2", Preferences{DailyCap: 2})
		var ids []string
		for range 3 {
			ids = append(ids, r.enqueue(Request{UserID: "u2", Type: "promo"}).Notifications[0].ID)
			r.work()
			r.clock.Advance(time.Minute)
		}
		x = r.explain(ExplainRequest{UserID: "u2", Type: "promo"})
		if x.Verdict != heraldtype.ExplainDailyCap || x.NotificationID != ids[2] || !slices.Equal(x.Reasons[0].NotificationIDs, ids[:2]) ||
			!containsAll(x.Message, "2026-11-23", "of 2") {
			t.Fatalf("daily cap: %+v", x)
		}
	})
}

func TestExplainSuppressedAddressAndProviderFailure(t *testing.T) {
	explainStores(t, func(t *testing.T, r *explainRig) {
		if _, err := r.client.PutUser(r.ctx, "u1", UserInput{Timezone: "Asia/Seoul", Email: "gone@example.com"}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.client.PutUser(r.ctx, "u2", UserInput{Timezone: "Asia/Seoul"}); err != nil {
			t.Fatal(err)
		}
		r.mail.bounces["gone@example.com"] = true
		email := []heraldtype.Channel{heraldtype.ChannelEmail}
		first := r.enqueue(Request{UserID: "u1", Type: "receipt", Channels: email}).Notifications[0].ID
		r.work()
		x := r.explain(ExplainRequest{UserID: "u1", NotificationID: first})
		if x.Verdict != heraldtype.ExplainProviderFailure || x.Reasons[0].ErrorCode != "550" || !containsAll(x.Reasons[0].Error, "mailbox unavailable") {
			t.Fatalf("bounce: %+v", x)
		}
		r.clock.Advance(time.Minute)
		r.enqueue(Request{UserID: "u1", Type: "receipt", Channels: email})
		x = r.explain(ExplainRequest{UserID: "u1", Type: "receipt"})
		if x.Verdict != heraldtype.ExplainSuppressed || x.Reasons[0].Channel != heraldtype.ChannelEmail {
			t.Fatalf("suppressed: %+v", x)
		}
		r.enqueue(Request{UserID: "u2", Type: "receipt", Channels: email})
		if x = r.explain(ExplainRequest{UserID: "u2", Type: "receipt"}); x.Verdict != heraldtype.ExplainNoAddress {
			t.Fatalf("no address: %+v", x)
		}
	})
}

// A rule's run: the notification it wrote for a user in its audience,
// "not reached yet" before the runner gets to the user, and
// outside_audience for a user who was not in it.
func TestExplainRuleRun(t *testing.T) {
	explainStores(t, func(t *testing.T, r *explainRig) {
		if _, err := r.client.PutType(r.ctx, "price_drop", TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelPush}}); err != nil {
			t.Fatal(err)
		}
		rule := priceDropRule()
		rule.Source = heraldtype.RuleSource{}
		if _, _, err := r.client.PutRule(r.ctx, rule); err != nil {
			t.Fatal(err)
		}
		r.interested("VIEW", "product:42", "u1")
		r.user("u2", "Asia/Seoul", "tok-u2")
		e := priceChange("ev-1", 10000, 8500)
		e.Topic = ""
		out, err := r.client.Track(r.ctx, e)
		if err != nil || len(out.Rules) != 1 || out.Rules[0].Run == "" {
			t.Fatalf("track: %+v %v", out, err)
		}
		req := ExplainRequest{UserID: "u1", Rule: rule.Name, RuleRun: out.Rules[0].Run}
		if x := r.explain(req); x.Verdict != heraldtype.ExplainPending || x.RuleRun != req.RuleRun || x.NotificationID != "" {
			t.Fatalf("before the runner: %+v", x)
		}
		r.fanOut()
		r.work()
		if x := r.explain(req); x.Verdict != heraldtype.ExplainSent || x.NotificationID == "" || x.Rule != rule.Name {
			t.Fatalf("u1 after the run: %+v", x)
		}
		req.UserID = "u2"
		x := r.explain(req)
		if x.Verdict != heraldtype.ExplainOutsideAudience || !containsAll(x.Message, "product:42", "wrote 1 notification,") {
			t.Fatalf("u2: %+v", x)
		}
	})
}

// An event: what each rule decided on it, and for a rule that started a
// run, what the run did for the user — the notification it wrote (sent),
// not reached yet, or outside its audience; not_detected naming each rule
// and its detector's reason; event_stale; not found, saying what Herald
// records and for how long.
func TestExplainEvent(t *testing.T) {
	explainStores(t, func(t *testing.T, r *explainRig) {
		if _, err := r.client.PutType(r.ctx, "price_drop", TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelPush}}); err != nil {
			t.Fatal(err)
		}
		// Two rules judge each price change: price-drop fires at 10 %,
		// big-drop only at 50 %.
		small, big := priceDropRule(), priceDropRule()
		big.Name, big.When.Detect.PriceDropPct = "big-drop", 50
		for _, rl := range []Rule{small, big} {
			if _, _, err := r.client.PutRule(r.ctx, rl); err != nil {
				t.Fatal(err)
			}
		}
		r.interested("VIEW", "product:42", "u1")
		r.user("u2", "Asia/Seoul", "tok-u2")
		track := func(e Event) TrackResult {
			t.Helper()
			out, err := r.client.Track(r.ctx, e)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		out := track(priceChange("ev-1", 10000, 8500))
		if len(out.Rules) != 2 || out.Rules[1].Run == "" {
			t.Fatalf("track: %+v", out)
		}
		req := ExplainRequest{UserID: "u1", Event: "ev-1", EventSource: "product.inventory.v1"}
		if x := r.explain(req); x.Verdict != heraldtype.ExplainPending || x.Event != "ev-1" || x.Rule != small.Name || x.NotificationID != "" {
			t.Fatalf("before the runner: %+v", x)
		}
		r.fanOut()
		r.work()
		x := r.explain(req)
		if x.Verdict != heraldtype.ExplainSent || x.NotificationID == "" || x.Rule != small.Name || x.RuleRun != out.Rules[1].Run ||
			x.Event != "ev-1" || x.Type != "price_drop" {
			t.Fatalf("u1, reached by price-drop's run: %+v", x)
		}
		// u2 was in no rule's audience: price-drop's run decides, and
		// big-drop's decision follows, naming the rule and its reason.
		req.UserID = "u2"
		x = r.explain(req)
		if x.Verdict != heraldtype.ExplainOutsideAudience || x.Rule != small.Name || len(x.Reasons) != 2 ||
			x.Reasons[1].Code != heraldtype.ExplainNotDetected || x.Reasons[1].Rule != big.Name ||
			!containsAll(x.Reasons[1].Message, "big-drop", "under the threshold") {
			t.Fatalf("u2, outside the audience: %+v", x)
		}

		// A 1 % drop: neither rule detects it.
		track(priceChange("ev-2", 8500, 8415))
		req = ExplainRequest{UserID: "u1", Event: "ev-2", EventSource: "product.inventory.v1"}
		x = r.explain(req)
		if x.Verdict != heraldtype.ExplainNotDetected || len(x.Reasons) != 2 || x.NotificationID != "" || x.Event != "ev-2" {
			t.Fatalf("not detected: %+v", x)
		}
		for i, rl := range []string{big.Name, small.Name} {
			if rs := x.Reasons[i]; rs.Code != heraldtype.ExplainNotDetected || rs.Rule != rl || !containsAll(rs.Message, "Rule "+rl, "under the threshold") {
				t.Fatalf("reason %d: %+v", i, rs)
			}
		}

		// A version not above the subject's last is stale.
		v5, v4 := priceChange("ev-3", 8415, 8400), priceChange("ev-4", 8400, 100)
		v5.Version, v4.Version = 5, 4
		track(v5)
		if out := track(v4); !out.Stale {
			t.Fatalf("v4 after v5: %+v", out)
		}
		x = r.explain(ExplainRequest{UserID: "u1", Event: "ev-4", EventSource: "product.inventory.v1"})
		if x.Verdict != heraldtype.ExplainEventStale || !containsAll(x.Message, "ev-4", "stale") {
			t.Fatalf("stale: %+v", x)
		}

		// Not recorded: under another source, or never applied.
		for _, q := range []ExplainRequest{{UserID: "u1", Event: "ev-1"}, {UserID: "u1", Event: "ev-9", EventSource: "product.inventory.v1"},
			{UserID: "u1", Event: "ev-1", EventSource: "product.inventory.v1", EventNamespace: "key-1"}} {
			_, err := r.client.Explain(r.ctx, q)
			var he *heraldtype.Error
			if !errors.As(err, &he) || he.Code != heraldtype.ENOTFOUND || !containsAll(he.Message, "some rule considered", "rules.event_retention") {
				t.Fatalf("%+v: %v", q, err)
			}
		}

		// An event posted to the API is found under the posting key's
		// namespace.
		api := small
		api.Name, api.Source = "api-drop", heraldtype.RuleSource{}
		if _, _, err := r.client.PutRule(r.ctx, api); err != nil {
			t.Fatal(err)
		}
		e := priceChange("ev-1", 100, 50)
		e.Topic, e.Subject, e.Namespace = "", "product:42", "key-1"
		track(e)
		r.fanOut()
		x = r.explain(ExplainRequest{UserID: "u2", Event: "ev-1", EventNamespace: "key-1"})
		if x.Verdict != heraldtype.ExplainOutsideAudience || x.Rule != "api-drop" || x.RuleRun != "http/key-1/ev-1" {
			t.Fatalf("an API event: %+v", x)
		}
	})
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
