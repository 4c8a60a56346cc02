package herald

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/provider/webpush"
)

// Two users registering one new device id at once through the Client's
// user-token call: each ends up with a device of its own, and neither is
// told it has a device that the other then holds (issue 23: the check and
// the write used to be two steps, and one user silently lost the device).
func TestRegisterOwnDeviceRace(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, nil)
	p.user("u1", "UTC", "tok-u1")
	p.user("u2", "UTC", "tok-u2")
	for round := range 30 {
		id := fmt.Sprintf("race-%d", round)
		var wg sync.WaitGroup
		got := map[string]heraldtype.Device{}
		var mu sync.Mutex
		for _, u := range []string{"u1", "u2"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := p.client.RegisterOwnDevice(p.ctx, u, DeviceInput{DeviceID: id, Token: id + "-" + u, Platform: "android"})
				if err != nil {
					t.Errorf("%s %s: %v", id, u, err)
				}
				mu.Lock()
				got[u] = d
				mu.Unlock()
			}()
		}
		wg.Wait()
		for u, d := range got {
			cur, err := p.store.GetDevice(p.ctx, d.ID)
			if err != nil || cur.UserID != u || cur.Token != id+"-"+u {
				t.Fatalf("%s: %s was answered %+v; the store holds %+v (%v)", id, u, d, cur, err)
			}
		}
	}
}

// An app user cannot register a web device whose endpoint is an internal
// address in any of its IPv6 disguises: the registration is refused with
// invalid_argument on token (a 400), nothing is stored, and no delivery
// ever dials it (issue 23 item 1).
func TestRegisterOwnDeviceInternalWebEndpoint(t *testing.T) {
	t.Parallel()
	pub, priv, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	wp, err := webpush.New(webpush.Config{VAPIDPublicKey: pub, VAPIDPrivateKey: priv, Subject: "mailto:ops@herald.test"})
	if err != nil {
		t.Fatal(err)
	}
	p := newPipeline(t, func(c *Config) {
		c.Providers["webpush"] = wp
		c.PushRouting = map[heraldtype.Platform]string{heraldtype.PlatformAndroid: "fcm", heraldtype.PlatformWeb: "webpush"}
	})
	p.user("u1", "UTC", "tok-u1")
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p256dh := base64.RawURLEncoding.EncodeToString(key.PublicKey().Bytes())
	auth := base64.RawURLEncoding.EncodeToString(make([]byte, 16))
	for _, host := range []string{"[64:ff9b::a9fe:a9fe]", "[64:ff9b:1::a9fe:a9fe]", "[2002:7f00:1::]", "[::127.0.0.1]", "198.18.0.1", "240.0.0.1", "192.0.0.1"} {
		_, err := p.client.RegisterOwnDevice(p.ctx, "u1", DeviceInput{DeviceID: "b1", Platform: "web",
			Token: "https://" + host + "/push/x", P256DH: p256dh, Auth: auth})
		var he *heraldtype.Error
		if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field != "token" {
			t.Errorf("%s: %v, want invalid_argument on token", host, err)
		}
	}
	if ds, err := p.client.ListDevices(p.ctx, "u1"); err != nil || len(ds) != 1 {
		t.Errorf("devices after refused registrations: %v, %v (want only the android one)", ds, err)
	}
}

// A push token is not a skeleton key (issue 23 item 5). bob presenting the
// token alice's phone holds, through his user token, is refused while
// alice's phone is in use: 409 conflict on "token", naming no one, and
// alice keeps her pushes. The phone that changed hands (S0.1) gets it:
// once alice signed out there (her app deletes its device), once her
// phone was idle for DeviceTokenTakeoverAfter, or at once through a
// server key.
func TestRegisterOwnDeviceTokenTakeover(t *testing.T) {
	t.Parallel()
	refused := func(t *testing.T, err error) {
		t.Helper()
		var he *heraldtype.Error
		if !errors.As(err, &he) || he.Code != heraldtype.ECONFLICT || he.Field != "token" {
			t.Fatalf("bob presenting alice's token: %v, want conflict on token", err)
		}
	}
	aliceHolds := func(t *testing.T, p *pipeline) {
		t.Helper()
		d, err := p.store.GetDevice(p.ctx, "dev-alice")
		if err != nil || d.UserID != "alice" || d.Token != "tok-alice" || d.Status != heraldtype.DeviceActive {
			t.Fatalf("alice's phone = %+v, %v", d, err)
		}
	}
	bob := DeviceInput{DeviceID: "bob-phone", Token: "tok-alice", Platform: "android"}
	setup := func(t *testing.T, mod func(*Config)) *pipeline {
		p := newPipeline(t, mod)
		p.user("alice", "UTC", "tok-alice")
		p.user("bob", "UTC", "tok-bob")
		return p
	}

	t.Run("abuse", func(t *testing.T) {
		t.Parallel()
		p := setup(t, nil)
		_, err := p.client.RegisterOwnDevice(p.ctx, "bob", bob)
		refused(t, err)
		if strings.Contains(err.Error(), "alice") {
			t.Fatalf("the refusal names alice: %v", err)
		}
		// Naming alice's device id too changes nothing.
		_, err = p.client.RegisterOwnDevice(p.ctx, "bob", DeviceInput{DeviceID: "dev-alice", Token: "tok-alice", Platform: "android"})
		refused(t, err)
		// alice keeps using her phone: a heartbeat just before the grace
		// ends restarts it.
		p.clock.Advance(23 * time.Hour)
		if err := p.client.HeartbeatOwnDevice(p.ctx, "alice", OwnHeartbeat{Token: "tok-alice"}); err != nil {
			t.Fatal(err)
		}
		p.clock.Advance(2 * time.Hour)
		_, err = p.client.RegisterOwnDevice(p.ctx, "bob", bob)
		refused(t, err)
		aliceHolds(t, p)
	})
	t.Run("signed out", func(t *testing.T) {
		t.Parallel()
		p := setup(t, nil)
		if err := p.client.DeleteDevice(p.ctx, "alice", "dev-alice"); err != nil {
			t.Fatal(err)
		}
		if d, err := p.client.RegisterOwnDevice(p.ctx, "bob", bob); err != nil || d.Token != "tok-alice" {
			t.Fatalf("bob after alice signed out = %+v, %v", d, err)
		}
	})
	t.Run("idle", func(t *testing.T) {
		t.Parallel()
		p := setup(t, nil)
		p.clock.Advance(24*time.Hour + time.Second)
		d, err := p.client.RegisterOwnDevice(p.ctx, "bob", bob)
		if err != nil || d.UserID != "bob" || d.Token != "tok-alice" {
			t.Fatalf("bob after alice's phone went idle = %+v, %v", d, err)
		}
		a, err := p.store.GetDevice(p.ctx, "dev-alice")
		if err != nil || a.UserID != "alice" || a.Token != "" || a.InvalidReason != "token_moved" {
			t.Fatalf("alice's phone after the hand-over = %+v, %v", a, err)
		}
	})
	t.Run("configured", func(t *testing.T) {
		t.Parallel()
		p := setup(t, func(c *Config) { c.DeviceTokenTakeoverAfter = time.Hour })
		p.clock.Advance(30 * time.Minute)
		_, err := p.client.RegisterOwnDevice(p.ctx, "bob", bob)
		refused(t, err)
		p.clock.Advance(31 * time.Minute)
		if _, err := p.client.RegisterOwnDevice(p.ctx, "bob", bob); err != nil {
			t.Fatalf("bob after alice's phone idled the configured hour: %v", err)
		}
	})
	t.Run("never", func(t *testing.T) {
		t.Parallel()
		p := setup(t, func(c *Config) { c.DeviceTokenTakeoverAfter = -1 })
		p.clock.Advance(200 * 24 * time.Hour)
		_, err := p.client.RegisterOwnDevice(p.ctx, "bob", bob)
		refused(t, err)
		aliceHolds(t, p)
	})
	t.Run("server key", func(t *testing.T) {
		t.Parallel()
		p := setup(t, nil)
		if d, err := p.client.RegisterDevice(p.ctx, "bob", bob); err != nil || d.Token != "tok-alice" {
			t.Fatalf("server key moving the token = %+v, %v", d, err)
		}
	})
}
