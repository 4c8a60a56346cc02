package digest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/message"
	"github.com/heraldhq/herald/internal/tmpl"
	"github.com/heraldhq/herald/store"
)

func claimed(n int) store.ClaimedDigest {
	c := store.ClaimedDigest{DigestInfo: heraldtype.DigestInfo{ID: "g1", UserID: "u1", Type: "comment", Key: "p1", Items: n}}
	for i := range n {
		c.Entries = append(c.Entries, store.DigestItem{Seq: i + 1, Title: fmt.Sprintf("t%d", i),
			Data: map[string]string{"author": fmt.Sprintf("a%d", i)}})
	}
	return c
}

// Render sees the items, their count and the first's fields; a template
// over the budget (a range over the items inside a range over them, on a
// full digest) stops with the budget's error instead of running, and a
// field an item lacks is an error, never "<no value>".
func TestRender(t *testing.T) {
	ctx := context.Background()
	d := heraldtype.Digest{Title: "{{.Count}} from {{.Data.author}}", Body: "{{range .Items}}{{.Title}} {{end}}"}
	title, body, err := Render(ctx, d, NewView(claimed(3)), message.Recipient{}, tmpl.Limits{}, 100, 100)
	if err != nil || title != "3 from a0" || body != "t0 t1 t2 " {
		t.Fatalf("Render = %q, %q, %v", title, body, err)
	}
	square := heraldtype.Digest{Title: "x", Body: "{{range .Items}}{{range $.Items}}{{end}}{{end}}"}
	_, _, err = Render(ctx, square, NewView(claimed(1000)), message.Recipient{}, tmpl.Limits{}, 2000, 2000)
	if _, over := tmpl.OverBudget(err); !over {
		t.Fatalf("a million steps: %v, want the budget's error", err)
	}
	missing := heraldtype.Digest{Title: "{{.Data.post}}"}
	if _, _, err := Render(ctx, missing, NewView(claimed(1)), message.Recipient{}, tmpl.Limits{}, 100, 100); err == nil {
		t.Fatal("a field the first item lacks rendered")
	}
	if _, _, err := Render(ctx, heraldtype.Digest{Title: "{{if false}}x{{end}}"}, NewView(claimed(1)), message.Recipient{}, tmpl.Limits{}, 100, 100); err == nil {
		t.Fatal("an empty title and body rendered")
	}
	if _, _, err := Render(ctx, heraldtype.Digest{Title: "{{range .Items}}{{.Title}}{{end}}"}, NewView(claimed(100)), message.Recipient{}, tmpl.Limits{}, 10, 10); err == nil {
		t.Fatal("a title longer than its limit rendered")
	}
}

// TestRenderInTheUsersLocale (issue 37): a digest's templates format
// counts, plurals and dates for its user — Korean in Seoul, Arabic digits
// and plural forms in Cairo.
func TestRenderInTheUsersLocale(t *testing.T) {
	ctx := context.Background()
	d := heraldtype.Digest{Title: `{{plural .Count "one" "# comment" "other" "# comments"}}`, Body: `{{date "long" "2026-11-28T20:00:00Z"}}`}
	seoul, _ := time.LoadLocation("Asia/Seoul")
	cairo, _ := time.LoadLocation("Africa/Cairo")
	for _, tc := range []struct {
		r           message.Recipient
		n           int
		title, body string
	}{
		{message.Recipient{}, 1, "1 comment", "November 28, 2026"},
		{message.Recipient{Locale: "en-US", Zone: seoul}, 3, "3 comments", "November 29, 2026"},
		{message.Recipient{Locale: "ar", Zone: cairo}, 3, "٣ comments", "٢٨ نوفمبر ٢٠٢٦"},
	} {
		title, body, err := Render(ctx, d, NewView(claimed(tc.n)), tc.r, tmpl.Limits{}, 100, 100)
		if err != nil || title != tc.title || body != tc.body {
			t.Errorf("%+v: %q, %q, %v; want %q, %q", tc.r, title, body, err, tc.title, tc.body)
		}
	}
}

// Key renders from the trigger's data; what the data lacks, and a key
// longer than MaxKeyBytes, are invalid_argument on data.
func TestKey(t *testing.T) {
	ctx := context.Background()
	d := heraldtype.Digest{Key: "{{.post_id}}"}
	if k, err := Key(ctx, "comment", d, map[string]string{"post_id": "p1"}, tmpl.Limits{}); err != nil || k != "p1" {
		t.Fatalf("Key = %q, %v", k, err)
	}
	if k, err := Key(ctx, "comment", heraldtype.Digest{}, nil, tmpl.Limits{}); err != nil || k != "" {
		t.Fatalf("no key template: %q, %v", k, err)
	}
	for name, data := range map[string]map[string]string{
		"missing":  nil,
		"too long": {"post_id": strings.Repeat("x", MaxKeyBytes+1)},
	} {
		_, err := Key(ctx, "comment", d, data, tmpl.Limits{})
		var he *heraldtype.Error
		if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field != "data" {
			t.Errorf("%s: %v, want invalid_argument on data", name, err)
		}
	}
}

// fakeStore records what the worker fires; fireErr is returned by the
// first fire with an enqueue.
type fakeStore struct {
	claim   []store.ClaimedDigest
	fires   []store.DigestFire
	fireErr error
}

func (f *fakeStore) ClaimDigests(context.Context, store.DigestClaimParams) ([]store.ClaimedDigest, error) {
	c := f.claim
	f.claim = nil
	return c, nil
}

func (f *fakeStore) ListDigestItems(context.Context, string) ([]store.DigestItem, error) {
	return claimed(2).Entries, nil
}

func (f *fakeStore) FireDigest(_ context.Context, fire store.DigestFire) (bool, store.EnqueueResult, error) {
	f.fires = append(f.fires, fire)
	if fire.Enqueue != nil && f.fireErr != nil {
		err := f.fireErr
		f.fireErr = nil
		return false, store.EnqueueResult{}, err
	}
	return true, store.EnqueueResult{}, nil
}

// FireDigests is all or nothing, as the stores': with fireErr pending,
// the batch writes nothing and the worker fires each alone.
func (f *fakeStore) FireDigests(ctx context.Context, fires []store.DigestFire) ([]store.DigestFired, error) {
	for _, fire := range fires {
		if fire.Enqueue != nil && f.fireErr != nil {
			return nil, f.fireErr
		}
	}
	out := make([]store.DigestFired, len(fires))
	for i, fire := range fires {
		ok, res, _ := f.FireDigest(ctx, fire)
		out[i] = store.DigestFired{Fired: ok, Res: res}
	}
	return out, nil
}

func newWorker(t *testing.T, st *fakeStore, build Build, outcomes *[]string) *Worker {
	t.Helper()
	w, err := New(Config{Store: st, Build: build, Owner: "w1", Now: func() time.Time { return time.Unix(0, 0) },
		Logger:  slog.New(slog.DiscardHandler),
		Outcome: func(o string) { *outcomes = append(*outcomes, o) }})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// The worker's failure paths: a digest whose message cannot be built is
// marked failed with the reason; one whose user is gone (the store
// refuses its trigger) is marked failed; any other error leaves it to
// its lease, written nothing.
func TestWorkerFailures(t *testing.T) {
	ctx := context.Background()
	one := &store.EnqueueParams{Notifications: []heraldtype.Notification{{ID: "n1", UserID: "u1"}}}
	cases := []struct {
		name     string
		build    Build
		fireErr  error
		fires    int
		failure  string
		outcomes string
		err      bool
	}{
		{"sent", func(context.Context, store.ClaimedDigest) (*store.EnqueueParams, error) { return one, nil }, nil, 1, "", "[sent]", false},
		{"empty", func(context.Context, store.ClaimedDigest) (*store.EnqueueParams, error) { return nil, nil }, nil, 1, "", "[empty]", false},
		{"render failed", func(context.Context, store.ClaimedDigest) (*store.EnqueueParams, error) {
			return nil, &Failure{Reason: "render_failed: digest.title"}
		}, nil, 1, "render_failed: digest.title", "[failed]", false},
		{"user gone", func(context.Context, store.ClaimedDigest) (*store.EnqueueParams, error) { return one, nil },
			heraldtype.Errorf(heraldtype.ENOTFOUND, `user "u1" not found`), 2, `not_found: user "u1" not found`, "[failed]", false},
		{"store down", func(context.Context, store.ClaimedDigest) (*store.EnqueueParams, error) { return one, nil },
			errors.New("connection refused"), 1, "", "[]", true},
		{"build error", func(context.Context, store.ClaimedDigest) (*store.EnqueueParams, error) {
			return nil, errors.New("types unavailable")
		}, nil, 0, "", "[]", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := &fakeStore{claim: []store.ClaimedDigest{claimed(2)}, fireErr: c.fireErr}
			var outcomes []string
			n, err := newWorker(t, st, c.build, &outcomes).RunOnce(ctx)
			if n != 1 || (err != nil) != c.err {
				t.Fatalf("RunOnce = %d, %v", n, err)
			}
			if len(st.fires) != c.fires {
				t.Fatalf("%d fires, want %d: %+v", len(st.fires), c.fires, st.fires)
			}
			if c.fires > 0 {
				last := st.fires[len(st.fires)-1]
				if last.Failure != c.failure || (c.failure != "" && last.Enqueue != nil) || last.Owner != "w1" {
					t.Fatalf("last fire = %+v, want failure %q", last, c.failure)
				}
			}
			if fmt.Sprint(outcomes) != c.outcomes {
				t.Fatalf("outcomes %v, want %s", outcomes, c.outcomes)
			}
		})
	}
}

// Normalize fills the defaults and refuses each bad field by name.
func TestNormalize(t *testing.T) {
	d := heraldtype.Digest{Window: time.Minute, Title: "x"}
	if err := Normalize(&d, 50, tmpl.Limits{}); err != nil || d.MaxItems != 50 || d.First != heraldtype.DigestFirstCollect {
		t.Fatalf("Normalize = %+v, %v", d, err)
	}
	for field, bad := range map[string]heraldtype.Digest{
		"digest.window":    {Window: 8 * 24 * time.Hour, Title: "x"},
		"digest.max_items": {Window: time.Minute, Title: "x", MaxItems: 51},
		"digest.first":     {Window: time.Minute, Title: "x", First: "now"},
		"digest.title":     {Window: time.Minute, Title: "{{template \"x\"}}"},
		"digest.body":      {Window: time.Minute, Title: "x", Body: strings.Repeat("b", MaxTemplateBytes+1)},
	} {
		err := Normalize(&bad, 50, tmpl.Limits{})
		var he *heraldtype.Error
		if !errors.As(err, &he) || he.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
}
