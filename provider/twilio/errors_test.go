package twilio

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	twilioemu "github.com/heraldhq/herald/emulator/twilio"
	"github.com/heraldhq/herald/heraldtype"
)

// TestErrorTable drives every row of PROTOCOLS.md's SMS table (and the
// answers around it) through the emulator and checks the classification
// (issue 5 item 3).
func TestErrorTable(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, twilioemu.Config{})
	c := newTestClient(t, e, nil)

	perm, thr, tmp := heraldtype.ClassPermanent, heraldtype.ClassThrottled, heraldtype.ClassTemporary
	tests := []struct {
		name       string
		fault      twilioemu.NumberFault
		class      heraldtype.ErrorClass
		retryAfter time.Duration
		suppress   bool
	}{
		{"STOP", twilioemu.NumberFault{Code: ErrUnsubscribed}, perm, 0, true},
		{"invalid To", twilioemu.NumberFault{Code: ErrInvalidTo}, perm, 0, false},
		{"not mobile", twilioemu.NumberFault{Code: ErrNotMobile}, perm, 0, false},
		{"unreachable", twilioemu.NumberFault{Code: ErrUnreachable}, perm, 0, false},
		{"landline", twilioemu.NumberFault{Code: ErrLandline}, perm, 0, false},
		{"From not capable", twilioemu.NumberFault{Code: ErrFromNotCapable}, perm, 0, false},
		{"unverified (trial)", twilioemu.NumberFault{Code: ErrUnverifiedTo}, perm, 0, false},
		{"region not enabled", twilioemu.NumberFault{Code: ErrRegionNotEnabled}, perm, 0, false},
		{"authenticate", twilioemu.NumberFault{Code: ErrAuthenticate}, perm, 0, false},
		{"20429", twilioemu.NumberFault{Code: ErrTooManyRequests}, thr, 0, false},
		{"20429 Retry-After", twilioemu.NumberFault{Code: ErrTooManyRequests, RetryAfterSeconds: 7}, thr, 7 * time.Second, false},
		{"429 with another code", twilioemu.NumberFault{Code: 14107, Status: 429, RetryAfterSeconds: 2}, thr, 2 * time.Second, false},
		{"500", twilioemu.NumberFault{Code: ErrInternal}, tmp, 0, false},
		{"503 Retry-After", twilioemu.NumberFault{Code: ErrServiceUnavailable, RetryAfterSeconds: 30}, tmp, 30 * time.Second, false},
		{"502 with code", twilioemu.NumberFault{Code: 20502, Status: 502}, tmp, 0, false},
		{"unknown 4xx", twilioemu.NumberFault{Code: 30007, Status: 400}, perm, 0, false},
		{"unknown 403", twilioemu.NumberFault{Code: 20008, Status: 403}, perm, 0, false},
	}
	for i, tt := range tests {
		number := "+1415555" + string(rune('1'+i/10)) + string(rune('0'+i%10)) + "00"
		if err := e.FailNumber(number, tt.fault); err != nil {
			t.Fatal(err)
		}
		se := sendErr(t, c, message(number))
		if se.Class != tt.class || se.Code != Code(tt.fault.Code) || se.RetryAfter != tt.retryAfter ||
			se.Suppress != tt.suppress || se.TokenInvalid {
			t.Errorf("%s:\n got  class=%s code=%s retryAfter=%v suppress=%v tokenInvalid=%v (%q)\n want class=%s code=%s retryAfter=%v suppress=%v",
				tt.name, se.Class, se.Code, se.RetryAfter, se.Suppress, se.TokenInvalid, se.Message,
				tt.class, Code(tt.fault.Code), tt.retryAfter, tt.suppress)
		}
		if se.Message == "" {
			t.Errorf("%s: empty message", tt.name)
		}
	}
	if n := len(e.Messages()); n != 0 {
		t.Errorf("%d failed sends recorded", n)
	}
}

// TestOptOutSuppresses simulates STOP: the emulator answers 21610 for the
// number until it opts in again, and the client asks for suppression.
func TestOptOutSuppresses(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, twilioemu.Config{})
	c := newTestClient(t, e, nil)
	e.OptOut(testTo)
	se := sendErr(t, c, message(testTo))
	if !se.Suppress || se.Class != heraldtype.ClassPermanent || se.Code != "twilio_21610" {
		t.Fatalf("after STOP: %+v", se)
	}
	if _, err := c.Send(context.Background(), message("+14155550000")); err != nil {
		t.Fatalf("another number: %v", err)
	}
	e.OptIn(testTo)
	if _, err := c.Send(context.Background(), message(testTo)); err != nil {
		t.Fatalf("after START: %v", err)
	}
	if got := e.Stats().Rejected[ErrUnsubscribed]; got != 1 {
		t.Errorf("Rejected[21610] = %d, want 1", got)
	}
}

func TestWrongCredentialsArePermanent(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, twilioemu.Config{})
	for name, mod := range map[string]func(*Config){
		"token":   func(c *Config) { c.AuthToken = "wrong" },
		"account": func(c *Config) { c.AccountSID = "AC11111111111111111111111111111111" },
	} {
		se := sendErr(t, newTestClient(t, e, mod), message(testTo))
		if se.Class != heraldtype.ClassPermanent || se.Code != "twilio_20003" {
			t.Errorf("wrong %s: %+v", name, se)
		}
	}
}

// TestClassifyWithoutTwilioBody covers answers from something in front of
// Twilio: no JSON error body, so the HTTP status decides.
func TestClassifyWithoutTwilioBody(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		status     int
		retryAfter string
		class      heraldtype.ErrorClass
		code       string
		wait       time.Duration
	}{
		{502, "", heraldtype.ClassTemporary, "http_502", 0},
		{503, now.Add(90 * time.Second).Format(http.TimeFormat), heraldtype.ClassTemporary, "http_503", 90 * time.Second},
		{429, "12", heraldtype.ClassThrottled, "http_429", 12 * time.Second},
		{408, "", heraldtype.ClassTemporary, "http_408", 0},
		{404, "", heraldtype.ClassPermanent, "http_404", 0},
		{401, "", heraldtype.ClassPermanent, "http_401", 0},
	}
	for _, tt := range tests {
		h := http.Header{}
		if tt.retryAfter != "" {
			h.Set("Retry-After", tt.retryAfter)
		}
		se := classifyResponse(tt.status, h, []byte("<html>bad gateway</html>"), now)
		if se.Class != tt.class || se.Code != tt.code || se.RetryAfter != tt.wait || se.Message == "" {
			t.Errorf("%d: %+v", tt.status, se)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"": 0, "0": 0, "-3": 0, "abc": 0, " 5 ": 5 * time.Second, "999999999": maxRetryAfter,
		now.Add(-time.Minute).Format(http.TimeFormat): 0,
		now.Add(time.Minute).Format(http.TimeFormat):  time.Minute,
	} {
		if got := parseRetryAfter(v, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestNetworkErrorIsTemporary(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := New(Config{AccountSID: "ACx", AuthToken: "tok", From: testFrom, BaseURL: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	se := sendErr(t, c, message(testTo))
	if se.Class != heraldtype.ClassTemporary || se.Code != codeNetwork {
		t.Fatalf("%+v", se)
	}
}

// TestSendHonoursTimeout: a Twilio that does not answer within Timeout is a
// temporary failure (and, as create has no idempotency, a possible
// duplicate the dispatcher must treat per the type's guarantee).
func TestSendHonoursTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c, err := New(Config{AccountSID: "ACx", AuthToken: "tok", From: testFrom, BaseURL: srv.URL, Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	se := sendErr(t, c, message(testTo))
	if se.Class != heraldtype.ClassTemporary || se.Code != codeNetwork {
		t.Fatalf("%+v", se)
	}
}

// TestUnreadableSuccessIsSuccess: a 201 whose body is lost is still a
// created message; retrying would send it twice.
func TestUnreadableSuccessIsSuccess(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte("not json"))
	}))
	defer srv.Close()
	c, err := New(Config{AccountSID: "ACx", AuthToken: "tok", From: testFrom, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if sid, err := c.Send(context.Background(), message(testTo)); err != nil || sid != "" {
		t.Fatalf("Send = %q, %v", sid, err)
	}
}
