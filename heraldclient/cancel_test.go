package heraldclient_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
)

// TestCancel: a trigger with a cancellation key, scheduled for later, is
// cancelled by its key; the notification then reads CANCELLED; a
// selection of neither an id nor a key is a 400 naming the field.
func TestCancel(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx := context.Background()
	if _, err := c.PutUser(ctx, "u1", heraldclient.UserInput{}); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	tr, err := c.Trigger(ctx, heraldclient.TriggerRequest{UserID: "u1", Type: "cart", Title: "Your cart is waiting",
		Channels: []heraldtype.Channel{heraldtype.ChannelInApp}, SendAt: &later, CancellationKey: "order-7"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Cancel(ctx, heraldclient.CancelRequest{CancellationKey: "order-7", UserID: "u1"})
	if err != nil || res.Cancelled != 1 || len(res.Deliveries) != 1 || res.Deliveries[0].Outcome != heraldclient.CancelCancelled ||
		len(res.NotificationIDs) != 1 || res.NotificationIDs[0] != tr.ID {
		t.Fatalf("Cancel = %+v, %v", res, err)
	}
	n, err := c.GetNotification(ctx, tr.ID)
	if err != nil || n.Status != heraldtype.HistoryCancelled || n.CancellationKey != "order-7" ||
		n.Deliveries[0].State != heraldtype.StateCancelled {
		t.Fatalf("GetNotification = %+v, %v", n, err)
	}
	_, err = c.Cancel(ctx, heraldclient.CancelRequest{UserID: "u1"})
	var e *heraldclient.Error
	if !errors.As(err, &e) || e.StatusCode != 400 || e.Code != heraldtype.EINVALID || e.Field != "cancellation_key" {
		t.Fatalf("Cancel without a key = %v", err)
	}
}
