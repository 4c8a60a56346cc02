package smtp_test

import (
	"errors"
	"testing"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"

	smtpemu "github.com/heraldhq/herald/emulator/smtp"
)

// TestMechanismsAdvertisedAndVerified: the emulator advertises exactly
// the configured mechanisms and checks each one's credentials, spoken by
// an independent client (go-smtp's, with go-sasl's mechanisms).
func TestMechanismsAdvertisedAndVerified(t *testing.T) {
	t.Parallel()
	e, err := smtpemu.New(smtpemu.Config{Username: "herald", Password: "secret", Mechanisms: []string{"login", "PLAIN"}})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := e.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	auth := func(a sasl.Client) error {
		c, err := gosmtp.Dial(addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Hello("client.example"); err != nil {
			t.Fatal(err)
		}
		if _, mechs := c.Extension("AUTH"); mechs != "LOGIN PLAIN" {
			t.Errorf("AUTH %q", mechs)
		}
		return c.Auth(a)
	}
	for name, a := range map[string]sasl.Client{
		"PLAIN": sasl.NewPlainClient("", "herald", "secret"),
		// go-sasl's LOGIN sends the user name as the initial response.
		"LOGIN": sasl.NewLoginClient("herald", "secret"),
	} {
		if err := auth(a); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	var se *gosmtp.SMTPError
	if err := auth(sasl.NewPlainClient("", "herald", "wrong")); !errors.As(err, &se) || se.Code != 535 {
		t.Errorf("wrong password: %v", err)
	}
	if err := auth(sasl.NewExternalClient("")); !errors.As(err, &se) || se.Code != 504 {
		t.Errorf("a mechanism not advertised: %v", err)
	}
	if st := e.Stats(); st.Rejected[535] != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestMechanismsRefusesUnknown(t *testing.T) {
	t.Parallel()
	for _, bad := range [][]string{{"NTLM"}, {"PLAIN", "plain"}} {
		if _, err := smtpemu.New(smtpemu.Config{Mechanisms: bad}); err == nil {
			t.Errorf("accepted %v", bad)
		}
	}
}
