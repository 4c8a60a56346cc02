package herald

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Issue 34 item 2: the console's user page shows today's cap use in the
// user's local day. After twelve price drops in a Seoul morning the cap
// of ten is used up by the ten sent, and the next Seoul day starts at 0.
func TestDailyCapUsage(t *testing.T) {
	p := newPolicyPipeline(t, func(c *Config) { c.Rules = RuleConfig{Pause: -1} })
	p.setClock(time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)) // 10:00 in Seoul
	if _, err := p.client.PutType(p.ctx, "price_drop", TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelPush}}); err != nil {
		t.Fatal(err)
	}
	r := priceDropRule()
	r.Source = heraldtype.RuleSource{}
	if _, _, err := p.client.PutRule(p.ctx, r); err != nil {
		t.Fatal(err)
	}
	p.interested("VIEW", "product:0", "u1")
	u, err := p.client.DailyCapUsage(p.ctx, "u1")
	if err != nil || u.Day != "2026-11-22" || u.Timezone != "Asia/Seoul" || u.Limit != 10 || len(u.Counted) != 0 {
		t.Fatalf("before: %+v, %v", u, err)
	}
	for i := range 12 {
		subject := fmt.Sprint("product:", i)
		p.interested("VIEW", subject, "u1")
		e := priceChange(fmt.Sprint("ev-", i), 10000, 8500)
		e.Topic, e.Subject = "", subject
		if _, err := p.client.Track(p.ctx, e); err != nil {
			t.Fatal(err)
		}
		p.fanOut()
		p.work()
		p.clock.Advance(time.Minute)
	}
	u, err = p.client.DailyCapUsage(p.ctx, "u1")
	if err != nil || len(u.Counted) != 10 || !u.ResetsAt.Equal(time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)) {
		t.Fatalf("after twelve: %+v, %v", u, err)
	}
	p.setClock(time.Date(2026, 11, 22, 15, 30, 0, 0, time.UTC)) // 00:30 the next day in Seoul
	if u, err = p.client.DailyCapUsage(p.ctx, "u1"); err != nil || u.Day != "2026-11-23" || len(u.Counted) != 0 {
		t.Fatalf("the next day: %+v, %v", u, err)
	}
	if _, err := p.client.DailyCapUsage(p.ctx, "nobody"); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("an unknown user: %v", err)
	}
}
