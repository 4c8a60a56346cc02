package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/httpapi"
)

func TestNewRequiresClient(t *testing.T) {
	t.Parallel()
	if _, err := httpapi.New(httpapi.Config{}); err == nil {
		t.Fatal("New without a Client succeeded")
	}
}

// S0.1, S0.2: users, device registration (upsert by device id), listing,
// heartbeat and removal.
func TestUsersAndDevices(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})

	var u heraldtype.User
	e.do("PUT", "/v1/users/alice", map[string]string{"timezone": "Europe/Paris", "locale": "fr-FR"}).expect(t, 200, &u)
	if u.ID != "alice" || u.Timezone != "Europe/Paris" || u.Locale != "fr-FR" {
		t.Fatalf("put user = %+v", u)
	}
	// An empty body creates a user with the default time zone (S2.2).
	var bob heraldtype.User
	e.do("PUT", "/v1/users/bob", nil).expect(t, 200, &bob)
	if bob.Timezone != "Asia/Seoul" {
		t.Fatalf("default timezone = %q, want Asia/Seoul", bob.Timezone)
	}
	var got heraldtype.User
	e.do("GET", "/v1/users/alice", nil).expect(t, 200, &got)
	if got.ID != "alice" || got.Timezone != "Europe/Paris" {
		t.Fatalf("get user = %+v", got)
	}

	var d heraldtype.Device
	e.do("POST", "/v1/users/alice/devices", map[string]any{
		"device_id": "phone-1", "token": "tok-1", "platform": "ANDROID", "app_version": "1.2.3",
	}).expect(t, 200, &d)
	if d.ID != "phone-1" || d.UserID != "alice" || d.Platform != heraldtype.PlatformAndroid || !d.PushOptIn || d.Status != heraldtype.DeviceActive {
		t.Fatalf("register device = %+v", d)
	}
	// The same device id with a refreshed token is an update, not a second device.
	e.do("POST", "/v1/users/alice/devices", map[string]any{
		"device_id": "phone-1", "token": "tok-2", "platform": "android", "push_opt_in": false,
	}).expect(t, 200, &d)
	if d.Token != "tok-2" || d.PushOptIn {
		t.Fatalf("refreshed device = %+v", d)
	}
	var list struct {
		Devices []heraldtype.Device `json:"devices"`
	}
	e.do("GET", "/v1/users/alice/devices", nil).expect(t, 200, &list)
	if len(list.Devices) != 1 || list.Devices[0].Token != "tok-2" {
		t.Fatalf("devices = %+v", list.Devices)
	}

	r := e.do("POST", "/v1/devices/phone-1/heartbeat", nil)
	r.expect(t, http.StatusNoContent, nil)
	if len(r.body) != 0 {
		t.Errorf("204 with body %q", r.body)
	}
	e.do("DELETE", "/v1/users/alice/devices/phone-1", nil).expect(t, http.StatusNoContent, nil)
	r = e.do("GET", "/v1/users/alice/devices", nil)
	r.expect(t, 200, nil)
	if strings.TrimSpace(string(r.body)) != `{"devices":[]}` {
		t.Fatalf("devices after delete = %s, want an empty array", r.body)
	}
}

// S4.1, S0.4: a trigger answers 202 after the commit with the notification
// id and a Location; the status endpoint shows its deliveries.
func TestTriggerAndStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.seedUser("alice")
	e.seedUser("bob")

	var one struct {
		ID            string                        `json:"id"`
		Notifications []herald.EnqueuedNotification `json:"notifications"`
		Replayed      bool                          `json:"replayed"`
	}
	r := e.do("POST", "/v1/notifications", map[string]any{
		"user_id": "alice", "type": "price_drop", "title": "Cheaper", "body": "Now 10% off", "data": map[string]string{"product": "p1"},
	})
	r.expect(t, http.StatusAccepted, &one)
	if one.ID == "" || len(one.Notifications) != 1 || one.Notifications[0].ID != one.ID || one.Notifications[0].Deliveries != 1 || one.Replayed {
		t.Fatalf("trigger = %s", r.body)
	}
	if loc := r.header.Get("Location"); loc != "/v1/notifications/"+one.ID {
		t.Errorf("Location = %q", loc)
	}
	if r.header.Get("Idempotent-Replayed") != "" {
		t.Error("a first trigger says it was replayed")
	}

	var st herald.NotificationStatus
	e.do("GET", "/v1/notifications/"+one.ID, nil).expect(t, 200, &st)
	if st.ID != one.ID || st.UserID != "alice" || st.Status != heraldtype.HistoryPending || len(st.Deliveries) != 1 {
		t.Fatalf("status = %+v", st)
	}
	if d := st.Deliveries[0]; d.State != heraldtype.StatePending || d.DeviceID != "alice-phone" {
		t.Fatalf("delivery = %+v", d)
	}

	// Several recipients: one notification each, no single id or Location.
	var many map[string]any
	r = e.do("POST", "/v1/notifications", map[string]any{"user_ids": []string{"alice", "bob"}, "type": "promo", "title": "Hi"})
	r.expect(t, http.StatusAccepted, &many)
	if _, ok := many["id"]; ok {
		t.Errorf("multi-recipient answer has an id: %s", r.body)
	}
	if ns := many["notifications"].([]any); len(ns) != 2 {
		t.Errorf("notifications = %v", ns)
	}
	if r.header.Get("Location") != "" {
		t.Error("multi-recipient answer has a Location")
	}
}

// The quick start uses `curl -d`, which labels JSON as a form.
func TestCurlFormContentTypeIsAccepted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.do("PUT", "/v1/users/alice", `{"timezone":"UTC"}`, "Content-Type", "", "Content-Type", "application/x-www-form-urlencoded").expect(t, 200, nil)
	e.do("PUT", "/v1/users/carol", `{"timezone":"UTC"}`, "Content-Type", "").expect(t, 200, nil)
	// Without a body the media type is irrelevant.
	e.do("PUT", "/v1/users/dave", nil, "Content-Type", "application/xml").expect(t, 200, nil)
	e.do("POST", "/v1/notifications", `{"user_id":"alice","type":"hello","title":"Hi"}`,
		"Content-Type", "", "Content-Type", "application/x-www-form-urlencoded").expect(t, http.StatusAccepted, nil)
}

func TestHealthReadyAndMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	var body map[string]string
	e.do("GET", "/healthz", nil).expect(t, 200, &body)
	if body["status"] != "ok" {
		t.Fatalf("healthz = %v", body)
	}
	e.do("GET", "/readyz", nil).expect(t, 200, nil)
	// Without a metrics handler there is no /metrics.
	if r := e.do("GET", "/metrics", nil); r.status != 404 || r.errorBody(t).Code != heraldtype.ENOTFOUND {
		t.Fatalf("metrics without handler: %d %s", r.status, r.body)
	}
	// A closed store is not ready; the process is still alive.
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	r := e.do("GET", "/readyz", nil)
	if r.status != http.StatusServiceUnavailable || r.errorBody(t).Code != heraldtype.EUNAVAILABLE {
		t.Fatalf("readyz on a closed store: %d %s", r.status, r.body)
	}
	e.do("GET", "/healthz", nil).expect(t, 200, nil)

	m := newEnv(t, envOptions{metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8") // as promhttp answers
		_, _ = w.Write([]byte("herald_up 1\n"))
	})})
	if r := m.do("GET", "/metrics", nil); r.status != 200 || string(r.body) != "herald_up 1\n" {
		t.Fatalf("metrics: %d %q", r.status, r.body)
	}
}

func TestUnknownRouteAndWrongMethod(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	r := e.do("GET", "/v2/nothing", nil)
	if r.status != 404 || r.errorBody(t).Code != heraldtype.ENOTFOUND {
		t.Fatalf("unknown route: %d %s", r.status, r.body)
	}
	r = e.do("DELETE", "/v1/notifications", nil)
	if r.status != http.StatusMethodNotAllowed || r.errorBody(t).Code != httpapi.EMethodNotAllowed {
		t.Fatalf("wrong method: %d %s", r.status, r.body)
	}
	// GET lists the history (S3.9), POST triggers.
	if allow := r.header.Get("Allow"); allow != "GET, HEAD, POST" {
		t.Errorf("Allow = %q, want GET, HEAD, POST", allow)
	}
	r = e.do("PATCH", "/v1/users/alice", nil)
	if r.status != http.StatusMethodNotAllowed || !strings.Contains(r.header.Get("Allow"), "PUT") || !strings.Contains(r.header.Get("Allow"), "GET") {
		t.Fatalf("PATCH user: %d Allow=%q", r.status, r.header.Get("Allow"))
	}
}

// Access logs carry the method, pattern, status, duration and request id,
// and never a body, a path id or an Authorization header.
func TestAccessLogKeepsSecretsOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.seedUser("alice")
	r := e.do("POST", "/v1/notifications", map[string]any{"user_id": "alice", "type": "otp", "title": "Your code is 918273"},
		"X-Request-Id", "req-42")
	r.expect(t, http.StatusAccepted, nil)
	// A refused credential is not logged either.
	e.do("GET", "/v1/users/alice", nil, "Authorization", "Bearer very-secret-token").expect(t, http.StatusUnauthorized, nil)
	if r.header.Get("X-Request-Id") != "req-42" {
		t.Errorf("X-Request-Id = %q", r.header.Get("X-Request-Id"))
	}
	logs := e.logs.String()
	for _, secret := range []string{"918273", "very-secret-token", "Bearer", e.adminKey[20:]} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs contain %q:\n%s", secret, logs)
		}
	}
	for _, want := range []string{`"pattern":"POST /v1/notifications"`, `"status":202`, `"request_id":"req-42"`, `"duration"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("access log lacks %s:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, `"pattern":"GET /v1/users/alice"`) {
		t.Error("the access log names the path instead of the pattern")
	}
	// A hostile request id is replaced, not echoed.
	r = e.do("GET", "/healthz", nil, "X-Request-Id", "evil\x01id")
	if id := r.header.Get("X-Request-Id"); id == "" || strings.Contains(id, "evil") {
		t.Errorf("hostile request id answered with %q", id)
	}
}
