package policy

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestQuietHoursUntil(t *testing.T) {
	t.Parallel()
	ny := zone(t, "America/New_York")
	overnight, err := ParseQuietHours(heraldtype.QuietHours{Start: "22:00", End: "08:00"})
	if err != nil {
		t.Fatal(err)
	}
	lunch, err := ParseQuietHours(heraldtype.QuietHours{Start: "12:00", End: "13:30"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		w      QuietWindow
		now    time.Time
		in     bool
		wantAt time.Time
	}{
		{"evening", overnight, time.Date(2026, 6, 1, 23, 0, 0, 0, ny), true, time.Date(2026, 6, 2, 8, 0, 0, 0, ny)},
		{"early morning", overnight, time.Date(2026, 6, 2, 7, 59, 0, 0, ny), true, time.Date(2026, 6, 2, 8, 0, 0, 0, ny)},
		{"start is inside", overnight, time.Date(2026, 6, 1, 22, 0, 0, 0, ny), true, time.Date(2026, 6, 2, 8, 0, 0, 0, ny)},
		{"end is outside", overnight, time.Date(2026, 6, 2, 8, 0, 0, 0, ny), false, time.Time{}},
		{"day", overnight, time.Date(2026, 6, 2, 15, 0, 0, 0, ny), false, time.Time{}},
		// Spring forward (Mar 8 2026, 02:00 → 03:00): the night is 8 h.
		{"spring forward", overnight, time.Date(2026, 3, 7, 23, 0, 0, 0, ny), true, time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)},
		// Fall back (Nov 1 2026, 02:00 → 01:00): the night is 10 h.
		{"fall back", overnight, time.Date(2026, 10, 31, 23, 0, 0, 0, ny), true, time.Date(2026, 11, 1, 13, 0, 0, 0, time.UTC)},
		{"same-day window", lunch, time.Date(2026, 6, 2, 12, 45, 0, 0, ny), true, time.Date(2026, 6, 2, 13, 30, 0, 0, ny)},
		{"before a same-day window", lunch, time.Date(2026, 6, 2, 11, 59, 0, 0, ny), false, time.Time{}},
	} {
		until, in := c.w.Until(c.now, ny)
		if in != c.in || !until.Equal(c.wantAt) {
			t.Errorf("%s: Until(%v) = %v, %v; want %v, %v", c.name, c.now, until, in, c.wantAt, c.in)
		}
	}
	for _, bad := range []heraldtype.QuietHours{{Start: "22:00", End: "22:00"}, {Start: "24:00", End: "08:00"}, {Start: "7:00", End: "08:00"}, {Start: "22:00", End: "x"}} {
		if _, err := ParseQuietHours(bad); err == nil {
			t.Errorf("ParseQuietHours(%+v) accepted", bad)
		}
	}
}

// The cap's day is the user's calendar date; it resets at their midnight.
func TestLocalDay(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC)
	for _, c := range []struct {
		zone, day string
		midnight  time.Time
	}{
		{"America/New_York", "2026-11-21", time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)},
		{"Asia/Seoul", "2026-11-22", time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)},
		{"UTC", "2026-11-22", time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)},
	} {
		day, midnight := LocalDay(now, zone(t, c.zone))
		if day != c.day || !midnight.Equal(c.midnight) {
			t.Errorf("%s: %s until %v, want %s until %v", c.zone, day, midnight, c.day, c.midnight)
		}
	}
}

// fakeLimiter records calls and answers yes, or fails.
type fakeLimiter struct {
	dedupe, daily int
	err           error
}

func (l *fakeLimiter) AcquireDedupe(context.Context, string, string, time.Duration, time.Time) (bool, error) {
	l.dedupe++
	return l.err == nil, l.err
}

func (l *fakeLimiter) CountDaily(context.Context, string, string, string, int, time.Time) (bool, error) {
	l.daily++
	return l.err == nil, l.err
}

type fakeSource struct {
	prefs heraldtype.Preferences
	err   error
}

func (s fakeSource) GetPreferences(context.Context, string) (heraldtype.Preferences, error) {
	return s.prefs, s.err
}

// GetPreferencesMany gives every user the same preferences.
func (s fakeSource) GetPreferencesMany(_ context.Context, ids []string) (map[string]heraldtype.Preferences, error) {
	if s.err != nil {
		return nil, s.err
	}
	out := map[string]heraldtype.Preferences{}
	for _, id := range ids {
		out[id] = s.prefs
	}
	return out, nil
}

type fakeTypes map[string]heraldtype.NotificationType

func (f fakeTypes) GetType(_ context.Context, name string) (heraldtype.NotificationType, error) {
	if t, ok := f[name]; ok {
		return t, nil
	}
	return heraldtype.NotificationType{}, heraldtype.Errorf(heraldtype.ENOTFOUND, "no type")
}

func (f fakeTypes) ListTypes(context.Context) ([]heraldtype.NotificationType, error) { return nil, nil }

func engine(t *testing.T, prefs heraldtype.Preferences, l *fakeLimiter) *Engine {
	t.Helper()
	cat, err := NewCatalog(map[string]heraldtype.NotificationType{
		"promo": {CountsTowardCap: &capped, QuietHours: true},
		"alarm": {CountsTowardCap: &capped, QuietHours: true, Critical: true},
	}, fakeTypes{})
	if err != nil {
		t.Fatal(err)
	}
	prefs.Timezone = "Asia/Seoul"
	e, err := New(Config{Types: cat, Source: fakeSource{prefs: prefs}, Limiter: l})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func job(typ string, ch heraldtype.Channel) *heraldtype.Job {
	return &heraldtype.Job{Delivery: heraldtype.Delivery{Channel: ch},
		Notification: &heraldtype.Notification{ID: "n1", UserID: "u1", Type: typ, DedupeKey: "k"}}
}

// 03:00 in Seoul.
func night() time.Time { return time.Date(2026, 6, 1, 18, 0, 0, 0, time.UTC) }

// Order: an opted-out or deferred delivery takes no lock and no cap slot.
func TestEngineOrder(t *testing.T) {
	t.Parallel()
	quiet := &heraldtype.QuietHours{Start: "22:00", End: "08:00"}
	for _, c := range []struct {
		name          string
		prefs         heraldtype.Preferences
		typ           string
		verdict       Verdict
		code          string
		dedupe, daily int
	}{
		{"opted out", heraldtype.Preferences{Types: map[string]heraldtype.TypePreference{"promo": {Disabled: true}}, QuietHours: quiet},
			"promo", Block, CodeTypeDisabled, 0, 0},
		{"channel opted out", heraldtype.Preferences{OptedOutChannels: []heraldtype.Channel{heraldtype.ChannelPush}},
			"promo", Block, CodeChannelOptedOut, 0, 0},
		// Issue 22: a critical type bypasses the user's opt-outs, on
		// every channel (and still takes its dedupe lock).
		{"critical bypasses a type turned off", heraldtype.Preferences{Types: map[string]heraldtype.TypePreference{"alarm": {Disabled: true}}},
			"alarm", Allow, "", 1, 0},
		{"critical bypasses a channel opt-out", heraldtype.Preferences{OptedOutChannels: []heraldtype.Channel{heraldtype.ChannelPush}},
			"alarm", Allow, "", 1, 0},
		{"quiet hours", heraldtype.Preferences{QuietHours: quiet}, "promo", Defer, CodeQuietHours, 0, 0},
		{"critical bypasses quiet hours and cap", heraldtype.Preferences{QuietHours: quiet}, "alarm", Allow, "", 1, 0},
		{"allowed", heraldtype.Preferences{}, "promo", Allow, "", 1, 1},
		{"unknown type: no cap", heraldtype.Preferences{}, "other", Allow, "", 1, 0},
	} {
		l := &fakeLimiter{}
		d, err := engine(t, c.prefs, l).Check(t.Context(), job(c.typ, heraldtype.ChannelPush), night(), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.Verdict != c.verdict || d.Code != c.code || l.dedupe != c.dedupe || l.daily != c.daily {
			t.Errorf("%s: %+v with %d dedupe and %d cap calls; want %v %q, %d, %d", c.name, d, l.dedupe, l.daily,
				c.verdict, c.code, c.dedupe, c.daily)
		}
		if c.verdict == Defer && !d.Until.Equal(time.Date(2026, 6, 1, 23, 0, 0, 0, time.UTC)) {
			t.Errorf("%s: until %v, want 08:00 Seoul", c.name, d.Until)
		}
	}
}

// A test-send (issue 37): past quiet hours, with no dedupe lock taken and
// no cap slot counted, in Check and in a batch's Prefetch — but refused
// by the user's opt-outs, as any delivery.
func TestTestSendBypasses(t *testing.T) {
	t.Parallel()
	quiet := &heraldtype.QuietHours{Start: "22:00", End: "08:00"}
	test := func() *heraldtype.Job {
		j := job("promo", heraldtype.ChannelPush)
		j.Notification.Source = &heraldtype.Source{Kind: heraldtype.SourceTest}
		return j
	}
	for _, c := range []struct {
		name    string
		prefs   heraldtype.Preferences
		verdict Verdict
		code    string
	}{
		{"quiet hours, dedupe key and cap", heraldtype.Preferences{QuietHours: quiet, DailyCap: 1}, Allow, ""},
		{"channel opted out", heraldtype.Preferences{OptedOutChannels: []heraldtype.Channel{heraldtype.ChannelPush}, QuietHours: quiet},
			Block, CodeChannelOptedOut},
		{"type turned off", heraldtype.Preferences{Types: map[string]heraldtype.TypePreference{"promo": {Disabled: true}}}, Block, CodeTypeDisabled},
		{"channel not allowed for the type", heraldtype.Preferences{Types: map[string]heraldtype.TypePreference{
			"promo": {Channels: []heraldtype.Channel{heraldtype.ChannelEmail}}}}, Block, CodeChannelDisabled},
	} {
		l := &fakeLimiter{}
		e := engine(t, c.prefs, l)
		d, err := e.Check(t.Context(), test(), night(), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.Verdict != c.verdict || d.Code != c.code || l.dedupe != 0 || l.daily != 0 {
			t.Errorf("%s: %+v with %d dedupe and %d cap calls; want %v %q and none", c.name, d, l.dedupe, l.daily, c.verdict, c.code)
		}
		jobs := []heraldtype.Job{*test()}
		pre, err := e.Prefetch(t.Context(), jobs, night())
		if err != nil {
			t.Fatal(err)
		}
		if d, err := e.Check(t.Context(), &jobs[0], night(), pre); err != nil || d.Verdict != c.verdict || l.dedupe != 0 || l.daily != 0 {
			t.Errorf("%s after Prefetch: %+v %v with %d dedupe and %d cap calls", c.name, d, err, l.dedupe, l.daily)
		}
	}
}

// Fail-closed: a store error is an error, never an allow.
func TestEngineErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	if _, err := engine(t, heraldtype.Preferences{}, &fakeLimiter{err: boom}).Check(t.Context(), job("promo", ""), night(), nil); !errors.Is(err, boom) {
		t.Fatalf("limiter failure: %v", err)
	}
	cat, _ := NewCatalog(nil, fakeTypes{})
	e, err := New(Config{Types: cat, Source: fakeSource{err: boom}, Limiter: &fakeLimiter{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Check(t.Context(), job("promo", ""), night(), nil); !errors.Is(err, boom) {
		t.Fatalf("preferences failure: %v", err)
	}
	if _, err := New(Config{Types: cat, Source: fakeSource{}, Limiter: &fakeLimiter{}, DailyCap: -1}); err == nil {
		t.Fatal("a negative cap was accepted")
	}
}

func TestValidatePreferences(t *testing.T) {
	t.Parallel()
	for _, bad := range []heraldtype.Preferences{
		{OptedOutChannels: []heraldtype.Channel{"fax"}},
		{OptedOutChannels: []heraldtype.Channel{heraldtype.ChannelSMS, heraldtype.ChannelSMS}},
		{Types: map[string]heraldtype.TypePreference{"promo": {Channels: []heraldtype.Channel{"fax"}}}},
		{QuietHours: &heraldtype.QuietHours{Start: "22:00", End: "25:00"}},
		{DailyCap: -1},
	} {
		if err := ValidatePreferences(&bad); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
			t.Errorf("ValidatePreferences(%+v) = %v, want invalid_argument", bad, err)
		}
	}
}

// TestInAppPolicy (issue 22): in_app can be opted out like any channel,
// per type or for every type; a critical type bypasses that too; and the
// inbox takes the preferences step only — neither quiet hours, nor a
// dedupe lock, nor a slot of the cap.
func TestInAppPolicy(t *testing.T) {
	t.Parallel()
	if err := ValidatePreferences(&heraldtype.Preferences{OptedOutChannels: []heraldtype.Channel{heraldtype.ChannelInApp}}); err != nil {
		t.Fatalf("opting out of in_app: %v", err)
	}
	quiet := &heraldtype.QuietHours{Start: "22:00", End: "08:00"}
	for _, c := range []struct {
		name    string
		prefs   heraldtype.Preferences
		typ     string
		verdict Verdict
		code    string
	}{
		{"type off", heraldtype.Preferences{Types: map[string]heraldtype.TypePreference{"promo": {Disabled: true}}}, "promo", Block, CodeTypeDisabled},
		{"not among the type's channels", heraldtype.Preferences{Types: map[string]heraldtype.TypePreference{
			"promo": {Channels: []heraldtype.Channel{heraldtype.ChannelPush}}}}, "promo", Block, CodeChannelDisabled},
		{"opted out of in_app", heraldtype.Preferences{OptedOutChannels: []heraldtype.Channel{heraldtype.ChannelInApp}}, "promo", Block, CodeChannelOptedOut},
		{"critical", heraldtype.Preferences{OptedOutChannels: []heraldtype.Channel{heraldtype.ChannelInApp}}, "alarm", Allow, ""},
		{"quiet hours, dedupe and cap do not apply", heraldtype.Preferences{QuietHours: quiet, DailyCap: 1}, "promo", Allow, ""},
	} {
		l := &fakeLimiter{}
		d, err := engine(t, c.prefs, l).Check(t.Context(), job(c.typ, heraldtype.ChannelInApp), night(), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.Verdict != c.verdict || d.Code != c.code || l.dedupe != 0 || l.daily != 0 {
			t.Errorf("%s: %+v with %d dedupe and %d cap calls; want %v %q and no limiter call", c.name, d, l.dedupe,
				l.daily, c.verdict, c.code)
		}
		if c.verdict == Block && (d.State != heraldtype.StateOptedOut || d.Reason == "") {
			t.Errorf("%s: %+v, want opted_out with a reason", c.name, d)
		}
	}
}

// TestPrefetch: the preferences of a batch are read once, for every
// distinct user, and Check uses them instead of reading again; a user the
// batch did not cover is read on its own.
func TestPrefetch(t *testing.T) {
	t.Parallel()
	src := &countingSource{prefs: map[string]heraldtype.Preferences{
		"u1": {UserID: "u1", Timezone: "UTC", OptedOutChannels: []heraldtype.Channel{heraldtype.ChannelPush}},
		"u2": {UserID: "u2", Timezone: "UTC"},
	}}
	cat, err := NewCatalog(map[string]heraldtype.NotificationType{"promo": {}}, fakeTypes{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(Config{Types: cat, Source: src, Limiter: &fakeLimiter{}})
	if err != nil {
		t.Fatal(err)
	}
	jobOf := func(user string) heraldtype.Job {
		return heraldtype.Job{Delivery: heraldtype.Delivery{Channel: heraldtype.ChannelPush},
			Notification: &heraldtype.Notification{ID: "n-" + user, UserID: user, Type: "promo"}}
	}
	jobs := []heraldtype.Job{jobOf("u1"), jobOf("u2"), jobOf("u1"), {Delivery: heraldtype.Delivery{ID: 9}}}
	pre, err := e.Prefetch(t.Context(), jobs, night())
	if err != nil {
		t.Fatal(err)
	}
	if src.many != 1 || len(src.manyIDs) != 2 || len(pre.Preferences) != 2 {
		t.Fatalf("Prefetch read %d times, ids %v, got %d users", src.many, src.manyIDs, len(pre.Preferences))
	}
	for i, want := range []Verdict{Block, Allow, Block} {
		d, err := e.Check(t.Context(), &jobs[i], night(), pre)
		if err != nil || d.Verdict != want {
			t.Fatalf("job %d: Check = %+v, %v; want verdict %d", i, d, err, want)
		}
	}
	if src.single != 0 {
		t.Fatalf("Check read preferences %d times despite the prefetch", src.single)
	}
	u3 := jobOf("u3")
	src.prefs["u3"] = heraldtype.Preferences{UserID: "u3", Timezone: "UTC"}
	if d, err := e.Check(t.Context(), &u3, night(), pre); err != nil || d.Verdict != Allow || src.single != 1 {
		t.Fatalf("Check of a user outside the prefetch = %+v, %v after %d reads", d, err, src.single)
	}
	if pre, err := e.Prefetch(t.Context(), nil, night()); pre != nil || err != nil || src.many != 1 {
		t.Fatalf("Prefetch(nil) = %v, %v after %d reads", pre, err, src.many)
	}
}

type countingSource struct {
	prefs        map[string]heraldtype.Preferences
	single, many int
	manyIDs      []string
}

func (s *countingSource) GetPreferences(_ context.Context, id string) (heraldtype.Preferences, error) {
	s.single++
	if p, ok := s.prefs[id]; ok {
		return p, nil
	}
	return heraldtype.Preferences{}, heraldtype.Errorf(heraldtype.ENOTFOUND, "no user")
}

func (s *countingSource) GetPreferencesMany(_ context.Context, ids []string) (map[string]heraldtype.Preferences, error) {
	s.many++
	s.manyIDs = ids
	out := map[string]heraldtype.Preferences{}
	for _, id := range ids {
		if p, ok := s.prefs[id]; ok {
			out[id] = p
		}
	}
	return out, nil
}

// BenchmarkCheck is the engine's own cost per delivery, with the
// preferences prefetched and a limiter that answers at once: the type
// lookup, the preference rules, quiet hours in the user's zone, the dedupe
// key and the local day.
func BenchmarkCheck(b *testing.B) {
	cat, err := NewCatalog(map[string]heraldtype.NotificationType{"promo": {CountsTowardCap: &capped, QuietHours: true}}, fakeTypes{})
	if err != nil {
		b.Fatal(err)
	}
	prefs := heraldtype.Preferences{UserID: "u1", Timezone: "Asia/Seoul",
		QuietHours: &heraldtype.QuietHours{Start: "23:00", End: "06:00"}}
	e, err := New(Config{Types: cat, Source: fakeSource{prefs: prefs}, Limiter: &fakeLimiter{}})
	if err != nil {
		b.Fatal(err)
	}
	j := job("promo", heraldtype.ChannelPush)
	pre := &Prefetched{Preferences: map[string]heraldtype.Preferences{"u1": prefs}}
	noon := time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC) // 12:00 in Seoul: outside quiet hours
	b.ReportAllocs()
	for b.Loop() {
		if d, err := e.Check(b.Context(), j, noon, pre); err != nil || d.Verdict != Allow {
			b.Fatalf("Check = %+v, %v", d, err)
		}
	}
}

// capped is a type's explicit counts_toward_cap: true.
var capped = true

// Issue 30 item 5, S3.8: a type that does not say whether it counts
// toward the daily cap caps what rules and campaigns produce, not what
// triggers and reminders send; a type that says decides, and a critical
// one is never capped.
func TestDailyCapByDefaultCountsFanOuts(t *testing.T) {
	t.Parallel()
	no := false
	cat, err := NewCatalog(map[string]heraldtype.NotificationType{
		"unsaid":   {QuietHours: true},
		"capped":   {CountsTowardCap: &capped, QuietHours: true},
		"uncapped": {CountsTowardCap: &no, QuietHours: true},
		"alarm":    {Critical: true},
	}, fakeTypes{})
	if err != nil {
		t.Fatal(err)
	}
	from := func(kind string) *heraldtype.Source {
		if kind == "" {
			return nil
		}
		return &heraldtype.Source{Kind: kind}
	}
	for _, c := range []struct {
		typ, source string
		counted     bool
	}{
		{"unsaid", heraldtype.SourceRule, true},
		{"unsaid", heraldtype.SourceCampaign, true},
		{"unsaid", heraldtype.SourceReminder, false},
		{"unsaid", "", false},
		{"undeclared", heraldtype.SourceRule, true},
		{"undeclared", "", false},
		{"capped", "", true},
		{"uncapped", heraldtype.SourceRule, false},
		{"uncapped", heraldtype.SourceCampaign, false},
		{"alarm", heraldtype.SourceCampaign, false},
	} {
		l := &fakeLimiter{}
		e, err := New(Config{Types: cat, Source: fakeSource{prefs: heraldtype.Preferences{Timezone: "Asia/Seoul"}}, Limiter: l})
		if err != nil {
			t.Fatal(err)
		}
		j := job(c.typ, heraldtype.ChannelPush)
		j.Notification.Source = from(c.source)
		if _, err := e.Check(t.Context(), j, night().Add(8*time.Hour), nil); err != nil {
			t.Fatal(err)
		}
		if counted := l.daily == 1; counted != c.counted {
			t.Errorf("type %s from %q: counted %v, want %v", c.typ, c.source, counted, c.counted)
		}
	}
}
