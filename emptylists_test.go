package herald

import (
	"testing"

	"github.com/heraldhq/herald/heraldtype"
)

// Issue 22 item 5, the Go side: a Go program's nil and empty Channels both
// mean "not given" (Go does not tell them apart, by convention), so both
// get the type's channels, push by default. Only the JSON transport, which
// can tell [] from an absent field, refuses an explicit [].
func TestEnqueueEmptyChannelsIsNotGiven(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, nil)
	p.device("u1", "d1", "tok-1")
	for name, chs := range map[string][]heraldtype.Channel{"nil": nil, "empty": {}} {
		res := p.enqueue(Request{UserID: "u1", Type: "promo", Title: "x", Channels: chs})
		if d := p.only(res.Notifications[0].ID); d.Channel != heraldtype.ChannelPush {
			t.Errorf("%s channels: delivery on %s, want push", name, d.Channel)
		}
	}
}
