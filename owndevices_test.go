package herald

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"testing"

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
