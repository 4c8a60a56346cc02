package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
)

// Issue 23, item 6: notifications:read and deliveries:read see a user's
// e-mail address and phone number masked unless the key also holds
// users:read, and a trigger's idempotency key only with admin — on every
// answer that carries them.
func TestReadScopesMaskContactData(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{addresses: true})
	e.do("PUT", "/v1/users/alice", map[string]string{"email": "alice@example.com", "phone": "+15550000001"}).expect(t, 200, nil)
	var trig triggerAnswer
	e.do("POST", "/v1/notifications", map[string]any{"user_id": "alice", "type": "receipt", "title": "Paid",
		"channels": []string{"email", "sms"}}, "Idempotency-Key", "order-4711").expect(t, http.StatusAccepted, &trig)

	const full = "alice@example.com +15550000001"
	const masked = "a***@example.com +1555***0001"
	for _, c := range []struct {
		name      string
		scopes    []auth.Scope
		addresses string
		idemKey   string
	}{
		{"read scopes only", []auth.Scope{auth.ScopeNotificationsRead, auth.ScopeDeliveriesRead, auth.ScopeDeliveriesAdmin}, masked, ""},
		{"with users:read", []auth.Scope{auth.ScopeNotificationsRead, auth.ScopeDeliveriesRead, auth.ScopeDeliveriesAdmin, auth.ScopeUsersRead}, full, ""},
		{"admin", []auth.Scope{auth.ScopeAdmin}, full, "order-4711"},
	} {
		bearer := "Bearer " + e.key(c.scopes...)
		var st herald.NotificationStatus
		e.do("GET", "/v1/notifications/"+trig.ID, nil, "Authorization", bearer).expect(t, 200, &st)
		if got := addresses(st.Deliveries); got != c.addresses {
			t.Errorf("%s: GET /v1/notifications/{id} addresses %q, want %q", c.name, got, c.addresses)
		}
		if st.IdempotencyKey != c.idemKey {
			t.Errorf("%s: GET /v1/notifications/{id} idempotency_key %q, want %q", c.name, st.IdempotencyKey, c.idemKey)
		}
		var page herald.DeliveryPage
		e.do("GET", "/v1/deliveries?notification_id="+trig.ID, nil, "Authorization", bearer).expect(t, 200, &page)
		if got := addresses(page.Deliveries); got != c.addresses {
			t.Errorf("%s: GET /v1/deliveries addresses %q, want %q", c.name, got, c.addresses)
		}
		// A replay answers with the delivery: masked the same way. Only
		// dead or unknown deliveries replay, so kill one first.
		var d heraldtype.Delivery
		for _, x := range st.Deliveries {
			if x.Channel == heraldtype.ChannelEmail {
				d = x
			}
		}
		if _, err := e.store.DB().Exec(`UPDATE deliveries SET state = 'dead' WHERE id = ?`, d.ID); err != nil {
			t.Fatal(err)
		}
		var replayed heraldtype.Delivery
		e.do("POST", fmt.Sprintf("/v1/deliveries/%d/replay", d.ID), nil, "Authorization", bearer).expect(t, 200, &replayed)
		if want := strings.Fields(c.addresses)[0]; replayed.Address != want {
			t.Errorf("%s: replay address %q, want %q", c.name, replayed.Address, want)
		}
	}
}

// addresses lists the deliveries' addresses, e-mail first.
func addresses(ds []heraldtype.Delivery) string {
	var email, sms string
	for _, d := range ds {
		switch d.Channel {
		case heraldtype.ChannelEmail:
			email = d.Address
		case heraldtype.ChannelSMS:
			sms = d.Address
		}
	}
	return email + " " + sms
}
