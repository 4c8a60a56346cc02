package herald_test

import (
	"log/slog"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store/postgres/pgtest"
)

// TestRuleEditAppliesOnEveryInstance: Track reads the enabled rules with
// the event's record and subject, in one round trip, never from a cache
// (issue 39 item 3), so a rule saved, disabled, edited or deleted through
// one instance decides the very next event another instance applies.
func TestRuleEditAppliesOnEveryInstance(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	ctx := t.Context()
	instance := func() *herald.Client {
		return clusterClient(t, dsn, schema, herald.Config{Providers: map[string]herald.Provider{"fcm": stubProvider{}},
			Types:          map[string]herald.TypeConfig{"welcome": {Channels: []heraldtype.Channel{heraldtype.ChannelPush}}},
			DisableWorkers: true, Logger: slog.New(slog.DiscardHandler)})
	}
	a, b := instance(), instance()
	if _, err := a.PutUser(ctx, "u1", herald.UserInput{}); err != nil {
		t.Fatal(err)
	}
	r := herald.Rule{Name: "welcome", When: heraldtype.RuleWhen{Event: "SIGNUP"},
		Audience: heraldtype.RuleAudience{EventUser: true, Limit: 1},
		Notify:   heraldtype.RuleNotify{Type: "welcome", Title: "Welcome", Channels: []heraldtype.Channel{heraldtype.ChannelPush}}}
	n := 0
	// applied tracks a new event on b and returns the rules that judged it.
	applied := func() []herald.RuleOutcome {
		t.Helper()
		n++
		out, err := b.Track(ctx, herald.Event{ID: "ev-" + string(rune('a'+n)), Name: "SIGNUP", UserID: "u1"})
		if err != nil {
			t.Fatal(err)
		}
		return out.Rules
	}
	put := func(r herald.Rule) {
		t.Helper()
		if _, _, err := a.PutRule(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if got := applied(); len(got) != 0 {
		t.Fatalf("no rule yet: %+v", got)
	}
	put(r)
	if got := applied(); len(got) != 1 || !got[0].Detected || got[0].Run == "" {
		t.Fatalf("saved on a: %+v", got)
	}
	r.Disabled = true
	put(r)
	if got := applied(); len(got) != 0 {
		t.Fatalf("disabled on a: %+v", got)
	}
	r.Disabled = false
	put(r)
	if got := applied(); len(got) != 1 {
		t.Fatalf("enabled again on a: %+v", got)
	}
	r.When.Event = "LOGIN"
	put(r)
	if got := applied(); len(got) != 0 {
		t.Fatalf("edited on a to another event: %+v", got)
	}
	r.When.Event = "SIGNUP"
	put(r)
	if got := applied(); len(got) != 1 {
		t.Fatalf("edited back on a: %+v", got)
	}
	if err := a.DeleteRule(ctx, r.Name); err != nil {
		t.Fatal(err)
	}
	if got := applied(); len(got) != 0 {
		t.Fatalf("deleted on a: %+v", got)
	}
}
