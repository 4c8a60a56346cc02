package heraldclient_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
)

func TestExplain(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx := context.Background()
	if _, err := c.PutUser(ctx, "u1", heraldclient.UserInput{}); err != nil {
		t.Fatal(err)
	}
	x, err := c.Explain(ctx, "u1", heraldclient.ExplainParams{Type: "promo", Since: time.Now().Add(-time.Hour)})
	if err != nil || x.Verdict != heraldtype.ExplainNoNotification {
		t.Fatalf("before any: %+v, %v", x, err)
	}
	res, err := c.Trigger(ctx, heraldclient.TriggerRequest{UserID: "u1", Type: "promo", Title: "Sale"})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Notifications[0].ID
	// The user has no device: whether the worker has looked yet or not,
	// the push had nowhere to go.
	x, err = c.Explain(ctx, "u1", heraldclient.ExplainParams{NotificationID: id})
	if err != nil || x.NotificationID != id || x.Verdict != heraldtype.ExplainNoDevice || x.Message == "" {
		t.Fatalf("Explain: %+v, %v", x, err)
	}
	if _, err := c.Explain(ctx, "u1", heraldclient.ExplainParams{}); !heraldclient.IsCode(err, heraldclient.CodeInvalidArgument) {
		t.Errorf("neither type nor notification: %v", err)
	}
	// An event's id, topic and namespace reach the server: an unrecorded
	// event is not found, and its message names them.
	_, err = c.Explain(ctx, "u1", heraldclient.ExplainParams{Event: "ev-1", EventSource: "product.inventory.v1", EventNamespace: "k1"})
	var he *heraldclient.Error
	if !errors.As(err, &he) || he.Code != heraldclient.CodeNotFound || !strings.Contains(he.Message, `"ev-1" from topic product.inventory.v1 under key k1`) {
		t.Errorf("unknown event: %v", err)
	}
	if _, err := c.Explain(ctx, "u1", heraldclient.ExplainParams{EventSource: "product.inventory.v1"}); !errors.As(err, &he) || he.Field != "event" {
		t.Errorf("a topic without the event: %v", err)
	}
	if _, err := c.Explain(ctx, "nobody", heraldclient.ExplainParams{Type: "promo"}); !heraldclient.IsCode(err, heraldclient.CodeNotFound) {
		t.Errorf("unknown user: %v", err)
	}
}
