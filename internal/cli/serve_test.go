package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
)

// syncBuffer is a bytes.Buffer safe for the server's logger and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// logValue returns attribute attr of the first JSON log line whose msg is
// msg, or "".
func (s *syncBuffer) logValue(msg, attr string) string {
	if lines := s.logLines(msg); len(lines) > 0 {
		v, _ := lines[0][attr].(string)
		return v
	}
	return ""
}

// logLines returns the JSON log lines whose msg is msg, in order.
func (s *syncBuffer) logLines(msg string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == msg {
			out = append(out, line)
		}
	}
	return out
}

// emulatorURL returns attribute attr of the dev-mode start-up line of the
// named emulator, or "".
func (s *syncBuffer) emulatorURL(name, attr string) string {
	for _, line := range s.logLines("dev mode: emulator started") {
		if line["emulator"] == name {
			v, _ := line[attr].(string)
			return v
		}
	}
	return ""
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	// A bound, not an expectation: a server listens within a second on a
	// quiet machine, but CI on a machine loaded six times over waited
	// more than 15 s for three of them.
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type devServer struct {
	api, emulator string
	logs          *syncBuffer
	stop          func() int
}

// startDev runs `herald serve --dev` on free ports, as a newcomer would.
func startDev(t *testing.T, extra ...string) *devServer {
	t.Helper()
	return startDevEnv(t, nil, extra...)
}

// startDevEnv is startDev with more environment variables.
func startDevEnv(t *testing.T, moreEnv []string, extra ...string) *devServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	args := append([]string{"serve", "--dev", "--listen", "127.0.0.1:0", "--emulator-addr", "127.0.0.1:0",
		"--database", filepath.Join(t.TempDir(), "herald.db")}, extra...)
	done := make(chan int, 1)
	env := []string{"HERALD_DEV__APNS_ADDR=127.0.0.1:0", "HERALD_DEV__WEBPUSH_ADDR=127.0.0.1:0",
		"HERALD_DEV__TWILIO_ADDR=127.0.0.1:0", "HERALD_DEV__SMTP_ADDR=127.0.0.1:0", "HERALD_DEV__SMTP_HTTP_ADDR=127.0.0.1:0",
		"HERALD_DEV__KAFKA_ADDR=127.0.0.1:0", "HERALD_DEV__SCHEMA_REGISTRY_ADDR=127.0.0.1:0",
		"HERALD_DEV__RECOMMEND_ADDR=127.0.0.1:0", "HERALD_DEV__WEBHOOK_ADDR=127.0.0.1:0"}
	env = append(env, moreEnv...)
	go func() { done <- Run(ctx, args, io.Discard, logs, env) }()
	s := &devServer{logs: logs}
	var once sync.Once
	code := 0
	s.stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case code = <-done:
			case <-time.After(30 * time.Second):
				t.Error("serve did not stop within 30 s")
			}
		})
		return code
	}
	t.Cleanup(func() { s.stop() })
	waitFor(t, "the server to listen", func() bool {
		select {
		case c := <-done:
			t.Fatalf("serve exited with %d: %s", c, logs.String())
		default:
		}
		s.api = logs.logValue("herald listening", "addr")
		s.emulator = logs.emulatorURL("fcm", "url")
		return s.api != "" && s.emulator != ""
	})
	return s
}

func call(t *testing.T, method, url, body string, header ...string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if body != "" {
		// What curl -d sends.
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: bad JSON %q", method, url, raw)
		}
	}
	return resp.StatusCode, out
}

// TestServeDevQuickStart walks the README's quick start against the real
// binary's serve command: a message reaches the emulator and the timeline
// shows it.
func TestServeDevQuickStart(t *testing.T) {
	s := startDev(t)
	if code, _ := call(t, "PUT", s.api+"/v1/users/u1", `{"timezone":"Asia/Seoul"}`); code != 200 {
		t.Fatalf("PUT user: %d", code)
	}
	if code, _ := call(t, "POST", s.api+"/v1/users/u1/devices", `{"device_id":"d1","token":"tok-1","platform":"android","push_opt_in":true}`); code != 200 {
		t.Fatalf("POST device: %d", code)
	}
	trigger := `{"user_id":"u1","type":"reservation_confirmed","title":"Booked","body":"See you at 7","channels":["push"]}`
	code, out := call(t, "POST", s.api+"/v1/notifications", trigger, "Idempotency-Key", "k1")
	if code != 202 {
		t.Fatalf("POST notification: %d %v", code, out)
	}
	id, _ := out["id"].(string)
	if code, again := call(t, "POST", s.api+"/v1/notifications", trigger, "Idempotency-Key", "k1"); code != 200 || again["id"] != id {
		t.Fatalf("idempotent retry: %d %v, want 200 with id %s", code, again, id)
	}

	var status map[string]any
	waitFor(t, "the notification to be sent", func() bool {
		_, status = call(t, "GET", s.api+"/v1/notifications/"+id, "")
		return status["status"] == "SENT"
	})
	ds := status["deliveries"].([]any)
	attempts := ds[0].(map[string]any)["attempts"].([]any)
	if len(ds) != 1 || len(attempts) != 1 || attempts[0].(map[string]any)["provider_message_id"] == "" {
		t.Fatalf("timeline = %v", status)
	}

	resp, err := http.Get(s.emulator + "/emulator/messages")
	if err != nil {
		t.Fatal(err)
	}
	var msgs []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&msgs); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(msgs) != 1 || msgs[0]["token"] != "tok-1" {
		t.Fatalf("emulator messages = %v, want one to tok-1", msgs)
	}
	waitFor(t, "the dev log line", func() bool { return s.logs.logValue("fcm emulator: message accepted", "token") == "tok-1" })

	// The webhook receiver emulator gets the delivery's delivery.finished
	// through the endpoint serve --dev registers, signature verified
	// (issue 35 item 6).
	hooks := s.logs.emulatorURL("webhook", "url")
	var hooked []map[string]any
	waitFor(t, "the delivery.finished webhook", func() bool {
		resp, err := http.Get(hooks + "/emulator/messages?path=/hooks/dev")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		hooked = nil
		_ = json.NewDecoder(resp.Body).Decode(&hooked)
		return len(hooked) > 0
	})
	if hooked[0]["type"] != "delivery.finished" || hooked[0]["verified"] != true || hooked[0]["status"] != float64(204) {
		t.Fatalf("webhook messages = %v", hooked)
	}

	resp, err = http.Get(s.api + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// reservation_confirmed is not declared in the dev configuration: its
	// count is under "other" (issue 23 item 2).
	for _, m := range []string{`herald_notifications_accepted_total{type="other"} 1`, `herald_deliveries_sent_total{provider="fcm"} 1`, "herald_send_duration_seconds_bucket", "herald_queue_depth"} {
		if !bytes.Contains(metrics, []byte(m)) {
			t.Errorf("/metrics lacks %s", m)
		}
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exited with %d", code)
	}
	logs := s.logs.String()
	for _, secret := range []string{"PRIVATE KEY", "private_key", "access_token", "Bearer "} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs contain %q", secret)
		}
	}
	if !strings.Contains(logs, `"loopback_only":true`) {
		t.Error("start-up log does not say the API is on loopback")
	}
}

// TestOperatorCommands drives send, deliveries list and deliveries replay
// against a running server, as an operator would.
func TestOperatorCommands(t *testing.T) {
	s := startDev(t)
	call(t, "PUT", s.api+"/v1/users/u1", `{}`)
	call(t, "POST", s.api+"/v1/users/u1/devices", `{"device_id":"d1","token":"tok-bad","platform":"android"}`)
	// The device's Firebase project does not match: a permanent error.
	if code, _ := call(t, "PUT", s.emulator+"/emulator/faults", `{"tokens":{"tok-bad":{"code":"SENDER_ID_MISMATCH"}}}`); code != 200 {
		t.Fatalf("set faults: %d", code)
	}
	run := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append(args, "--server", s.api), &out, &errb, nil)
		return out.String() + errb.String(), code
	}
	out, code := run("send", "--user", "u1", "--type", "promo", "--title", "Sale", "--data", "product_id=42", "--idempotency-key", "p42")
	if code != 0 || !strings.Contains(out, `"replayed": false`) {
		t.Fatalf("send: %d %s", code, out)
	}
	if out, code := run("send", "--user", "u1", "--type", "promo", "--title", "Sale", "--idempotency-key", "p43"); code != 0 {
		t.Fatalf("second send: %d %s", code, out)
	}
	waitFor(t, "two dead letters", func() bool {
		out, _ = run("deliveries", "list", "--error-code", "SENDER_ID_MISMATCH")
		return strings.Count(out, "SENDER_ID_MISMATCH") == 2
	})
	// Issue 22 item 9: the list shows the channel.
	lines := strings.Split(out, "\n")
	if f := strings.Fields(lines[0]); len(f) < 5 || f[4] != "CHANNEL" || strings.Fields(lines[1])[4] != "push" {
		t.Fatalf("deliveries list without a channel column:\n%s", out)
	}
	var id int64
	for _, line := range lines[1:] {
		if _, err := fmt.Sscan(line, &id); err == nil {
			break
		}
	}
	if id == 0 {
		t.Fatalf("no delivery id in %s", out)
	}
	// Issue 22 item 4: one delivery with its timeline.
	out, code = run("deliveries", "get", fmt.Sprint(id))
	if code != 0 || !regexp.MustCompile(`(?m)^state: +dead$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^last error: +SENDER_ID_MISMATCH`).MatchString(out) || !strings.Contains(out, "1 attempt:") {
		t.Fatalf("deliveries get of a dead letter: %d\n%s", code, out)
	}
	if out, code := run("deliveries", "get", "999999"); code == 0 || !strings.Contains(out, "not_found") {
		t.Fatalf("deliveries get of an unknown id: %d %s", code, out)
	}
	call(t, "DELETE", s.emulator+"/emulator/faults", "")
	if out, code := run("deliveries", "replay", fmt.Sprint(id)); code != 0 {
		t.Fatalf("replay: %d %s", code, out)
	}
	// Issue 22 item 9: counts are pluralised right.
	if out, code := run("deliveries", "replay", "--all", "--error-code", "SENDER_ID_MISMATCH"); code != 0 || !strings.Contains(out, "replayed 1 delivery\n") {
		t.Fatalf("bulk replay of one: %d %s", code, out)
	}
	waitFor(t, "the replayed deliveries to be sent", func() bool {
		out, _ = run("deliveries", "list", "--state", "sent", "--json")
		return strings.Count(out, `"last_replay_result": "sent"`) == 2
	})
	// Issue 22 item 3: a sent delivery carries no stale error; its
	// timeline keeps it.
	if strings.Contains(out, "last_error") {
		t.Fatalf("sent deliveries still carry their old error:\n%s", out)
	}
	out, code = run("deliveries", "get", fmt.Sprint(id))
	if code != 0 || !regexp.MustCompile(`(?m)^state: +sent$`).MatchString(out) || strings.Contains(out, "last error:") ||
		!strings.Contains(out, "3 attempts:") || !strings.Contains(out, "SENDER_ID_MISMATCH") {
		t.Fatalf("deliveries get after a replayed send: %d\n%s", code, out)
	}
	if out, code := run("deliveries", "replay", "--all", "--error-code", "SENDER_ID_MISMATCH"); code != 0 || !strings.Contains(out, "replayed 0 deliveries\n") {
		t.Fatalf("bulk replay: %d %s", code, out)
	}
	if out, code := run("send", "--user", "nobody", "--type", "promo", "--title", "x"); code == 0 || !strings.Contains(out, "not_found") {
		t.Fatalf("send to an unknown user: %d %s", code, out)
	}
}

// Issue 22 item 6: serve --dev names every emulator in its start-up log,
// with where its received messages, its fault controls and its stats are;
// each of those URLs answers.
func TestDevModeNamesEveryEmulator(t *testing.T) {
	s := startDev(t)
	// The emulators announce themselves before the API listens.
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for _, name := range []string{"fcm", "apns", "webpush", "twilio", "smtp", "recommend", "webhook"} {
		if s.logs.emulatorURL(name, "url") == "" {
			t.Errorf("no start-up line names the %s emulator:\n%s", name, s.logs.String())
			continue
		}
		for _, attr := range []string{"messages", "faults", "stats"} {
			u := s.logs.emulatorURL(name, attr)
			if !strings.HasSuffix(u, "/emulator/"+attr) {
				t.Errorf("%s emulator: %s = %q", name, attr, u)
				continue
			}
			resp, err := insecure.Get(u)
			if err != nil {
				t.Errorf("%s emulator: GET %s: %v", name, u, err)
				continue
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("%s emulator: GET %s: %d", name, u, resp.StatusCode)
			}
		}
	}
}

// Issue 20 items 8 and 9: serve --dev runs a Kafka-protocol broker and
// says where; a notification request produced to it by an ordinary Kafka
// client reaches the FCM emulator once, however often it is produced.
func TestDevModeKafkaIntake(t *testing.T) {
	s := startDev(t)
	brokers := s.logs.logValue("dev mode: Kafka broker started (in-process, Kafka protocol)", "brokers")
	if brokers == "" {
		t.Fatalf("no start-up line names the Kafka broker:\n%s", s.logs.String())
	}
	// Beside it, a schema registry holding seed 003's NotificationEvent
	// for the notification topic (Avro in the registry's wire format).
	registry := s.logs.logValue("dev mode: Kafka broker started (in-process, Kafka protocol)", "schema_registry")
	code, subject := call(t, "GET", registry+"/subjects/notification.push.v1-value/versions/latest", "")
	if code != 200 || !strings.Contains(fmt.Sprint(subject["schema"]), "NotificationEvent") {
		t.Fatalf("dev schema registry: %d %v", code, subject)
	}
	if code, _ := call(t, "PUT", s.api+"/v1/users/u1", `{}`); code != 200 {
		t.Fatalf("PUT user: %d", code)
	}
	if code, _ := call(t, "POST", s.api+"/v1/users/u1/devices", `{"device_id":"d1","token":"tok-1","platform":"android","push_opt_in":true}`); code != 200 {
		t.Fatalf("POST device: %d", code)
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	req := `{"notificationId":"n-1","userId":"u1","productId":"42","notificationType":"PRICE_DROP","title":"Price drop",` +
		`"body":"Now 8,500","channels":["PUSH"],"priority":"HIGH","timestamp":1764000000000}`
	for range 2 { // produced twice: sent once
		if err := prod.ProduceSync(t.Context(), &kgo.Record{Topic: "notification.push.v1", Key: []byte("u1"), Value: []byte(req)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var msgs []map[string]any
	waitFor(t, "the push at the FCM emulator", func() bool {
		resp, err := http.Get(s.emulator + "/emulator/messages")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		msgs = nil
		return json.NewDecoder(resp.Body).Decode(&msgs) == nil && len(msgs) > 0
	})
	time.Sleep(200 * time.Millisecond) // room for a duplicate to show
	resp, err := http.Get(s.emulator + "/emulator/messages")
	if err != nil {
		t.Fatal(err)
	}
	msgs = nil
	json.NewDecoder(resp.Body).Decode(&msgs)
	resp.Body.Close()
	if len(msgs) != 1 || msgs[0]["token"] != "tok-1" {
		t.Fatalf("emulator messages = %v, want one to tok-1", msgs)
	}
}

// Issue 20 item 8: serve --dev reads the topic a rule names without being
// told to — the in-process broker creates it when the consumer asks for
// it — and an Avro ProductInventoryEvent produced to it in the registry's
// wire format (the dev registry holds the seed's schema) reaches Track.
func TestDevModeRuleTopic(t *testing.T) {
	s := startDevEnv(t, []string{"HERALD_KAFKA__RULE_TOPIC_POLL=100ms", "HERALD_KAFKA__EVENT_ENCODING=avro"})
	const started = "dev mode: Kafka broker started (in-process, Kafka protocol)"
	brokers, registry := s.logs.logValue(started, "brokers"), s.logs.logValue(started, "schema_registry")
	code, subject := call(t, "GET", registry+"/subjects/herald.events-value/versions/latest", "")
	if code != 200 || !strings.Contains(fmt.Sprint(subject["schema"]), "ProductInventoryEvent") {
		t.Fatalf("dev schema registry: %d %v", code, subject)
	}
	if code, body := call(t, "PUT", s.api+"/v1/types/price_drop", `{"channels":["in_app"]}`); code != 200 && code != 201 {
		t.Fatalf("PUT type: %d %v", code, body)
	}
	rule := `{"source":{"kafka_topic":"product.inventory.v1"},"when":{"event":"PRICE_CHANGE","detect":{"price_drop_pct":10}},
		"audience":{"event_user":true},"notify":{"type":"price_drop","title":"{{.drop_pct}}% off","channels":["in_app"]}}`
	if code, body := call(t, "PUT", s.api+"/v1/rules/price-drop", rule); code != 200 && code != 201 {
		t.Fatalf("PUT rule: %d %v", code, body)
	}
	waitFor(t, "the consumer to take the rule's topic", func() bool {
		return len(s.logs.logLines("kafka: consuming the rules' topics")) > 0
	})

	schema := avro.MustParse(fmt.Sprint(subject["schema"]))
	value, err := avro.Marshal(schema, map[string]any{"eventId": "e-1", "productId": "42", "eventType": "PRICE_CHANGE",
		"previousPrice": map[string]any{"float": float32(10000)}, "currentPrice": map[string]any{"float": float32(8500)},
		"previousStock": nil, "currentStock": nil, "timestamp": int64(1764000000000)})
	if err != nil {
		t.Fatal(err)
	}
	var h sr.ConfluentHeader
	wire, _ := h.AppendEncode(nil, int(subject["id"].(float64)), nil)
	prod, err := kgo.NewClient(kgo.SeedBrokers(brokers)) // creates no topic
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	if err := prod.ProduceSync(t.Context(), &kgo.Record{Topic: "product.inventory.v1", Key: []byte("42"),
		Value: append(wire, value...)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// Track applied it, or refused what it holds (the dead event keeps
	// the decoded event): either way it got there as an event.
	waitFor(t, "the event at Track", func() bool {
		if metric(t, s.api, `herald_kafka_records_total{result="applied",topic="product.inventory.v1"}`) == "1" {
			return true
		}
		_, dead := call(t, "GET", s.api+"/v1/events/dead?topic=product.inventory.v1", "")
		ds, _ := dead["dead_events"].([]any)
		return len(ds) == 1 && strings.Contains(fmt.Sprint(ds[0]), "PRICE_CHANGE") && strings.Contains(fmt.Sprint(ds[0]), "product:42")
	})
}

// metric is the value of one sample line of GET /metrics, or "".
func metric(t *testing.T, api, sample string) string {
	t.Helper()
	resp, err := http.Get(api + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			return v
		}
	}
	return ""
}

// Issue 21 item 6: serve --dev sends Web Push with the configured VAPID
// keys when there are some, says the public key on start, and GET
// /v1/webpush/vapid-public-key answers it, without credentials.
func TestDevModeWebPushKeys(t *testing.T) {
	var out bytes.Buffer
	if code := Run(context.Background(), []string{"vapid", "generate"}, &out, io.Discard, nil); code != 0 {
		t.Fatalf("vapid generate: %d", code)
	}
	pub := regexp.MustCompile(`(?m)vapid_public_key: *"?([A-Za-z0-9_-]+)`).FindStringSubmatch(out.String())
	priv := regexp.MustCompile(`(?m)vapid_private_key: *"?([A-Za-z0-9_-]+)`).FindStringSubmatch(out.String())
	if pub == nil || priv == nil {
		t.Fatalf("vapid generate printed:\n%s", out.String())
	}
	s := startDevEnv(t, []string{"HERALD_WEBPUSH__VAPID_PUBLIC_KEY=" + pub[1], "HERALD_WEBPUSH__VAPID_PRIVATE_KEY=" + priv[1]})
	if got := s.logs.emulatorURL("webpush", "vapid_public_key"); got != pub[1] {
		t.Fatalf("start-up line's vapid_public_key = %q, want the configured %q", got, pub[1])
	}
	code, body := call(t, "GET", s.api+"/v1/webpush/vapid-public-key", "")
	if code != 200 || body["public_key"] != pub[1] {
		t.Fatalf("GET vapid-public-key: %d %v", code, body)
	}
	// Without configured keys dev mode makes a pair and says which.
	s2 := startDev(t)
	key := s2.logs.emulatorURL("webpush", "vapid_public_key")
	if code, body := call(t, "GET", s2.api+"/v1/webpush/vapid-public-key", ""); code != 200 || key == "" || body["public_key"] != key {
		t.Fatalf("generated key: %d %v, start-up line %q", code, body, key)
	}
}

// Issue 22 item 7: on SIGINT/SIGTERM (the context Main cancels) serve says
// what the stop did with the sends in flight and ends with "herald
// stopped".
func TestServeStopSaysWhatItDid(t *testing.T) {
	s := startDev(t)
	call(t, "PUT", s.api+"/v1/users/u1", `{}`)
	call(t, "POST", s.api+"/v1/users/u1/devices", `{"device_id":"d1","token":"tok-1","platform":"android"}`)
	if code, _ := call(t, "POST", s.api+"/v1/notifications", `{"user_id":"u1","type":"promo","title":"x"}`); code != 202 {
		t.Fatalf("trigger: %d", code)
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exited with %d:\n%s", code, s.logs.String())
	}
	stopped := s.logs.logLines("dispatch: stopped")
	if len(stopped) != 1 {
		t.Fatalf("no dispatch: stopped line:\n%s", s.logs.String())
	}
	for _, attr := range []string{"sends_finished", "returned_to_queue", "left_to_lease_reaper"} {
		if _, ok := stopped[0][attr].(float64); !ok {
			t.Errorf("dispatch: stopped has no count %s: %v", attr, stopped[0])
		}
	}
	lines := strings.Split(strings.TrimSpace(s.logs.String()), "\n")
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last["msg"] != "herald stopped" {
		t.Fatalf("last log line = %s, want herald stopped", lines[len(lines)-1])
	}
}
