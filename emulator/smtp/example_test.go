package smtp_test

import (
	"context"
	"fmt"

	smtpemu "github.com/heraldhq/herald/emulator/smtp"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/provider/smtp"
)

// A Client pointed at an Emulator: the mail is parsed back with its text
// and HTML parts, and a scripted 550 5.1.1 is a permanent, suppressing
// failure.
func ExampleNew() {
	e, err := smtpemu.New(smtpemu.Config{Username: "herald", Password: "secret"})
	if err != nil {
		panic(err)
	}
	if _, err := e.Start("127.0.0.1:0"); err != nil {
		panic(err)
	}
	defer e.Close()
	_ = e.FailRecipient("gone@example.com", smtpemu.RecipientFault{Code: 550, Enhanced: "5.1.1", Message: "No such user"})

	host, port := e.HostPort()
	c, err := smtp.New(smtp.Config{
		Host: host, Port: port, TLS: smtp.TLSNone, // the emulator's default; use TLSStartTLS with RootCAs: e.CertPool()
		Username: "herald", Password: "secret", From: "Acme <noreply@acme.example>",
	})
	if err != nil {
		panic(err)
	}
	send := func(addr string) error {
		_, err := c.Send(context.Background(), &heraldtype.Message{
			Key: "n1.1",
			Notification: &heraldtype.Notification{Title: "Welcome", Body: "Hello!",
				Data: map[string]string{smtp.DataHTML: "<h1>Hello!</h1>"}},
			Address: addr,
		})
		return err
	}
	fmt.Println(send("ada@example.com"))
	se := heraldtype.AsSendError(send("gone@example.com"))
	fmt.Println(se.Class, se.Code, se.Suppress)
	m := e.Messages()[0]
	fmt.Println(m.Subject, "|", m.Text, "|", m.HTML, "|", m.MessageID)
	// Output:
	// <nil>
	// permanent smtp_550 true
	// Welcome | Hello! | <h1>Hello!</h1> | n1.1@acme.example
}
