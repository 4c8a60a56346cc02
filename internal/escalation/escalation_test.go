package escalation

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// fakeStore hands out one claimed step and answers its fires with the
// scripted results, recording each fire.
type fakeStore struct {
	claimed []store.ClaimedEscalation
	answers []fireAnswer
	fires   []store.EscalationFire
}

type fireAnswer struct {
	outcome, reason string
	err             error
}

func (f *fakeStore) ClaimEscalations(context.Context, store.EscalationClaimParams) ([]store.ClaimedEscalation, error) {
	c := f.claimed
	f.claimed = nil
	return c, nil
}

func (f *fakeStore) FireEscalation(_ context.Context, fire store.EscalationFire) (string, string, store.EnqueueResult, error) {
	f.fires = append(f.fires, fire)
	a := f.answers[0]
	f.answers = f.answers[1:]
	return a.outcome, a.reason, store.EnqueueResult{}, a.err
}

func step() store.ClaimedEscalation {
	return store.ClaimedEscalation{NotificationID: "n1", UserID: "u1", Type: "order",
		Escalation: heraldtype.Escalation{Step: 1, Unless: heraldtype.ReceiptRead, Channels: []heraldtype.Channel{heraldtype.ChannelSMS}}}
}

// The worker reports each settled step by outcome: escalated, stopped (a
// receipt found at the fire), failed (Build's Failure, or the store
// refusing the step's notification as not found) — and nothing for a fire
// the guard refused.
func TestWorkerOutcomes(t *testing.T) {
	p := &store.EnqueueParams{}
	build := func(context.Context, store.ClaimedEscalation) (*store.EnqueueParams, error) { return p, nil }
	gone := func(context.Context, store.ClaimedEscalation) (*store.EnqueueParams, error) {
		return nil, &Failure{Reason: "notification_gone"}
	}
	for _, tc := range []struct {
		name    string
		build   Build
		answers []fireAnswer
		want    string
		fires   int
	}{
		{"escalated", build, []fireAnswer{{outcome: heraldtype.EscalationFired, reason: "sent on sms"}}, OutcomeEscalated, 1},
		{"stopped", build, []fireAnswer{{outcome: heraldtype.EscalationStopped, reason: "receipt read"}}, OutcomeStopped, 1},
		{"refused", build, []fireAnswer{{}}, "", 1},
		{"failed", gone, []fireAnswer{{outcome: heraldtype.EscalationStopped, reason: "notification_gone"}}, OutcomeFailed, 1},
		{"user gone", build, []fireAnswer{{err: heraldtype.Errorf(heraldtype.ENOTFOUND, "user %q not found", "u1")},
			{outcome: heraldtype.EscalationStopped, reason: `not_found: user "u1" not found`}}, OutcomeFailed, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &fakeStore{claimed: []store.ClaimedEscalation{step()}, answers: tc.answers}
			var got []string
			w, err := New(Config{Store: st, Build: tc.build, Owner: "w1", Now: func() time.Time { return time.Unix(0, 0) },
				Outcome: func(o string) { got = append(got, o) }})
			if err != nil {
				t.Fatal(err)
			}
			if n, err := w.RunOnce(t.Context()); err != nil || n != 1 {
				t.Fatalf("RunOnce = %d, %v", n, err)
			}
			if len(st.fires) != tc.fires {
				t.Fatalf("%d fires, want %d", len(st.fires), tc.fires)
			}
			if tc.want == "" && len(got) != 0 || tc.want != "" && (len(got) != 1 || got[0] != tc.want) {
				t.Fatalf("outcomes %v, want %q", got, tc.want)
			}
		})
	}
	// Any other error of Build leaves the step to its lease's end.
	st := &fakeStore{claimed: []store.ClaimedEscalation{step()}}
	w, _ := New(Config{Store: st, Owner: "w1", Build: func(context.Context, store.ClaimedEscalation) (*store.EnqueueParams, error) {
		return nil, errors.New("store down")
	}})
	if _, err := w.RunOnce(t.Context()); err == nil || len(st.fires) != 0 {
		t.Fatalf("RunOnce with a failing build = %v, %d fires", err, len(st.fires))
	}
}

func TestNormalize(t *testing.T) {
	push := []heraldtype.Channel{heraldtype.ChannelPush}
	ok := []heraldtype.EscalationStep{{After: time.Minute, Unless: heraldtype.ReceiptOpened, Channels: push},
		{After: time.Hour, Unless: heraldtype.ReceiptDelivered, Channels: []heraldtype.Channel{heraldtype.ChannelSMS, heraldtype.ChannelEmail}}}
	if err := Normalize(ok, 5); err != nil {
		t.Fatal(err)
	}
	if err := Normalize(ok, 1); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Fatalf("two steps over a limit of one = %v", err)
	}
	long := []heraldtype.EscalationStep{{After: 8 * 24 * time.Hour, Unless: heraldtype.ReceiptRead, Channels: push}}
	var he *heraldtype.Error
	if err := Normalize(long, 5); !errors.As(err, &he) || he.Field != "escalate[0].after" {
		t.Fatalf("an after of 8 days = %v", err)
	}
}
