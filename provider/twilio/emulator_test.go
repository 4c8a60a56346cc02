package twilio

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	twilioemu "github.com/heraldhq/herald/emulator/twilio"
	"github.com/heraldhq/herald/heraldtype"
)

// postRaw posts form to e's create endpoint for account with the given
// credentials and returns the status and the decoded error body.
func postRaw(t *testing.T, e *twilioemu.Emulator, account, token string, form url.Values) (int, apiError) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.URL()+"/2010-04-01/Accounts/"+account+"/Messages.json", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(e.AccountSID(), token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ae apiError
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		if err := json.Unmarshal(body, &ae); err != nil {
			t.Fatalf("error body %q: %v", body, err)
		}
		if ae.Status != resp.StatusCode || !strings.HasPrefix(ae.MoreInfo, "https://www.twilio.com/docs/errors/") {
			t.Errorf("error body %+v does not match status %d", ae, resp.StatusCode)
		}
	}
	return resp.StatusCode, ae
}

// TestEmulatorValidation checks Twilio's request validation and error codes.
func TestEmulatorValidation(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, twilioemu.Config{FromNumbers: []string{testFrom}})
	ok := url.Values{"To": {testTo}, "From": {testFrom}, "Body": {"hi"}}
	with := func(k, v string) url.Values {
		f := url.Values{}
		for kk, vv := range ok {
			f[kk] = vv
		}
		if v == "" {
			f.Del(k)
		} else {
			f.Set(k, v)
		}
		return f
	}
	svc := "MG" + strings.Repeat("a", 32)
	tests := []struct {
		name   string
		form   url.Values
		status int
		code   int
	}{
		{"valid", ok, 201, 0},
		{"service", url.Values{"To": {testTo}, "MessagingServiceSid": {svc}, "Body": {"hi"}}, 201, 0},
		{"no To", with("To", ""), 400, ErrToRequired},
		{"bad To", with("To", "555-1234"), 400, ErrInvalidTo},
		{"no sender", with("From", ""), 400, ErrFromRequired},
		{"bad service", url.Values{"To": {testTo}, "MessagingServiceSid": {"MG1"}, "Body": {"hi"}}, 400, ErrMessagingServiceSID},
		{"foreign From", with("From", "+15005550001"), 400, ErrFromNotCapable},
		{"no Body", with("Body", ""), 400, ErrBodyRequired},
		{"long Body", with("Body", strings.Repeat("x", 1601)), 400, ErrBodyTooLong},
		{"bad callback", with("StatusCallback", "nope"), 400, ErrStatusCallback},
	}
	for _, tt := range tests {
		status, ae := postRaw(t, e, e.AccountSID(), e.AuthToken(), tt.form)
		if status != tt.status || ae.Code != tt.code {
			t.Errorf("%s: %d %+v, want %d %d", tt.name, status, ae, tt.status, tt.code)
		}
	}
	if status, ae := postRaw(t, e, e.AccountSID(), "wrong", ok); status != 401 || ae.Code != ErrAuthenticate || ae.Message != "Authenticate" {
		t.Errorf("wrong token: %d %+v", status, ae)
	}
	if status, ae := postRaw(t, e, "AC"+strings.Repeat("1", 32), e.AuthToken(), ok); status != 404 || ae.Code != ErrNotFound {
		t.Errorf("other account in path: %d %+v", status, ae)
	}
	st := e.Stats()
	if st.Accepted != 2 || st.Rejected[ErrAuthenticate] != 1 || st.Rejected[ErrBodyTooLong] != 1 {
		t.Errorf("stats %+v", st)
	}
	msgs := e.Messages()
	if len(msgs) != 2 || msgs[1].MessagingServiceSID != svc || msgs[1].Status != "accepted" {
		t.Errorf("messages %+v", msgs)
	}
}

// TestEmulatorRecordingOverHTTP covers GET/DELETE /emulator/messages and
// the stats route.
func TestEmulatorRecordingOverHTTP(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, twilioemu.Config{})
	c := newTestClient(t, e, nil)
	for _, n := range []string{testTo, "+14155550000", testTo} {
		if _, err := c.Send(context.Background(), message(n)); err != nil {
			t.Fatal(err)
		}
	}
	var got []twilioemu.Received
	getJSON(t, e.URL()+"/emulator/messages?to="+url.QueryEscape(testTo), &got)
	if len(got) != 2 || got[0].To != testTo || got[0].Body != "Your code\n123456" {
		t.Fatalf("GET ?to= %+v", got)
	}
	var st twilioemu.Stats
	getJSON(t, e.URL()+"/emulator/stats", &st)
	if st.Accepted != 3 {
		t.Errorf("stats %+v", st)
	}
	req, _ := http.NewRequest(http.MethodDelete, e.URL()+"/emulator/messages", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	getJSON(t, e.URL()+"/emulator/messages", &got)
	if len(got) != 0 || e.Stats().Accepted != 0 {
		t.Errorf("after DELETE: %+v", got)
	}
}

func TestEmulatorRingKeepsNewest(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, twilioemu.Config{MaxRecorded: 2})
	c := newTestClient(t, e, nil)
	for _, n := range []string{"+14155550001", "+14155550002", "+14155550003"} {
		if _, err := c.Send(context.Background(), message(n)); err != nil {
			t.Fatal(err)
		}
	}
	got := e.Messages()
	if len(got) != 2 || got[0].To != "+14155550002" || got[1].To != "+14155550003" {
		t.Fatalf("%+v", got)
	}
}

// TestEmulatorFaultsOverHTTP sets faults and opt-outs through the HTTP
// routes, as a user of `herald emulate twilio` would.
func TestEmulatorFaultsOverHTTP(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, twilioemu.Config{})
	c := newTestClient(t, e, nil)
	do := func(method, path, body string) int {
		req, _ := http.NewRequest(method, e.URL()+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := do("PUT", "/emulator/faults", `{"numbers":{"+14155550009":{"code":21614,"times":1}}}`); s != 200 {
		t.Fatalf("PUT faults: %d", s)
	}
	if s := do("PUT", "/emulator/faults", `{"numbers":{"x":{"code":-1}}}`); s != 400 {
		t.Errorf("invalid faults accepted: %d", s)
	}
	if s := do("PUT", "/emulator/faults", `{"unavailable":{"rate":0.7},"internal":{"rate":0.7}}`); s != 400 {
		t.Errorf("rates over 1 accepted: %d", s)
	}
	se := sendErr(t, c, message("+14155550009"))
	if se.Code != "twilio_21614" {
		t.Errorf("first send: %+v", se)
	}
	if _, err := c.Send(context.Background(), message("+14155550009")); err != nil {
		t.Errorf("second send (times: 1): %v", err)
	}
	if s := do("PUT", "/emulator/opt-outs/"+url.PathEscape(testTo), ""); s != 204 {
		t.Fatalf("PUT opt-out: %d", s)
	}
	if se := sendErr(t, c, message(testTo)); !se.Suppress {
		t.Errorf("opted out: %+v", se)
	}
	if s := do("DELETE", "/emulator/opt-outs/"+url.PathEscape(testTo), ""); s != 204 {
		t.Fatalf("DELETE opt-out: %d", s)
	}
	if _, err := c.Send(context.Background(), message(testTo)); err != nil {
		t.Errorf("opted in again: %v", err)
	}
	if s := do("DELETE", "/emulator/faults", ""); s != 204 || len(e.CurrentFaults().Numbers) != 0 {
		t.Errorf("DELETE faults: %d %+v", s, e.CurrentFaults())
	}
}

// TestEarlyRetries counts sends that ignore the Retry-After the emulator
// gave.
func TestEarlyRetries(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, twilioemu.Config{Now: clock.Now})
	c := newTestClient(t, e, func(cfg *Config) { cfg.Now = clock.Now })
	if err := e.FailNumber(testTo, twilioemu.NumberFault{Code: ErrTooManyRequests, Times: 2, RetryAfterSeconds: 10}); err != nil {
		t.Fatal(err)
	}
	if se := sendErr(t, c, message(testTo)); se.Class != heraldtype.ClassThrottled || se.RetryAfter != 10*time.Second {
		t.Fatalf("%+v", se)
	}
	clock.Advance(5 * time.Second)
	sendErr(t, c, message(testTo)) // too early
	clock.Advance(11 * time.Second)
	if _, err := c.Send(context.Background(), message(testTo)); err != nil {
		t.Fatal(err)
	}
	if got := e.Stats().EarlyRetries; got != 1 {
		t.Errorf("EarlyRetries = %d, want 1", got)
	}
}

// TestFaultRatesAreSeeded checks that rate faults are drawn from the seed,
// so a run can be reproduced, and come out near the configured rate.
func TestFaultRatesAreSeeded(t *testing.T) {
	t.Parallel()
	run := func() []string {
		e := startEmulator(t, twilioemu.Config{Seed: 7})
		c := newTestClient(t, e, nil)
		if err := e.SetFaults(twilioemu.Faults{
			TooManyRequests: twilioemu.RateFault{Rate: 0.2, RetryAfterSeconds: 1},
			Internal:        twilioemu.RateFault{Rate: 0.1},
			Unavailable:     twilioemu.RateFault{Rate: 0.1},
		}); err != nil {
			t.Fatal(err)
		}
		var out []string
		for range 200 {
			_, err := c.Send(context.Background(), message(testTo))
			out = append(out, fmt.Sprint(heraldtype.AsSendError(err)))
		}
		return out
	}
	a, b := run(), run()
	failed := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("send %d differs between runs: %s vs %s", i, a[i], b[i])
		}
		if a[i] != "<nil>" {
			failed++
		}
	}
	if failed < 50 || failed > 110 {
		t.Errorf("%d of 200 sends failed, want about 80", failed)
	}
}

func TestEmulatorLatency(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, twilioemu.Config{})
	c := newTestClient(t, e, nil)
	if err := e.SetFaults(twilioemu.Faults{LatencyMillis: 60}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if _, err := c.Send(context.Background(), message(fmt.Sprintf("+1415555000%d", i))); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if d := time.Since(start); d < 60*time.Millisecond || d > 2*time.Second {
		t.Errorf("8 concurrent sends with 60 ms latency took %v", d)
	}
	if n := len(e.Messages()); n != 8 {
		t.Errorf("%d messages recorded", n)
	}
}

// TestStatusCallbacksAreSigned checks that the emulator reports queued,
// sent and delivered to StatusCallback, each signed so that
// ValidateSignature accepts it.
func TestStatusCallbacksAreSigned(t *testing.T) {
	t.Parallel()
	type callback struct {
		status string
		valid  bool
		params url.Values
	}
	got := make(chan callback, 10)
	var e *twilioemu.Emulator
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		full := "http://" + r.Host + r.URL.RequestURI()
		got <- callback{r.PostForm.Get("MessageStatus"), ValidateSignature(e.AuthToken(), full, r.PostForm, r.Header.Get("X-Twilio-Signature")), r.PostForm}
	}))
	defer hook.Close()
	var logs strings.Builder
	var logMu sync.Mutex
	e = startEmulator(t, twilioemu.Config{Logger: slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, nil))})
	c := newTestClient(t, e, func(cfg *Config) { cfg.StatusCallback = hook.URL + "/twilio/status?tenant=a" })
	sid, err := c.Send(context.Background(), message(testTo))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"queued", "sent", "delivered"} {
		select {
		case cb := <-got:
			if cb.status != want || !cb.valid || cb.params.Get("MessageSid") != sid || cb.params.Get("To") != testTo ||
				cb.params.Get("AccountSid") != e.AccountSID() {
				t.Errorf("callback %+v, want status %s, valid, for %s", cb, want, sid)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no %s callback", want)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.Stats().CallbacksSent != 3 || e.MessagesTo(testTo)[0].Status != "delivered" {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v, message %+v", e.Stats(), e.MessagesTo(testTo))
		}
		time.Sleep(time.Millisecond)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if !strings.Contains(logs.String(), "SMS accepted") || !strings.Contains(logs.String(), sid) {
		t.Errorf("log: %s", logs.String())
	}
}

// TestCloseStopsCallbacks: Close returns once in-flight callbacks have
// been cancelled, even if the callback URL never answers.
func TestCloseStopsCallbacks(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer hook.Close()
	defer close(release)
	e := twilioemu.New(twilioemu.Config{})
	if _, err := e.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, e, func(cfg *Config) { cfg.StatusCallback = hook.URL })
	if _, err := c.Send(context.Background(), message(testTo)); err != nil {
		t.Fatal(err)
	}
	<-arrived
	done := make(chan error)
	go func() { done <- e.Close() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs on a callback")
	}
	if st := e.Stats(); st.CallbacksFailed != 1 {
		t.Errorf("stats %+v", st)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
