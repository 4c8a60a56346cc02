package webpush_test

import (
	"context"
	"fmt"

	webpushemu "github.com/heraldhq/herald/emulator/webpush"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/provider/webpush"
)

// A Client pointed at an Emulator works as against a browser's push
// service: the emulator hands out a subscription, verifies the VAPID token,
// decrypts the message and records what the service worker would receive.
func ExampleNew() {
	e := webpushemu.New(webpushemu.Config{})
	if _, err := e.Start("127.0.0.1:0"); err != nil {
		panic(err)
	}
	defer e.Close()

	pub, priv, err := webpush.GenerateVAPIDKeys() // herald vapid generate
	if err != nil {
		panic(err)
	}
	c, err := webpush.New(webpush.Config{
		VAPIDPublicKey: pub, VAPIDPrivateKey: priv, Subject: "mailto:ops@example.com",
		// The emulator serves plain HTTP on loopback.
		AllowInsecureEndpoints: true, AllowPrivateEndpoints: true,
	})
	if err != nil {
		panic(err)
	}

	endpoint, p256dh, auth := e.NewSubscription()
	device := &heraldtype.Device{Platform: heraldtype.PlatformWeb, Token: endpoint, WebPushP256DH: p256dh, WebPushAuth: auth}
	send := func() error {
		_, err := c.Send(context.Background(), &heraldtype.Message{
			Key:          "n1.1",
			Notification: &heraldtype.Notification{Title: "Hello", PayloadMode: heraldtype.PayloadAlert, Priority: heraldtype.PriorityHigh},
			Device:       device,
		})
		return err
	}
	fmt.Println(send())
	fmt.Println(e.MessagesTo(endpoint)[0].Plaintext)

	_ = e.ExpireSubscription(endpoint) // the user revoked permission
	se := heraldtype.AsSendError(send())
	fmt.Println(se.Class, se.Code, se.TokenInvalid)
	// Output:
	// <nil>
	// {"title":"Hello","body":"","data":{},"messageId":"n1.1","mode":"alert"}
	// permanent subscription_gone true
}
