package herald

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// capped is a type's explicit counts_toward_cap: true.
var capped = true

// Issue 30 item 5, S3.8/S3.13: with the price_drop type declared as the
// README's walkthrough declares it (channels only), twelve price drops a
// rule sends one user in a day reach the phone ten times: the 11th and
// 12th are blocked by the daily cap. A type that says it does not count
// lets all twelve through, and a trigger of the walkthrough's type is not
// counted.
func TestRuleNotificationsCountTowardTheCapByDefault(t *testing.T) {
	for _, c := range []struct {
		name   string
		typ    TypeConfig
		pushes int
	}{
		{"declared as the walkthrough does", TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelPush, heraldtype.ChannelInApp}}, 10},
		{"declared not to count", TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelPush}, CountsTowardCap: new(false)}, 12},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newPolicyPipeline(t, func(c *Config) { c.Rules = RuleConfig{Pause: -1} })
			p.setClock(time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)) // 10:00 in Seoul
			if _, err := p.client.PutType(p.ctx, "price_drop", c.typ); err != nil {
				t.Fatal(err)
			}
			r := priceDropRule()
			r.Source = heraldtype.RuleSource{}
			if _, _, err := p.client.PutRule(p.ctx, r); err != nil {
				t.Fatal(err)
			}
			for i := range 12 {
				// A product each: no two share a dedupe key.
				subject := fmt.Sprint("product:", i)
				p.interested("VIEW", subject, "u1")
				e := priceChange(fmt.Sprint("ev-", i), 10000, 8500)
				e.Topic, e.Subject = "", subject
				out, err := p.client.Track(p.ctx, e)
				if err != nil || len(out.Rules) != 1 || !out.Rules[0].Detected {
					t.Fatalf("event %d: %+v %v", i, out, err)
				}
				p.fanOut()
				p.work()
				p.clock.Advance(time.Minute)
			}
			if n := len(p.em.MessagesTo("tok-u1")); n != c.pushes {
				t.Fatalf("the phone got %d pushes, want %d", n, c.pushes)
			}
			if c.pushes == 12 {
				return
			}
			h := p.history(HistoryFilter{UserID: "u1", Type: "price_drop", Limit: 200})
			blocked := 0
			for _, n := range h {
				if n.ChannelStatus[heraldtype.ChannelPush] == heraldtype.HistoryRateLimited {
					blocked++
				}
			}
			if blocked != 2 {
				t.Fatalf("%d pushes blocked by the daily cap, want 2: %+v", blocked, h)
			}
			// A trigger of the same type is not counted: it is sent.
			p.enqueue(Request{UserID: "u1", Type: "price_drop", Title: "Your receipt", Channels: []heraldtype.Channel{heraldtype.ChannelPush}})
			p.work()
			if n := len(p.em.MessagesTo("tok-u1")); n != 11 {
				t.Fatalf("after a trigger the phone has %d pushes, want 11", n)
			}
		})
	}
}
