package fcm

import (
	"context"
	"testing"
	"time"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/heraldtype"
)

// TestShortLivedTokensAreRenewed sends across the expiry of the emulator's
// 2-second access tokens, on a clock the client and the emulator share:
// a token is reused while it is fresh, and renewed before it expires, so
// no send ever carries an expired token and every send is accepted.
func TestShortLivedTokensAreRenewed(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, fcmemu.Config{TokenTTL: 2 * time.Second, Now: clock.Now})
	c := newTestClient(t, e, clock.Now)
	m := message(heraldtype.PlatformAndroid, "t", heraldtype.PayloadAlert, heraldtype.PriorityNormal)
	send := func() {
		t.Helper()
		if _, err := c.Send(context.Background(), m); err != nil {
			t.Fatalf("send at +%v: %v", clock.Now().Sub(newFakeClock().Now()), err)
		}
	}
	send()
	clock.Advance(900 * time.Millisecond)
	send() // 1.1 s left: the token is reused
	if n := e.Stats().TokensIssued; n != 1 {
		t.Fatalf("%d tokens issued for two sends within the first token's life", n)
	}
	clock.Advance(200 * time.Millisecond)
	send() // 0.9 s left, under half its life: renewed before it expires
	if n := e.Stats().TokensIssued; n != 2 {
		t.Fatalf("%d tokens issued, want the token renewed in the last half of its life", n)
	}
	// Ten lifetimes of sends every 700 ms: the emulator refuses an expired
	// token with UNAUTHENTICATED, so one stale send would show.
	for range 30 {
		clock.Advance(700 * time.Millisecond)
		send()
	}
	s := e.Stats()
	if s.Accepted != 33 || len(s.Rejected) != 0 {
		t.Fatalf("stats %+v, want 33 accepted and none refused", s)
	}
	if s.TokensIssued < 11 || s.TokensIssued > 22 {
		t.Fatalf("%d tokens for 21 s of 2-second tokens", s.TokensIssued)
	}
}

// TestDeletedServiceAccount: once the emulator deletes a project's service
// account, a client holding its token is refused (UNAUTHENTICATED) and one
// fetching a new token is told the credentials are bad, for good.
func TestDeletedServiceAccount(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, fcmemu.Config{})
	c := newTestClient(t, e, nil)
	m := message(heraldtype.PlatformAndroid, "t", heraldtype.PayloadAlert, heraldtype.PriorityNormal)
	if _, err := c.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	e.DeleteServiceAccount("p")
	if se := sendErr(t, c, m); se.Code != CodeUnauthenticated {
		t.Fatalf("a revoked token: %+v", se)
	}
	if se := sendErr(t, c, m); se.Code != codeAuthConfig || se.Class != heraldtype.ClassPermanent {
		t.Fatalf("a deleted account's assertion: %+v", se)
	}
}
