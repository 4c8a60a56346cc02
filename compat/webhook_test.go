package compat

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/heraldhq/herald/internal/webhook"
)

// Herald's webhook signatures (issue 35 item 4) checked by an independent
// implementation of the Standard Webhooks specification: its published Go
// library verifies what Herald signs — with either secret of a rotation —
// and Herald verifies what the library signs.
func TestWebhookSignaturesAgreeWithTheStandardWebhooksLibrary(t *testing.T) {
	oldSecret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	newSecret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	parse := func(s string) webhook.Secret {
		k, err := webhook.ParseSecret(s)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	body := []byte(`{"type":"delivery.finished","timestamp":"2026-11-28T04:00:00Z","data":{"delivery_id":"42","state":"sent"}}`)
	now := time.Now()
	h, err := webhook.Headers("evt_01JDQ7", now, body, parse(newSecret), parse(oldSecret))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{oldSecret, newSecret} {
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify(body, h); err != nil {
			t.Errorf("the library refused Herald's message under %s…: %v", s[:10], err)
		}
	}
	if other, err := webhook.NewSecret(); err != nil {
		t.Fatal(err)
	} else if wh, err := standardwebhooks.NewWebhook(other); err != nil {
		t.Fatal(err)
	} else if err := wh.Verify(body, h); err == nil {
		t.Error("the library accepted Herald's message under a secret it was not signed with")
	}

	wh, err := standardwebhooks.NewWebhook(newSecret)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := wh.Sign("msg_2", now, body)
	if err != nil {
		t.Fatal(err)
	}
	lh := http.Header{}
	lh.Set(webhook.HeaderID, "msg_2")
	lh.Set(webhook.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	lh.Set(webhook.HeaderSignature, sig)
	if err := webhook.Verify(lh, body, now, webhook.DefaultTolerance, parse(newSecret)); err != nil {
		t.Errorf("Herald refused the library's message: %v", err)
	}
}
