package smtp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	smtpemu "github.com/heraldhq/herald/emulator/smtp"
	"github.com/heraldhq/herald/heraldtype"
)

// TestStartTLSAndAuth: over STARTTLS with AUTH PLAIN the mail arrives
// encrypted and authenticated; wrong credentials are a permanent 535.
func TestStartTLSAndAuth(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, smtpemu.Config{TLS: TLSStartTLS, Username: testUser, Password: testPass})
	c := newTestClient(t, e, nil)
	if _, err := c.Send(context.Background(), message(testTo)); err != nil {
		t.Fatal(err)
	}
	if r := e.Messages()[0]; !r.TLS || r.User != testUser {
		t.Errorf("tls=%v user=%q", r.TLS, r.User)
	}

	wrong := newTestClient(t, e, func(c *Config) { c.Password = "wrong" })
	if se := sendErr(t, wrong, message(testTo)); se.Class != heraldtype.ClassPermanent || se.Code != "smtp_535" {
		t.Errorf("wrong password: %+v", se)
	}
	anon := newTestClient(t, e, func(c *Config) { c.Username, c.Password = "", "" })
	if se := sendErr(t, anon, message(testTo)); se.Class != heraldtype.ClassPermanent || se.Code != "smtp_530" {
		t.Errorf("no AUTH: %+v", se)
	}
	// Without TLS the server does not offer AUTH at all.
	plain := newTestClient(t, e, func(c *Config) { c.TLS = TLSNone })
	if se := sendErr(t, plain, message(testTo)); se.Class != heraldtype.ClassPermanent || se.Code != codeConfig {
		t.Errorf("AUTH without TLS: %+v", se)
	}
	// A certificate the client does not trust is a TLS failure.
	untrusted := newTestClient(t, e, func(c *Config) { c.RootCAs = nil })
	if se := sendErr(t, untrusted, message(testTo)); se.Class != heraldtype.ClassTemporary || se.Code != codeTLS {
		t.Errorf("untrusted certificate: %+v", se)
	}
	if n := len(e.Messages()); n != 1 {
		t.Errorf("%d mails recorded", n)
	}
	if st := e.Stats(); st.Rejected[535] != 1 || st.Rejected[530] != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestImplicitTLS(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, smtpemu.Config{TLS: TLSImplicit, Username: testUser, Password: testPass})
	c := newTestClient(t, e, nil)
	if _, err := c.Send(context.Background(), message(testTo)); err != nil {
		t.Fatal(err)
	}
	if r := e.Messages()[0]; !r.TLS || r.User != testUser {
		t.Errorf("tls=%v user=%q", r.TLS, r.User)
	}
	// A STARTTLS client against an implicit-TLS port fails, temporarily
	// (it cannot tell a misconfiguration from a broken server).
	if se := sendErr(t, newTestClient(t, e, func(c *Config) { c.TLS, c.Timeout = TLSStartTLS, 300*time.Millisecond }), message(testTo)); se.Class != heraldtype.ClassTemporary {
		t.Errorf("STARTTLS to implicit TLS: %+v", se)
	}
}

func TestEmulatorRejectsBadTLSMode(t *testing.T) {
	t.Parallel()
	if _, err := smtpemu.New(smtpemu.Config{TLS: "ssl"}); err == nil {
		t.Fatal("accepted TLS \"ssl\"")
	}
}

// TestEmulatorHTTPSide covers the side listener: messages, faults, stats.
func TestEmulatorHTTPSide(t *testing.T) {
	t.Parallel()
	var logs strings.Builder
	var logMu sync.Mutex
	e := startEmulator(t, smtpemu.Config{Logger: slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, nil))})
	base, err := e.StartHTTP("127.0.0.1:0")
	if err != nil || base != e.HTTPURL() {
		t.Fatal(base, err)
	}
	c := newTestClient(t, e, nil)
	do := func(method, path, body string) (int, []byte) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	if s, b := do("PUT", "/emulator/faults", `{"recipients":{"gone@example.com":{"code":550,"enhanced":"5.1.1"}}}`); s != 200 {
		t.Fatalf("PUT faults: %d %s", s, b)
	}
	for _, bad := range []string{`{"recipients":{"x":{"code":250}}}`, `{"recipients":{"x":{"code":550,"enhanced":"4.1.1"}}}`,
		`{"local_error":{"rate":0.8},"service_closing":{"rate":0.8}}`, `{"nope":1}`} {
		if s, _ := do("PUT", "/emulator/faults", bad); s != 400 {
			t.Errorf("PUT %s: %d", bad, s)
		}
	}
	if se := sendErr(t, c, message("gone@example.com")); !se.Suppress {
		t.Errorf("%+v", se)
	}
	if _, err := c.Send(context.Background(), message(testTo)); err != nil {
		t.Fatal(err)
	}
	_, b := do("GET", "/emulator/messages?to="+testTo, "")
	var msgs []smtpemu.Received
	if err := json.Unmarshal(b, &msgs); err != nil || len(msgs) != 1 || msgs[0].Subject != "Your order shipped" {
		t.Fatalf("GET messages: %s %v", b, err)
	}
	_, b = do("GET", "/emulator/stats", "")
	var st smtpemu.Stats
	if err := json.Unmarshal(b, &st); err != nil || st.Accepted != 1 || st.Rejected[550] != 1 {
		t.Errorf("stats %s", b)
	}
	if s, _ := do("DELETE", "/emulator/messages", ""); s != 204 || len(e.Messages()) != 0 {
		t.Errorf("DELETE messages: %d", s)
	}
	if s, _ := do("DELETE", "/emulator/faults", ""); s != 204 || len(e.CurrentFaults().Recipients) != 0 {
		t.Errorf("DELETE faults: %d", s)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if !strings.Contains(logs.String(), "mail accepted") {
		t.Errorf("log: %s", logs.String())
	}
}

// TestFaultRatesAreSeeded checks that rate faults are reproducible and
// come out near the configured rate.
func TestFaultRatesAreSeeded(t *testing.T) {
	t.Parallel()
	run := func() []string {
		e := startEmulator(t, smtpemu.Config{Seed: 9})
		if err := e.SetFaults(smtpemu.Faults{ServiceClosing: smtpemu.RateFault{Rate: 0.1}, LocalError: smtpemu.RateFault{Rate: 0.1}, InsufficientStorage: smtpemu.RateFault{Rate: 0.1}}); err != nil {
			t.Fatal(err)
		}
		c := newTestClient(t, e, nil)
		var out []string
		for range 60 {
			_, err := c.Send(context.Background(), message(testTo))
			se := heraldtype.AsSendError(err)
			if se != nil && se.Class != heraldtype.ClassTemporary {
				t.Errorf("rate fault not temporary: %+v", se)
			}
			if se != nil {
				out = append(out, se.Code)
			} else {
				out = append(out, "ok")
			}
		}
		return out
	}
	a, b := run(), run()
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("runs differ:\n%v\n%v", a, b)
	}
	failed := 0
	for _, s := range a {
		if s != "ok" {
			failed++
		}
	}
	if failed < 6 || failed > 34 {
		t.Errorf("%d of 60 failed, want about 18", failed)
	}
}

func TestEmulatorRingKeepsNewest(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, smtpemu.Config{MaxRecorded: 2})
	c := newTestClient(t, e, nil)
	for _, to := range []string{"a@x.example", "b@x.example", "c@x.example"} {
		if _, err := c.Send(context.Background(), message(to)); err != nil {
			t.Fatal(err)
		}
	}
	got := e.Messages()
	if len(got) != 2 || got[0].To[0] != "b@x.example" || got[1].To[0] != "c@x.example" {
		t.Fatalf("%+v", got)
	}
}

// TestConcurrentSends: the Client is safe for concurrent use; each Send
// has its own connection.
func TestConcurrentSends(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, smtpemu.Config{TLS: TLSStartTLS, Username: testUser, Password: testPass})
	c := newTestClient(t, e, nil)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			m := message(fmt.Sprintf("u%d@example.com", i))
			m.Key = fmt.Sprintf("n.%d", i)
			if _, err := c.Send(context.Background(), m); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := len(e.Messages()); n != 16 {
		t.Errorf("%d mails recorded", n)
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
