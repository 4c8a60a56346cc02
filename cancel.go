package herald

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// CancelRequest selects the notifications to cancel (POST
// /v1/notifications/cancel): one by NotificationID, or every one
// triggered with CancellationKey — UserID's only when it is set, every
// user's otherwise.
type CancelRequest struct {
	NotificationID  string `json:"notification_id,omitempty"`
	CancellationKey string `json:"cancellation_key,omitempty"`
	UserID          string `json:"user_id,omitempty"`
	// By says who cancelled, for the timeline (the HTTP API sets it to the
	// API key's name); never read from the body.
	By string `json:"-"`
}

// What a cancel did with each delivery it decided (CancelledDelivery's
// Outcome).
const (
	// CancelCancelled: it was not sent and never will be (this cancel or
	// an earlier one cancelled it).
	CancelCancelled = "cancelled"
	// CancelSent: it was sent before the cancel returned (while the
	// cancel waited for it, or before).
	CancelSent = "sent"
	// CancelNotSent: it ended otherwise (dead, skipped, opted out, …):
	// not sent.
	CancelNotSent = "not_sent"
	// CancelInFlight: it was still in flight when the cancel stopped
	// waiting (Config.CancelWait): its worker decides.
	CancelInFlight = "in_flight"
)

// CancelResult is what a cancel found and decided: every delivery of the
// selected notifications, each either sent before the call returned or
// never to be sent (or, past CancelWait, still in flight), with the
// counts of each. A delivery final before the call is reported as it
// ended: sent, not_sent, or cancelled by an earlier cancel.
type CancelResult struct {
	// NotificationIDs are the notifications selected.
	NotificationIDs []string            `json:"notification_ids"`
	Cancelled       int                 `json:"cancelled"`
	Sent            int                 `json:"sent"`
	NotSent         int                 `json:"not_sent"`
	InFlight        int                 `json:"in_flight"`
	Deliveries      []CancelledDelivery `json:"deliveries"`
	// DigestItems are the selected triggers that were waiting in a digest
	// (issue 36 item 4): the cancel took each out of its digest, whose
	// message never shows it.
	DigestItems []CancelledDigestItem `json:"digest_items"`
}

// CancelledDigestItem is one digested trigger a cancel took out of its
// digest: the digest, and the id the trigger was answered with.
type CancelledDigestItem struct {
	DigestID string `json:"digest_id"`
	ID       string `json:"id"`
}

// CancelledDelivery is one delivery a cancel decided.
type CancelledDelivery struct {
	ID             int64                    `json:"id"`
	NotificationID string                   `json:"notification_id"`
	Channel        heraldtype.Channel       `json:"channel"`
	State          heraldtype.DeliveryState `json:"state"`
	// Outcome is CancelCancelled, CancelSent, CancelNotSent or
	// CancelInFlight.
	Outcome string `json:"outcome"`
	// now: this call cancelled it (not an earlier one).
	now bool
}

// cancelledNow counts the deliveries this cancel moved to cancelled.
func (r CancelResult) cancelledNow() int {
	n := 0
	for _, d := range r.Deliveries {
		if d.now {
			n++
		}
	}
	return n
}

// CancelWait is how long Cancel waits at most for deliveries in flight
// (Config.CancelWait; 0 when it does not wait): a transport bounding a
// cancel's time adds it to its own bound.
func (c *Client) CancelWait() time.Duration { return max(c.cfg.CancelWait, 0) }

// cancelRoundReserve is the time Cancel keeps, before its context's
// deadline, for its last round: it stops waiting that much earlier and
// reports what is still in flight, rather than running out of time in the
// middle of a round and answering nothing.
const cancelRoundReserve = 500 * time.Millisecond

// cancelPollFirst and cancelPollMax bound how long Cancel waits before it
// reads again the deliveries in flight: a provider answers a send in
// milliseconds to seconds, so the wait starts short and doubles up to a
// tenth of a second, a few reads of an index per waiting cancel.
const (
	cancelPollFirst = 2 * time.Millisecond
	cancelPollMax   = 100 * time.Millisecond
)

// Cancel cancels the notifications r selects, synchronously (issue 36
// item 4): in one transaction every pending delivery of them — scheduled,
// deferred by quiet hours, released for a retry — becomes cancelled, the
// selected triggers waiting in a digest not yet sent are taken out of it,
// and
// a delivery a worker holds (in flight) is waited for, at most
// Config.CancelWait: if it is sent, it is reported sent; if it comes back
// pending (a retry), it is cancelled then. When Cancel returns, each
// delivery of the result was sent before it returned or is never sent,
// except those it reports still in flight. A selection without
// notifications is an empty result, not an error: a cancel may come
// before its trigger or after the notifications were pruned.
func (c *Client) Cancel(ctx context.Context, r CancelRequest) (CancelResult, error) {
	p, selector, err := cancelParams(r)
	if err != nil {
		return CancelResult{}, err
	}
	deadline := time.Now().Add(c.CancelWait())
	if d, ok := ctx.Deadline(); ok && d.Add(-cancelRoundReserve).Before(deadline) {
		deadline = d.Add(-cancelRoundReserve)
	}
	decided := map[int64]*CancelledDelivery{}
	var order []int64
	var out CancelResult
	poll := cancelPollFirst
	for round := 0; ; round++ {
		p.Now = c.now().UTC()
		res, err := c.store.CancelNotifications(ctx, p)
		if err != nil {
			return CancelResult{}, err
		}
		if round == 0 {
			out.NotificationIDs = res.NotificationIDs
			if out.NotificationIDs == nil {
				out.NotificationIDs = []string{}
			}
			out.DigestItems = make([]CancelledDigestItem, len(res.DigestItems))
			for i, it := range res.DigestItems {
				out.DigestItems[i] = CancelledDigestItem{DigestID: it.DigestID, ID: it.ItemID}
			}
			// Later rounds take the notifications of the first: a trigger
			// with the key after the cancel began is not this cancel's.
			p = store.CancelParams{NotificationIDs: res.NotificationIDs, Reason: p.Reason}
		}
		waiting := false
		for _, d := range res.Deliveries {
			cd := decided[d.ID]
			if cd == nil {
				cd = &CancelledDelivery{ID: d.ID, NotificationID: d.NotificationID, Channel: d.Channel}
				decided[d.ID] = cd
				order = append(order, d.ID)
			}
			cd.State = d.State
			cd.now = cd.now || d.Cancelled
			switch {
			case d.State == heraldtype.StateCancelled:
				cd.Outcome = CancelCancelled
			case d.State == heraldtype.StateSent:
				cd.Outcome = CancelSent
			case d.State.Final():
				cd.Outcome = CancelNotSent
			default: // leased, or pending again after the move (a release)
				cd.Outcome = CancelInFlight
				waiting = true
			}
		}
		if !waiting || len(res.NotificationIDs) == 0 || !time.Now().Before(deadline) {
			break
		}
		t := time.NewTimer(min(poll, time.Until(deadline)))
		poll = min(2*poll, cancelPollMax)
		select {
		case <-ctx.Done():
			t.Stop()
			return CancelResult{}, ctx.Err()
		case <-t.C:
		}
	}
	out.Deliveries = make([]CancelledDelivery, 0, len(order))
	for _, id := range order {
		d := *decided[id]
		switch d.Outcome {
		case CancelCancelled:
			out.Cancelled++
		case CancelSent:
			out.Sent++
		case CancelNotSent:
			out.NotSent++
		default:
			out.InFlight++
		}
		c.metrics.Cancelled.WithLabelValues(selector, d.Outcome).Inc()
		out.Deliveries = append(out.Deliveries, d)
	}
	return out, nil
}

// cancelParams validates r and builds the store's selection, its reason
// for the timeline, and the metrics' selector label.
func cancelParams(r CancelRequest) (store.CancelParams, string, error) {
	by := ""
	if r.By != "" {
		by = " by " + r.By
	}
	switch {
	case r.NotificationID != "" && (r.CancellationKey != "" || r.UserID != ""):
		return store.CancelParams{}, "", heraldtype.FieldErrorf("notification_id",
			"give a notification id or a cancellation key, not both")
	case r.NotificationID != "":
		if err := validID("notification_id", r.NotificationID); err != nil {
			return store.CancelParams{}, "", err
		}
		return store.CancelParams{NotificationIDs: []string{r.NotificationID}, Reason: "cancelled" + by}, "id", nil
	case r.CancellationKey == "":
		if r.UserID != "" {
			return store.CancelParams{}, "", heraldtype.FieldErrorf("cancellation_key", "is required with user_id")
		}
		return store.CancelParams{}, "", heraldtype.FieldErrorf("notification_id", "give a notification id or a cancellation key")
	}
	if err := validCancellationKey(r.CancellationKey); err != nil {
		return store.CancelParams{}, "", err
	}
	reason := fmt.Sprintf("cancelled%s with cancellation key %q", by, r.CancellationKey)
	if r.UserID == "" {
		return store.CancelParams{CancellationKey: r.CancellationKey, Reason: reason}, "key_all_users", nil
	}
	if err := validID("user_id", r.UserID); err != nil {
		return store.CancelParams{}, "", err
	}
	return store.CancelParams{CancellationKey: r.CancellationKey, UserID: r.UserID, Reason: reason}, "key", nil
}
