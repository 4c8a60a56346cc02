package fcm_test

import (
	"context"
	"fmt"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/provider/fcm"
)

// A Client pointed at an Emulator works as against FCM: the emulator issues
// the service account, answers the OAuth2 exchange and records the message.
func ExampleNew() {
	e := fcmemu.New(fcmemu.Config{})
	if _, err := e.Start("127.0.0.1:0"); err != nil {
		panic(err)
	}
	defer e.Close()

	c, err := fcm.New(fcm.Config{CredentialsJSON: e.ServiceAccountJSON("demo"), Endpoint: e.URL()})
	if err != nil {
		panic(err)
	}
	_ = e.FailToken("stale-token", fcmemu.TokenFault{Code: fcm.CodeUnregistered})

	send := func(token string) error {
		_, err := c.Send(context.Background(), &heraldtype.Message{
			Key:          "n1.1",
			Notification: &heraldtype.Notification{Title: "Hello", PayloadMode: heraldtype.PayloadAlert, Priority: heraldtype.PriorityHigh},
			Device:       &heraldtype.Device{Platform: heraldtype.PlatformAndroid, Token: token},
		})
		return err
	}
	fmt.Println(send("fresh-token"))
	se := heraldtype.AsSendError(send("stale-token"))
	fmt.Println(se.Class, se.Code, se.TokenInvalid)
	fmt.Println(len(e.Messages()), "message recorded")
	// Output:
	// <nil>
	// permanent UNREGISTERED true
	// 1 message recorded
}
