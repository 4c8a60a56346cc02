package apns

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	apnsemu "github.com/heraldhq/herald/emulator/apns"
	"github.com/heraldhq/herald/heraldtype"
)

// TestProviderTokenShape checks the JWT Apple asks for: ES256, kid = key
// id, iss = team id, iat = now, signed by the .p8 key.
func TestProviderTokenShape(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, apnsemu.Config{Now: clock.Now})
	c, cfg := newTestClient(t, e, clock.Now)
	block, _ := pem.Decode(cfg.KeyP8)
	priv, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	var claims jwt.MapClaims
	tok, err := jwt.ParseWithClaims(currentJWT(t, c), &claims, func(*jwt.Token) (any, error) {
		return &priv.(*ecdsa.PrivateKey).PublicKey, nil
	}, jwt.WithValidMethods([]string{"ES256"}), jwt.WithoutClaimsValidation())
	if err != nil {
		t.Fatal(err)
	}
	if tok.Header["kid"] != cfg.KeyID || claims["iss"] != cfg.TeamID || claims["iat"] != float64(clock.Now().Unix()) || len(claims) != 2 {
		t.Fatalf("header %v claims %v", tok.Header, claims)
	}
}

// TestProviderTokenCachedAndRefreshed checks Apple's rule: one token for
// many sends, replaced after 50 minutes (never before 20, never after 60).
func TestProviderTokenCachedAndRefreshed(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, apnsemu.Config{Now: clock.Now, EnforceTokenUpdateInterval: true})
	c, _ := newTestClient(t, e, clock.Now)
	send := func() { mustSend(t, c, message(deviceToken(1), heraldtype.PayloadAlert, heraldtype.PriorityHigh)) }

	for range 5 {
		send()
	}
	first := currentJWT(t, c)
	clock.Advance(tokenRefreshAfter - time.Second)
	send()
	if got := currentJWT(t, c); got != first {
		t.Fatal("the token was re-minted before 50 minutes")
	}
	clock.Advance(time.Second)
	send()
	if got := currentJWT(t, c); got == first {
		t.Fatal("the token was not re-minted at 50 minutes")
	}
	if s := e.Stats(); s.ProviderTokens != 2 || s.Accepted != 7 || len(s.Rejected) != 0 {
		t.Fatalf("stats %+v, want 7 sends with 2 provider tokens", s)
	}
}

// TestExpiredProviderTokenMintsNewJWT: after ExpiredProviderToken the next
// send (the dispatcher's retry) carries a new JWT and succeeds.
func TestExpiredProviderTokenMintsNewJWT(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, apnsemu.Config{Now: clock.Now})
	c, _ := newTestClient(t, e, clock.Now)
	tok := deviceToken(1)
	m := message(tok, heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	mustSend(t, c, m)
	before := currentJWT(t, c)

	// A second later, so the new token's iat differs.
	clock.Advance(time.Second)
	if err := e.FailToken(tok, apnsemu.TokenFault{Reason: ReasonExpiredProviderToken, Times: 1}); err != nil {
		t.Fatal(err)
	}
	se := sendErr(t, c, m)
	if se.Class != heraldtype.ClassTemporary || se.Code != ReasonExpiredProviderToken {
		t.Fatalf("got %+v", se)
	}
	mustSend(t, c, m)
	if currentJWT(t, c) == before {
		t.Fatal("the refused token is still in use")
	}
	if s := e.Stats(); s.ProviderTokens != 2 || s.Accepted != 2 {
		t.Fatalf("stats %+v", s)
	}
}

// TestEmulatorExpiresOldTokens lets a token age past an hour on the
// emulator's clock while the client's clock stands still: the emulator
// answers ExpiredProviderToken by itself.
func TestEmulatorExpiresOldTokens(t *testing.T) {
	t.Parallel()
	clientClock, emuClock := newFakeClock(), newFakeClock()
	e := startEmulator(t, apnsemu.Config{Now: emuClock.Now})
	c, _ := newTestClient(t, e, clientClock.Now)
	m := message(deviceToken(1), heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	mustSend(t, c, m)
	emuClock.Advance(time.Hour + time.Second)
	if se := sendErr(t, c, m); se.Code != ReasonExpiredProviderToken || se.Class != heraldtype.ClassTemporary {
		t.Fatalf("got %+v", se)
	}
	// The client's clock agrees now: the new token is accepted.
	clientClock.Advance(time.Hour + time.Second)
	mustSend(t, c, m)
}

// TestTooManyProviderTokenUpdatesHoldsMinting: once APNs says tokens are
// updated too often, the Client mints nothing for 20 minutes.
func TestTooManyProviderTokenUpdatesHoldsMinting(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, apnsemu.Config{Now: clock.Now, EnforceTokenUpdateInterval: true})
	c, _ := newTestClient(t, e, clock.Now)
	tok := deviceToken(1)
	m := message(tok, heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	mustSend(t, c, m)
	first := currentJWT(t, c)

	// APNs calls the token expired after 5 minutes; the new token comes
	// too soon for the emulator's 20-minute rule.
	clock.Advance(5 * time.Minute)
	if err := e.FailToken(tok, apnsemu.TokenFault{Reason: ReasonExpiredProviderToken, Times: 1}); err != nil {
		t.Fatal(err)
	}
	sendErr(t, c, m)
	if se := sendErr(t, c, m); se.Code != ReasonTooManyProviderTokenUpdates || se.Class != heraldtype.ClassTemporary {
		t.Fatalf("got %+v", se)
	}
	second := currentJWT(t, c)
	if second == first {
		t.Fatal("no new token was minted after ExpiredProviderToken")
	}
	// Even a refused token is kept during the hold.
	c.tokens.expired(second)
	clock.Advance(tokenMinInterval - time.Second)
	if currentJWT(t, c) != second {
		t.Fatal("a token was minted during the hold")
	}
	clock.Advance(time.Second)
	third := currentJWT(t, c)
	if third == second {
		t.Fatal("no token was minted after the hold")
	}
	mustSend(t, c, m)
	if s := e.Stats(); s.Rejected[ReasonTooManyProviderTokenUpdates] != 1 || s.ProviderTokens != 2 {
		t.Fatalf("stats %+v", s)
	}
}

// TestIdleTimeoutUsesNewConnection: APNs closes the connection after
// IdleTimeout; the next send must dial a new one.
func TestIdleTimeoutUsesNewConnection(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, apnsemu.Config{})
	c, _ := newTestClient(t, e, nil)
	tok := deviceToken(1)
	m := message(tok, heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	mustSend(t, c, m)
	mustSend(t, c, m)
	if n := e.Stats().Connections; n != 1 {
		t.Fatalf("%d connections for two sends, want HTTP/2 reuse", n)
	}
	if err := e.FailToken(tok, apnsemu.TokenFault{Reason: ReasonIdleTimeout, Times: 1}); err != nil {
		t.Fatal(err)
	}
	if se := sendErr(t, c, m); se.Code != ReasonIdleTimeout || se.Class != heraldtype.ClassTemporary {
		t.Fatalf("got %+v", se)
	}
	mustSend(t, c, m)
	if n := e.Stats().Connections; n != 2 {
		t.Fatalf("%d connections, want a new one after IdleTimeout", n)
	}
}

// TestProviderTokenAgeUsesWallClock: a token's age is measured without the
// monotonic clock, as APNs measures iat.
func TestProviderTokenAgeUsesWallClock(t *testing.T) {
	e, err := apnsemu.New(apnsemu.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientConfig(t, e)
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	currentJWT(t, c)
	if issued := c.tokens.current.Load().issued; issued != issued.Round(0) {
		t.Fatal("the issue time carries a monotonic reading")
	}
}

// TestProviderTokenNeverExpiresInUse sends every 7 minutes for three hours
// on a clock the client and the emulator share; the emulator refuses a
// token over an hour old (ExpiredProviderToken) and one replaced within
// 20 minutes (TooManyProviderTokenUpdates). Every send is accepted: the
// token is renewed before it expires, and not more often than allowed.
func TestProviderTokenNeverExpiresInUse(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, apnsemu.Config{Now: clock.Now, EnforceTokenUpdateInterval: true})
	c, _ := newTestClient(t, e, clock.Now)
	m := message(deviceToken(1), heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	for range 3 * 60 / 7 {
		mustSend(t, c, m)
		clock.Advance(7 * time.Minute)
	}
	// Tokens minted at 0, 56, 112 and 168 minutes: the first send at or
	// after 50 minutes of age renews.
	if s := e.Stats(); s.Accepted != 25 || len(s.Rejected) != 0 || s.ProviderTokens != 4 {
		t.Fatalf("stats %+v, want 25 accepted with 4 provider tokens and none refused", s)
	}
}
