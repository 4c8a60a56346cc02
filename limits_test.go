package herald

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// The limits of issue 18, item 4 and 8: each over-limit call is refused
// with invalid_argument naming the field and the limit, and writes
// nothing.
func TestLimits(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, func(c *Config) { c.Limits = Limits{MaxTriggerBytes: 10_000, MaxPreferenceTypes: 3} })
	users := make([]string, 20)
	for i := range users {
		users[i] = "u" + strconv.Itoa(i)
		if _, err := p.client.PutUser(p.ctx, users[i], UserInput{}); err != nil {
			t.Fatal(err)
		}
	}
	inApp := []heraldtype.Channel{heraldtype.ChannelInApp}
	prefs := func(n int) Preferences {
		pr := Preferences{Types: map[string]TypePreference{}}
		for i := range n {
			pr.Types["t"+strconv.Itoa(i)] = TypePreference{Disabled: true}
		}
		return pr
	}
	cases := []struct {
		name, field, limit string
		call               func() error
	}{
		{"in-app data over max_data_bytes", "data", "max_data_bytes (4096)", func() error {
			_, err := p.client.Enqueue(p.ctx, Request{UserID: "u0", Type: "t", Title: "x", Channels: inApp,
				Data: map[string]string{"blob": strings.Repeat("a", 4093)}})
			return err
		}},
		{"recipients × payload over max_trigger_bytes", "user_ids", "max_trigger_bytes (10000)", func() error {
			_, err := p.client.Enqueue(p.ctx, Request{UserIDs: users, Type: "t", Title: "x", Body: strings.Repeat("b", 500), Channels: inApp})
			return err
		}},
		{"preference types over max_preference_types", "types", "max_preference_types (3)", func() error {
			_, err := p.client.PutPreferences(p.ctx, "u0", prefs(4))
			return err
		}},
	}
	for _, c := range cases {
		err := c.call()
		var he *heraldtype.Error
		if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field != c.field || !strings.Contains(he.Message, c.limit) {
			t.Errorf("%s: got %v, want invalid_argument on %s naming %s", c.name, err, c.field, c.limit)
		}
	}
	// At the limits, everything is accepted.
	if _, err := p.client.Enqueue(p.ctx, Request{UserID: "u0", Type: "t", Title: "x", Channels: inApp,
		Data: map[string]string{"blob": strings.Repeat("a", 4092)}}); err != nil {
		t.Errorf("data at max_data_bytes: %v", err)
	}
	if _, err := p.client.Enqueue(p.ctx, Request{UserIDs: users, Type: "t", Body: strings.Repeat("b", 500), Channels: inApp}); err != nil {
		t.Errorf("trigger at max_trigger_bytes: %v", err)
	}
	if _, err := p.client.PutPreferences(p.ctx, "u0", prefs(3)); err != nil {
		t.Errorf("preferences at max_preference_types: %v", err)
	}
	if items, err := p.client.ListInbox(p.ctx, "u1", InboxFilter{}); err != nil || len(items.Items) != 1 {
		t.Errorf("inbox of u1 = %+v, %v; want only the accepted trigger", items, err)
	}
}

func TestLimitsValidated(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, nil)
	_, err := NewClient(Config{Store: p.store, Limits: Limits{MaxPreferenceTypes: -1}})
	if err == nil || !strings.Contains(err.Error(), "MaxPreferenceTypes") {
		t.Fatalf("NewClient with a negative limit = %v", err)
	}
}

// A user keeps at most max_devices_per_user devices (default 20): one more
// evicts the device seen longest ago, so one push fans out to at most that
// many sends (issue 18, item 4).
func TestDevicesPerUserCap(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, nil)
	start := p.clock.Now()
	for i := range DefaultMaxDevicesPerUser + 1 {
		p.setClock(start.Add(time.Duration(i) * time.Minute))
		p.device("u1", "d"+strconv.Itoa(i), "tok-"+strconv.Itoa(i))
	}
	devices, err := p.client.ListDevices(p.ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if len(devices) != DefaultMaxDevicesPerUser {
		t.Fatalf("%d devices after %d registrations, want %d", len(devices), DefaultMaxDevicesPerUser+1, DefaultMaxDevicesPerUser)
	}
	for _, d := range devices {
		if d.ID == "d0" {
			t.Fatal("d0, the device seen longest ago, was kept")
		}
	}
	res := p.enqueue(Request{UserID: "u1", Title: "x"})
	if n := res.Notifications[0].Deliveries; n != DefaultMaxDevicesPerUser {
		t.Fatalf("one push made %d deliveries, want %d", n, DefaultMaxDevicesPerUser)
	}
}

// An over-long suppression address is refused with a message naming the
// limit, not "is required" (issue 18, item 8).
func TestDeleteSuppressionAddressLimit(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, nil)
	err := p.client.DeleteSuppression(p.ctx, heraldtype.ChannelEmail, strings.Repeat("a", 321))
	var he *heraldtype.Error
	if !errors.As(err, &he) || he.Field != "address" || !strings.Contains(he.Message, "320") {
		t.Fatalf("over-long address: %v, want the limit 320 named", err)
	}
}
