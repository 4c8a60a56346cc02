package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// deviceJSON is a device as the API shows it; the reassignment fields are
// read from JSON so that their absence is visible.
type deviceJSON struct {
	DeviceID       string  `json:"device_id"`
	UserID         string  `json:"user_id"`
	Token          string  `json:"token"`
	Status         string  `json:"status"`
	InvalidReason  string  `json:"invalid_reason"`
	PreviousUserID string  `json:"previous_user_id"`
	ReassignedAt   *string `json:"reassigned_at"`
}

func (e *env) devicesOf(user string) map[string]deviceJSON {
	e.t.Helper()
	var ds struct{ Devices []deviceJSON }
	e.do("GET", "/v1/users/"+user+"/devices", nil).expect(e.t, 200, &ds)
	m := map[string]deviceJSON{}
	for _, d := range ds.Devices {
		m[d.DeviceID] = d
	}
	return m
}

// A user token never moves another user's device: not through the devices
// route, not through /v1/tokens, not even with the push token that device
// holds while that device is in use (issue 18, issue 23, S0.1). Both routes answer an id taken by someone else
// the same way as a new id: 200 with the caller's own device.
func TestUserTokenCannotTakeOverDevice(t *testing.T) {
	t.Parallel()
	for _, route := range []string{"/v1/users/bob/devices", "/v1/tokens"} {
		t.Run(route, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOptions{userTokens: userTokens(t)})
			e.seedUser("alice") // alice-phone, tok-alice
			e.seedUser("bob")
			bob := "Bearer " + userToken(t, "bob")
			register := func(deviceID, token string) deviceJSON {
				t.Helper()
				var d deviceJSON
				e.do("POST", route, map[string]any{"device_id": deviceID, "token": token, "platform": "android"},
					"Authorization", bob).expect(t, 200, &d)
				if d.UserID != "bob" || d.Token != token || d.Status != "ACTIVE" {
					t.Fatalf("bob's registration = %+v", d)
				}
				if d.PreviousUserID != "" {
					t.Fatalf("a user token is shown another user's id: %+v", d)
				}
				return d
			}

			// Knowing alice's device id: bob gets a device of his own.
			d := register("alice-phone", "tok-evil")
			if d.DeviceID == "alice-phone" {
				t.Fatalf("bob took over alice-phone: %+v", d)
			}
			if a := e.devicesOf("alice")["alice-phone"]; a.UserID != "alice" || a.Token != "tok-alice" || a.Status != "ACTIVE" {
				t.Fatalf("alice-phone after bob's attempt = %+v", a)
			}
			// The same request again lands on the same device.
			if again := register("alice-phone", "tok-evil"); again.DeviceID != d.DeviceID {
				t.Fatalf("re-registration made a second device: %s, then %s", d.DeviceID, again.DeviceID)
			}

			// bob presents the token alice-phone holds while alice
			// still uses it (a leaked token): 409 conflict on token,
			// naming no one, and alice keeps it (issue 23). This used to
			// move the token to bob.
			r := e.do("POST", route, map[string]any{"device_id": "alice-phone", "token": "tok-alice", "platform": "android"},
				"Authorization", bob)
			if r.status != 409 || r.errorBody(t).Field != "token" || strings.Contains(string(r.body), "alice") {
				t.Fatalf("bob presenting alice's token: %d %s", r.status, r.body)
			}
			if a := e.devicesOf("alice")["alice-phone"]; a.Token != "tok-alice" || a.Status != "ACTIVE" {
				t.Fatalf("alice-phone after bob's attempt with its token = %+v", a)
			}
			// The phone changed hands (S0.1): alice signs out there
			// (her app deletes its device), then bob's registration
			// from that phone takes the token. (A holder idle for
			// device_token_takeover_after gives it up too; the Client
			// and store tests move the clock for that.)
			e.do("DELETE", "/v1/users/alice/devices/alice-phone", nil, "Authorization", "Bearer "+userToken(t, "alice")).expect(t, 204, nil)
			// alice-phone no longer exists, so bob may have its id.
			h := register("alice-phone", "tok-alice")
			if _, ok := e.devicesOf("alice")["alice-phone"]; ok {
				t.Fatal("alice still lists alice-phone after signing out")
			}
			if b := e.devicesOf("bob")[h.DeviceID]; b.Token != "tok-alice" {
				t.Fatalf("bob's device after the hand-over = %+v", b)
			}
			// bob's own device is still his to refresh under its id.
			if r := register("bob-phone", "tok-bob-2"); r.DeviceID != "bob-phone" {
				t.Fatalf("bob refreshing his own device = %+v", r)
			}
		})
	}
}

// A server key may move a device to another user; the move is recorded on
// the device (issue 18).
func TestServerKeyReassignsDeviceRecorded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t)})
	e.seedUser("alice")
	e.seedUser("bob")
	var d deviceJSON
	e.do("POST", "/v1/users/bob/devices", map[string]any{"device_id": "alice-phone", "token": "tok-new", "platform": "android"}).
		expect(t, 200, &d)
	if d.DeviceID != "alice-phone" || d.UserID != "bob" || d.PreviousUserID != "alice" || d.ReassignedAt == nil {
		t.Fatalf("reassigned device = %+v", d)
	}
	if _, ok := e.devicesOf("alice")["alice-phone"]; ok {
		t.Fatal("alice still lists the reassigned device")
	}
	// A refresh by its new owner keeps the record of the move.
	var again deviceJSON
	e.do("POST", "/v1/users/bob/devices", map[string]any{"device_id": "alice-phone", "token": "tok-new2", "platform": "android"}).
		expect(t, 200, &again)
	if again.PreviousUserID != "alice" || again.ReassignedAt == nil || *again.ReassignedAt != *d.ReassignedAt {
		t.Fatalf("refreshed device lost the record of its move: %+v", again)
	}
	// bob, through his own token, sees that it moved but not from whom.
	var ds struct{ Devices []json.RawMessage }
	e.do("GET", "/v1/users/bob/devices", nil, "Authorization", "Bearer "+userToken(t, "bob")).expect(t, 200, &ds)
	for _, raw := range ds.Devices {
		var d deviceJSON
		_ = json.Unmarshal(raw, &d)
		if d.PreviousUserID != "" {
			t.Fatalf("bob's token is shown the previous owner: %s", raw)
		}
		if d.DeviceID == "alice-phone" && d.ReassignedAt == nil {
			t.Fatalf("bob's token is not shown the move: %s", raw)
		}
	}
}
