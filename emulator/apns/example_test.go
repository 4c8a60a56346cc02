package apns_test

import (
	"context"
	"fmt"

	apnsemu "github.com/heraldhq/herald/emulator/apns"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/provider/apns"
)

// A Client pointed at an Emulator works as against APNs: the emulator
// serves TLS and HTTP/2 with its own certificate, issues a .p8 key and
// verifies the provider tokens signed with it.
func ExampleNew() {
	e, err := apnsemu.New(apnsemu.Config{})
	if err != nil {
		panic(err)
	}
	if _, err := e.Start("127.0.0.1:0"); err != nil {
		panic(err)
	}
	defer e.Close()

	// A provider key the emulator knows, and its certificate to trust.
	p8, keyID, err := e.NewProviderKey(apnsemu.DefaultTeamID)
	if err != nil {
		panic(err)
	}
	c, err := apns.New(apns.Config{KeyP8: p8, KeyID: keyID, TeamID: apnsemu.DefaultTeamID,
		Topic: "com.example.app", Endpoint: e.URL(), RootCAs: e.CertPool()})
	if err != nil {
		panic(err)
	}
	const fresh = "5a1c0e1b9f3a4d6e8b7c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a"
	const stale = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
	_ = e.FailToken(stale, apnsemu.TokenFault{Reason: apns.ReasonUnregistered})

	send := func(token string) error {
		_, err := c.Send(context.Background(), &heraldtype.Message{
			Key:          "n1.1",
			Notification: &heraldtype.Notification{Title: "Hello", PayloadMode: heraldtype.PayloadAlert, Priority: heraldtype.PriorityHigh},
			Device:       &heraldtype.Device{Platform: heraldtype.PlatformIOS, Token: token},
		})
		return err
	}
	fmt.Println(send(fresh))
	se := heraldtype.AsSendError(send(stale))
	fmt.Println(se.Class, se.Code, se.TokenInvalid)
	fmt.Println(len(e.Messages()), "message recorded over", e.Messages()[0].Proto)
	// Output:
	// <nil>
	// permanent Unregistered true
	// 1 message recorded over HTTP/2.0
}
