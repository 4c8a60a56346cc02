package heraldclient_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
)

// The examples run against a real Herald that TestMain starts: baseURL is
// its address and apiKey an admin key.
var baseURL, apiKey string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "heraldclient-example")
	if err != nil {
		panic(err)
	}
	s, stop := startServer(nil, dir, serverOptions{})
	baseURL, apiKey = s.URL, s.adminKey
	code := m.Run()
	stop()
	if errs := mainT.failures(); len(errs) > 0 {
		for _, e := range errs {
			fmt.Fprintln(os.Stderr, "the examples' server:", e)
		}
		code = 1
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// A backend registers its user's phone, triggers a notification and reads
// what became of it.
func Example() {
	ctx := context.Background()
	c, err := heraldclient.New(baseURL, heraldclient.WithAPIKey(apiKey))
	if err != nil {
		panic(err)
	}
	if _, err := c.PutUser(ctx, "alice", heraldclient.UserInput{Timezone: "Asia/Seoul"}); err != nil {
		panic(err)
	}
	_, err = c.RegisterDevice(ctx, "alice", heraldclient.DeviceInput{DeviceID: "alice-phone", Token: "fcm-token-1", Platform: heraldtype.PlatformAndroid})
	if err != nil {
		panic(err)
	}
	res, err := c.Trigger(ctx, heraldclient.TriggerRequest{UserID: "alice", Type: "order_shipped",
		Title: "Your order is on its way", Data: map[string]string{"order_id": "42"}})
	if err != nil {
		panic(err)
	}
	// Delivery happens in the background; poll until it is decided.
	for {
		n, err := c.GetNotification(ctx, res.ID)
		if err != nil {
			panic(err)
		}
		if n.Status != heraldtype.HistoryPending {
			fmt.Println(n.Status, len(n.Deliveries), "delivery by", n.Deliveries[0].Channel)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Output: SENT 1 delivery by push
}

// A trigger retried with the same Idempotency-Key is answered with the
// first trigger's notification, and nothing is sent twice.
func ExampleClient_Trigger() {
	ctx := context.Background()
	c, _ := heraldclient.New(baseURL, heraldclient.WithAPIKey(apiKey))
	_, _ = c.PutUser(ctx, "bob", heraldclient.UserInput{})
	req := heraldclient.TriggerRequest{IdempotencyKey: "order-42-shipped", UserID: "bob", Type: "order_shipped",
		Title: "Shipped", Channels: []heraldtype.Channel{heraldtype.ChannelInApp}}
	first, err := c.Trigger(ctx, req)
	if err != nil {
		panic(err)
	}
	again, err := c.Trigger(ctx, req)
	if err != nil {
		panic(err)
	}
	fmt.Println("first replayed:", first.Replayed)
	fmt.Println("again replayed:", again.Replayed, "same notification:", again.ID == first.ID)
	// Output:
	// first replayed: false
	// again replayed: true same notification: true
}

// An answer of the API that is an error carries its stable code and the
// field at fault.
func ExampleError() {
	ctx := context.Background()
	c, _ := heraldclient.New(baseURL, heraldclient.WithAPIKey(apiKey))
	_, err := c.PutUser(ctx, "carol", heraldclient.UserInput{Phone: "010-1234-5678"})
	var herr *heraldclient.Error
	if errors.As(err, &herr) {
		fmt.Println(herr.StatusCode, herr.Code, herr.Field)
	}
	_, err = c.GetUser(ctx, "nobody-at-all")
	fmt.Println(heraldclient.IsCode(err, heraldclient.CodeNotFound))
	// Output:
	// 400 invalid_argument phone
	// true
}

// Deliveries walks every page of a listing; the page size is the
// filter's Limit.
func ExampleClient_Deliveries() {
	ctx := context.Background()
	c, _ := heraldclient.New(baseURL, heraldclient.WithAPIKey(apiKey))
	users := []string{"dave1", "dave2", "dave3", "dave4", "dave5"}
	for _, u := range users {
		_, _ = c.PutUser(ctx, u, heraldclient.UserInput{})
	}
	if _, err := c.Trigger(ctx, heraldclient.TriggerRequest{UserIDs: users, Type: "weekly_digest", Title: "Your week",
		Channels: []heraldtype.Channel{heraldtype.ChannelInApp}}); err != nil {
		panic(err)
	}
	n := 0
	for d, err := range c.Deliveries(ctx, heraldtype.DeliveryFilter{Type: "weekly_digest", Limit: 2}) {
		if err != nil {
			panic(err)
		}
		n++
		_ = d
	}
	fmt.Println(n, "deliveries, read two at a time")
	// Output: 5 deliveries, read two at a time
}

// An app's inbox follows new items as they are written.
func ExampleClient_InboxStream() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _ := heraldclient.New(baseURL, heraldclient.WithAPIKey(apiKey))
	_, _ = c.PutUser(ctx, "erin", heraldclient.UserInput{})
	go func() {
		_, _ = c.Trigger(ctx, heraldclient.TriggerRequest{UserID: "erin", Type: "chat_message", Title: "Hi Erin",
			Channels: []heraldtype.Channel{heraldtype.ChannelInApp}})
	}()
	// LastEventID "0": from the first item on, so the one triggered above
	// arrives however the two race.
	for ev, err := range c.InboxStream(ctx, "erin", heraldclient.StreamOptions{LastEventID: "0"}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(ev.Item.Type, ev.Item.Title)
		break
	}
	// Output: chat_message Hi Erin
}
