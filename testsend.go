package herald

import (
	"context"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/policy"
	"github.com/heraldhq/herald/store"
)

// TestSendRequest is the body of POST /v1/types/{type}/test-send.
type TestSendRequest = heraldtype.TestSendRequest

// TestSendResult is what a test-send did: the notification (one, for the
// named user) and, per channel, whether it is being sent or was skipped
// and why.
type TestSendResult struct {
	Result
	Channels []heraldtype.TestSendChannel `json:"channels"`
}

// TestSend sends the type's latest templates to one named user now, with
// the given data or the templates' sample data. A test is the operator's
// check of what a user would read, so it bypasses what paces a user's
// traffic — quiet hours, send_at, de-duplication, the daily cap (it does
// not count toward it either), digests and escalation — but never the
// user's opt-outs: a refused channel is reported skipped with the
// refusal's code, as is a channel with nothing to send to, and its
// delivery ends opted_out on the timeline as any other would. The
// notification's source is heraldtype.SourceTest, so the engagement
// report leaves it out and campaigns and rules can tell it apart. A type
// without templates is invalid_argument, and so is an unknown user.
func (c *Client) TestSend(ctx context.Context, typ string, in TestSendRequest) (TestSendResult, error) {
	if err := validTypeName(typ); err != nil {
		return TestSendResult{}, err
	}
	if in.UserID == "" {
		return TestSendResult{}, heraldtype.FieldErrorf("user_id", "is required")
	}
	if err := validID("user_id", in.UserID); err != nil {
		return TestSendResult{}, err
	}
	tv, err := c.latestTemplates(ctx, typ)
	if err != nil {
		return TestSendResult{}, err
	}
	if tv == nil {
		return TestSendResult{}, heraldtype.FieldErrorf("type", "type %q has no templates to send (PUT /v1/types/%s/templates)", typ, typ)
	}
	prefs, err := c.store.GetPreferences(ctx, in.UserID)
	if heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND {
		return TestSendResult{}, heraldtype.FieldErrorf("user_id", "user %q not found", in.UserID)
	}
	if err != nil {
		return TestSendResult{}, err
	}
	t, err := c.types.Type(ctx, typ)
	if err != nil {
		return TestSendResult{}, err
	}
	data := in.Data
	if data == nil {
		data = tv.Templates.SampleData
	}
	r := Request{UserID: in.UserID, Type: typ, Data: data, Channels: in.Channels}
	p, err := c.prepare(ctx, &r)
	if err != nil {
		return TestSendResult{}, err
	}
	// Now, to this user alone: no digest gathers it, no escalation
	// follows it; the policy reads the source (internal/policy).
	p.Digest, p.Escalate = nil, nil
	for i := range p.Notifications {
		p.Notifications[i].Source = &heraldtype.Source{Kind: heraldtype.SourceTest}
	}
	res, err := c.store.Enqueue(ctx, p)
	if err != nil {
		return TestSendResult{}, err
	}
	out := TestSendResult{Result: c.enqueued(typ, res, true)}
	var ds []heraldtype.Delivery
	if len(res.Notifications) == 1 {
		if ds, err = c.store.ListNotificationDeliveries(ctx, res.Notifications[0].ID); err != nil {
			return TestSendResult{}, err
		}
	}
	out.Channels = testSendChannels(t, prefs, r.Channels, ds)
	return out, nil
}

// testSendChannels reports each channel of a test-send from the user's
// preferences (what the policy will refuse) and the deliveries the
// enqueue wrote (what it could not address).
func testSendChannels(t heraldtype.NotificationType, prefs heraldtype.Preferences, chs []heraldtype.Channel, ds []heraldtype.Delivery) []heraldtype.TestSendChannel {
	out := make([]heraldtype.TestSendChannel, 0, len(chs))
	for _, ch := range chs {
		tc := heraldtype.TestSendChannel{Channel: ch, Status: heraldtype.TestSendQueued}
		live := 0
		for _, d := range ds {
			if d.Channel != ch {
				continue
			}
			tc.Deliveries++
			switch d.State {
			case heraldtype.StateSkipped, heraldtype.StateOptedOut, heraldtype.StateRateLimited:
				tc.Code, tc.Reason = d.LastErrorCode, d.LastError
			default:
				live++
			}
		}
		switch refusal, refused := policy.Preferences(t, prefs, ch); {
		case refused:
			tc.Status, tc.Code, tc.Reason = heraldtype.TestSendSkipped, refusal.Code, refusal.Reason
		case tc.Deliveries == 0 && ch == heraldtype.ChannelPush:
			tc.Status, tc.Code, tc.Reason = heraldtype.TestSendSkipped, heraldtype.CodeNoDevice, "the user has no device that takes push notifications"
		case live == 0:
			tc.Status = heraldtype.TestSendSkipped
			if tc.Code == "" {
				tc.Code, tc.Reason = store.CodeNoAddress, "nothing was addressed on this channel"
			}
		default:
			tc.Code, tc.Reason = "", ""
		}
		out = append(out, tc)
	}
	return out
}
