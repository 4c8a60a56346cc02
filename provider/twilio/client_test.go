package twilio

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	twilioemu "github.com/heraldhq/herald/emulator/twilio"
	"github.com/heraldhq/herald/heraldtype"
)

func TestSendReturnsSID(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, twilioemu.Config{})
	c := newTestClient(t, e, nil)

	sid, err := c.Send(context.Background(), message(testTo))
	if err != nil {
		t.Fatal(err)
	}
	got := e.MessagesTo(testTo)
	if len(got) != 1 || got[0].SID != sid || !strings.HasPrefix(sid, "SM") || len(sid) != 34 {
		t.Fatalf("Send returned %q, emulator recorded %+v", sid, got)
	}
	if got[0].Body != "Your code\n123456" || got[0].From != testFrom || got[0].Status != "queued" {
		t.Fatalf("recorded %+v", got[0])
	}
}

// TestRequestShape pins the exact form Herald posts.
func TestRequestShape(t *testing.T) {
	t.Parallel()
	var got url.Values
	var user, pass, path, ctype string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ = r.BasicAuth()
		path, ctype = r.URL.Path, r.Header.Get("Content-Type")
		r.ParseForm()
		got = r.PostForm
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"sid":"SM1","status":"accepted"}`)
	}))
	defer srv.Close()
	m := message(testTo)
	m.Notification.Title = ""
	for _, tt := range []struct {
		name       string
		cfg        Config
		user, pass string
		sender     url.Values
	}{
		{"auth token and from number", Config{AuthToken: "tok", From: testFrom}, "ACx", "tok", url.Values{"From": {testFrom}}},
		// An API key authenticates; the account stays in the path.
		{"API key and messaging service", Config{APIKeySID: "SKk", APIKeySecret: "sec", MessagingServiceSID: "MGy"},
			"SKk", "sec", url.Values{"MessagingServiceSid": {"MGy"}}},
	} {
		cfg := tt.cfg
		cfg.AccountSID, cfg.BaseURL = "ACx", srv.URL+"/"
		cfg.StatusCallback = "https://herald.example/v1/providers/twilio/status"
		if cfg.AuthToken == "" {
			cfg.AuthToken = "signing-token"
		}
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sid, err := c.Send(context.Background(), m)
		if err != nil || sid != "SM1" {
			t.Fatalf("%s: Send = %q, %v", tt.name, sid, err)
		}
		want := url.Values{"To": {testTo}, "Body": {"123456"},
			"StatusCallback": {"https://herald.example/v1/providers/twilio/status?delivery=" + url.QueryEscape(m.Key)}}
		for k, v := range tt.sender {
			want[k] = v
		}
		if got.Encode() != want.Encode() {
			t.Errorf("%s: form = %v, want %v", tt.name, got, want)
		}
		if user != tt.user || pass != tt.pass || path != "/2010-04-01/Accounts/ACx/Messages.json" || ctype != "application/x-www-form-urlencoded" {
			t.Errorf("%s: auth %q/%q path %q content-type %q", tt.name, user, pass, path, ctype)
		}
	}
}

func TestComposeBody(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ title, body, want string }{
		{"T", "B", "T\nB"}, {"", "B", "B"}, {"T", "", "T"}, {"", "", ""},
	} {
		if got := ComposeBody(&heraldtype.Notification{Title: tt.title, Body: tt.body}); got != tt.want {
			t.Errorf("ComposeBody(%q, %q) = %q, want %q", tt.title, tt.body, got, tt.want)
		}
	}
}

// TestCheckPayload covers issue 5: bodies over 1600 characters are
// rejected at trigger time.
func TestCheckPayload(t *testing.T) {
	t.Parallel()
	c, err := New(Config{AccountSID: "ACx", AuthToken: "tok", From: testFrom})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		title, body string
		ok          bool
	}{
		{"short", "Hi", "there", true},
		{"exactly 1600 with title", strings.Repeat("t", 99), strings.Repeat("b", 1500), true},
		{"1601 with title", strings.Repeat("t", 100), strings.Repeat("b", 1500), false},
		{"1600 body only", "", strings.Repeat("b", 1600), true},
		{"1601 body only", "", strings.Repeat("b", 1601), false},
		// 800 emoji are 800 runes but 1600 UTF-16 units: still allowed;
		// one more character is over.
		{"800 emoji", "", strings.Repeat("😀", 800), true},
		{"800 emoji and one", "", strings.Repeat("😀", 800) + "x", false},
		{"1600 accented", "", strings.Repeat("é", 1600), true},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		err := c.ValidateNotification(&heraldtype.Notification{Title: tt.title, Body: tt.body})
		if (err == nil) != tt.ok {
			t.Errorf("%s: ValidateNotification = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && heraldtype.ErrorCode(err) != heraldtype.EINVALID {
			t.Errorf("%s: code %q, want %q", tt.name, heraldtype.ErrorCode(err), heraldtype.EINVALID)
		}
	}
	if err := CheckPayload(nil); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Errorf("CheckPayload(nil) = %v", err)
	}
}

// TestTooLongBodyAgreesWithEmulator checks that the client's limit is the
// emulator's (and Twilio's): one over is 21617 at Twilio, refused before
// the request by Send.
func TestTooLongBodyAgreesWithEmulator(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, twilioemu.Config{})
	c := newTestClient(t, e, nil)
	m := message(testTo)
	m.Notification.Title, m.Notification.Body = "", strings.Repeat("x", MaxBodyChars)
	if _, err := c.Send(context.Background(), m); err != nil {
		t.Fatalf("1600 characters: %v", err)
	}
	m.Notification.Body += "x"
	se := sendErr(t, c, m)
	if se.Class != heraldtype.ClassPermanent || se.Code != codeInvalidMessage {
		t.Errorf("1601 characters: %+v", se)
	}
	form := url.Values{"To": {testTo}, "From": {testFrom}, "Body": {m.Notification.Body}}
	status, ae := postRaw(t, e, e.AccountSID(), e.AuthToken(), form)
	if status != 400 || ae.Code != ErrBodyTooLong {
		t.Errorf("emulator answered %d %+v, want 400 21617", status, ae)
	}
}

func TestSendRejectsUnusableMessages(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, twilioemu.Config{})
	c := newTestClient(t, e, nil)
	noNotif := message(testTo)
	noNotif.Notification = nil
	empty := message(testTo)
	empty.Notification = &heraldtype.Notification{}
	tests := []struct {
		name string
		m    *heraldtype.Message
		code string
	}{
		{"nil", nil, codeInvalidMessage},
		{"no notification", noNotif, codeInvalidMessage},
		{"no address", message(""), codeInvalidMessage},
		{"not E.164", message("0415 555 2671"), Code(ErrInvalidTo)},
		{"leading zero country", message("+0415552671"), Code(ErrInvalidTo)},
		{"empty text", empty, codeInvalidMessage},
	}
	for _, tt := range tests {
		se := sendErr(t, c, tt.m)
		if se.Class != heraldtype.ClassPermanent || se.Code != tt.code || se.Suppress {
			t.Errorf("%s: %+v, want permanent %s", tt.name, se, tt.code)
		}
	}
	if n := len(e.Messages()); n != 0 {
		t.Errorf("%d messages reached the emulator", n)
	}
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	ok := Config{AccountSID: "ACx", AuthToken: "tok", From: testFrom}
	tests := []struct {
		name string
		mod  func(*Config)
		want string // substring of the error, "" for success
	}{
		{"valid", func(*Config) {}, ""},
		{"service only", func(c *Config) { c.From, c.MessagingServiceSID = "", "MG1" }, ""},
		{"no account", func(c *Config) { c.AccountSID = "" }, "AccountSID is required"},
		{"bad account", func(c *Config) { c.AccountSID = "AC/x" }, "AccountSID"},
		{"no token", func(c *Config) { c.AuthToken = "" }, "AuthToken (or APIKeySID and APIKeySecret) is required"},
		{"API key", func(c *Config) { c.AuthToken, c.APIKeySID, c.APIKeySecret = "", "SK1", "sec" }, ""},
		{"API key without secret", func(c *Config) { c.APIKeySID = "SK1" }, "APIKeySecret is required"},
		{"secret without API key", func(c *Config) { c.APIKeySecret = "sec" }, "APIKeySecret is set without APIKeySID"},
		{"bad API key", func(c *Config) { c.APIKeySID, c.APIKeySecret = "AC1", "sec" }, "APIKeySID"},
		{"no sender", func(c *Config) { c.From = "" }, "one of From and MessagingServiceSID"},
		{"two senders", func(c *Config) { c.MessagingServiceSID = "MG1" }, "exactly one of From and MessagingServiceSID"},
		{"bad service", func(c *Config) { c.From, c.MessagingServiceSID = "", "XX1" }, "MG"},
		{"callback", func(c *Config) { c.StatusCallback = "https://h.example/v1/providers/twilio/status" }, ""},
		{"callback without auth token", func(c *Config) {
			c.AuthToken, c.APIKeySID, c.APIKeySecret, c.StatusCallback = "", "SK1", "sec", "https://h.example/s"
		}, "StatusCallback needs AuthToken"},
		{"bad base", func(c *Config) { c.BaseURL = "ftp://x" }, "BaseURL"},
		{"bad callback", func(c *Config) { c.StatusCallback = "/relative" }, "StatusCallback"},
		{"negative timeout", func(c *Config) { c.Timeout = -1 }, "Timeout"},
	}
	for _, tt := range tests {
		cfg := ok
		tt.mod(&cfg)
		_, err := New(cfg)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

// TestSecretsNeverPrinted checks that the auth token reaches neither
// errors nor any printed form of Config or Client.
func TestSecretsNeverPrinted(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-auth-token-value"
	cfg := Config{AccountSID: "ACx", AuthToken: secret, From: testFrom, BaseURL: "http://127.0.0.1:1"}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, refused := c.Send(context.Background(), message(testTo)) // connection refused
	bad := cfg
	bad.BaseURL = "::"
	_, cfgErr := New(bad)
	var logged strings.Builder
	for _, s := range []string{
		fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%q", cfg),
		fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), c.String(), cfg.LogValue().String(),
		fmt.Sprint(refused), fmt.Sprint(cfgErr),
	} {
		logged.WriteString(s + "\n")
	}
	if strings.Contains(logged.String(), secret) {
		t.Fatalf("secret printed:\n%s", logged.String())
	}
	if !strings.Contains(logged.String(), "[redacted]") {
		t.Errorf("Config does not say the token is set:\n%s", logged.String())
	}
	// Wrong credentials at the emulator: the answer does not echo them.
	e := startEmulator(t, twilioemu.Config{})
	wrong := newTestClient(t, e, func(c *Config) { c.AuthToken = secret })
	if se := sendErr(t, wrong, message(testTo)); strings.Contains(se.Error(), secret) {
		t.Fatalf("secret in %v", se)
	}
}
