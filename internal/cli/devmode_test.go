package cli

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// insecureJSON calls an emulator's control route over TLS with its
// self-signed certificate (the APNs emulator) and decodes the answer.
func insecureJSON(t *testing.T, method, url, body string, out any) int {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, url, err, raw)
		}
	}
	return resp.StatusCode
}

// Issue 32 item 1: serve --dev routes as production would — Android to the
// FCM emulator, iOS to the APNs emulator, web to the Web Push emulator —
// and says so in its start-up log. An iOS device token and a web
// subscription issued by the emulators are delivered end to end.
func TestDevModeRoutesLikeProduction(t *testing.T) {
	s := startDev(t)
	route := s.logs.logLines("push routing (push_routing)")
	if len(route) != 1 || route[0]["android"] != "fcm" || route[0]["ios"] != "apns" || route[0]["web"] != "webpush" {
		t.Fatalf("start-up routing line = %v", route)
	}
	apnsURL, webURL := s.logs.emulatorURL("apns", "url"), s.logs.emulatorURL("webpush", "url")
	var tok struct{ Token string }
	if code := insecureJSON(t, "POST", apnsURL+"/emulator/device-tokens", `{"topic":"dev.herald.app"}`, &tok); code/100 != 2 || tok.Token == "" {
		t.Fatalf("APNs device token: %d %+v", code, tok)
	}
	var sub struct {
		Endpoint string
		Keys     struct{ P256DH, Auth string }
	}
	if code := insecureJSON(t, "POST", webURL+"/emulator/subscriptions", "", &sub); code/100 != 2 || sub.Endpoint == "" {
		t.Fatalf("Web Push subscription: %d %+v", code, sub)
	}
	call(t, "PUT", s.api+"/v1/users/user-1842", `{}`)
	for _, d := range []string{
		`{"device_id":"pixel-8","token":"tok-1","platform":"android"}`,
		fmt.Sprintf(`{"device_id":"iphone-15","token":%q,"platform":"ios"}`, tok.Token),
		fmt.Sprintf(`{"device_id":"firefox","token":%q,"p256dh":%q,"auth":%q,"platform":"web"}`, sub.Endpoint, sub.Keys.P256DH, sub.Keys.Auth),
	} {
		if code, out := call(t, "POST", s.api+"/v1/users/user-1842/devices", d); code != 200 {
			t.Fatalf("register %s: %d %v", d, code, out)
		}
	}
	code, out := call(t, "POST", s.api+"/v1/notifications", `{"user_id":"user-1842","type":"promo","title":"Sale","body":"Today only"}`)
	if code != 202 {
		t.Fatalf("trigger: %d %v", code, out)
	}
	id, _ := out["id"].(string)
	waitFor(t, "every platform's delivery to be sent", func() bool {
		_, st := call(t, "GET", s.api+"/v1/notifications/"+id, "")
		return st["status"] == "SENT"
	})
	for name, url := range map[string]string{"fcm": s.emulator, "apns": apnsURL, "webpush": webURL} {
		var msgs []map[string]any
		if code := insecureJSON(t, "GET", url+"/emulator/messages", "", &msgs); code != 200 || len(msgs) != 1 {
			t.Errorf("%s emulator received %d messages (%d), want 1", name, len(msgs), code)
		}
	}
}

// Issue 32 item 4: a port another program holds stops serve --dev with
// an error that names the setting (and flag) that moves that listener.
func TestDevModePortTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	for _, tt := range []struct{ env, flag, want string }{
		{env: "HERALD_LISTEN", flag: "--listen", want: "--listen or the listen setting (HERALD_LISTEN)"},
		{env: "HERALD_DEV__FCM_ADDR", flag: "--emulator-addr", want: "--emulator-addr or the dev.fcm_addr setting (HERALD_DEV__FCM_ADDR)"},
		{env: "HERALD_DEV__APNS_ADDR", want: "the dev.apns_addr setting (HERALD_DEV__APNS_ADDR)"},
		{env: "HERALD_DEV__WEBPUSH_ADDR", want: "dev.webpush_addr"},
		{env: "HERALD_DEV__TWILIO_ADDR", want: "dev.twilio_addr"},
		{env: "HERALD_DEV__SMTP_ADDR", want: "dev.smtp_addr"},
		{env: "HERALD_DEV__SMTP_HTTP_ADDR", want: "dev.smtp_http_addr"},
		{env: "HERALD_DEV__RECOMMEND_ADDR", want: "dev.recommend_addr"},
		{env: "HERALD_DEV__KAFKA_ADDR", want: "the dev.kafka_addr setting (HERALD_DEV__KAFKA_ADDR)"},
		{env: "HERALD_DEV__SCHEMA_REGISTRY_ADDR", want: "dev.schema_registry_addr"},
		{env: "HERALD_DEV__WEBHOOK_ADDR", want: "dev.webhook_addr"},
	} {
		env := []string{"HERALD_LISTEN=127.0.0.1:0", "HERALD_DEV__FCM_ADDR=127.0.0.1:0", "HERALD_DEV__APNS_ADDR=127.0.0.1:0",
			"HERALD_DEV__WEBPUSH_ADDR=127.0.0.1:0", "HERALD_DEV__TWILIO_ADDR=127.0.0.1:0", "HERALD_DEV__SMTP_ADDR=127.0.0.1:0",
			"HERALD_DEV__SMTP_HTTP_ADDR=127.0.0.1:0", "HERALD_DEV__RECOMMEND_ADDR=127.0.0.1:0", "HERALD_DEV__KAFKA_ADDR=127.0.0.1:0",
			"HERALD_DEV__SCHEMA_REGISTRY_ADDR=127.0.0.1:0", "HERALD_DEV__WEBHOOK_ADDR=127.0.0.1:0", tt.env + "=" + addr}
		args := []string{"serve", "--dev", "--database", filepath.Join(t.TempDir(), "herald.db")}
		errb := &syncBuffer{}
		code := Run(context.Background(), args, io.Discard, errb, env)
		if code == 0 || !strings.Contains(errb.String(), addr) || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%s taken: exit %d, output lacks %q:\n%s", tt.env, code, tt.want, errb.String())
		}
		if tt.flag == "" {
			continue
		}
		// The flag names the same listener.
		args = append(args, tt.flag, addr)
		errb = &syncBuffer{}
		if code := Run(context.Background(), args, io.Discard, errb, env[:len(env)-1]); code == 0 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%s %s taken: exit %d:\n%s", tt.flag, addr, code, errb.String())
		}
	}
}
