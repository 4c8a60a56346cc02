package twilio_test

import (
	"context"
	"fmt"

	twilioemu "github.com/heraldhq/herald/emulator/twilio"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/provider/twilio"
)

// A Client pointed at an Emulator works as against Twilio: the emulator
// checks the credentials, records the SMS and answers STOP with 21610.
func ExampleNew() {
	e := twilioemu.New(twilioemu.Config{})
	if _, err := e.Start("127.0.0.1:0"); err != nil {
		panic(err)
	}
	defer e.Close()

	c, err := twilio.New(twilio.Config{
		AccountSID: e.AccountSID(), AuthToken: e.AuthToken(), From: "+15005550006", BaseURL: e.URL(),
	})
	if err != nil {
		panic(err)
	}
	e.OptOut("+14155550100")

	send := func(number string) error {
		_, err := c.Send(context.Background(), &heraldtype.Message{
			Key:          "n1.1",
			Notification: &heraldtype.Notification{Title: "Your code", Body: "123456"},
			Address:      number,
		})
		return err
	}
	fmt.Println(send("+14155552671"))
	se := heraldtype.AsSendError(send("+14155550100"))
	fmt.Println(se.Class, se.Code, se.Suppress)
	fmt.Printf("%q\n", e.Messages()[0].Body)
	// Output:
	// <nil>
	// permanent twilio_21610 true
	// "Your code\n123456"
}
