package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
)

// inboxItem triggers an in-app notification for user and returns its
// inbox item.
func (e *env) inboxItem(user string) heraldtype.InboxItem {
	e.t.Helper()
	var trig triggerAnswer
	e.do("POST", "/v1/notifications", map[string]any{"user_id": user, "type": "news", "title": "News", "channels": []string{"in_app"}}).
		expect(e.t, http.StatusAccepted, &trig)
	var page herald.InboxPage
	e.do("GET", "/v1/users/"+user+"/inbox", nil).expect(e.t, 200, &page)
	for _, it := range page.Items {
		if it.NotificationID == trig.ID {
			return it
		}
	}
	e.t.Fatalf("no inbox item of %s in %+v", trig.ID, page.Items)
	return heraldtype.InboxItem{}
}

// inboxReceipts returns the receipts of an in-app delivery's timeline as
// "event/action".
func (e *env) inboxReceipts(id int64) []string {
	e.t.Helper()
	var d heraldtype.Delivery
	e.do("GET", fmt.Sprintf("/v1/deliveries/%d", id), nil).expect(e.t, 200, &d)
	var out []string
	for _, rc := range d.Receipts {
		out = append(out, string(rc.Event)+"/"+rc.Action)
	}
	return out
}

// messageDelivery is the delivery id of an item's message_id.
func messageDelivery(t *testing.T, it heraldtype.InboxItem) int64 {
	t.Helper()
	var id int64
	if _, err := fmt.Sscanf(strings.TrimPrefix(it.MessageID, it.NotificationID+"."), "%d", &id); err != nil {
		t.Fatalf("item %d: message_id %q is not <notification>.<delivery>", it.ID, it.MessageID)
	}
	return id
}

// TestInboxSeenAndClick: a user token marks its own items seen and clicks
// them; a click marks the item seen and read too, and the delivery named
// by the item's message_id gets each receipt once; another user's item
// is not found; a key with inbox:write reaches any user's (issue 35
// item 1).
func TestInboxSeenAndClick(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t)})
	e.seedUser("alice")
	e.seedUser("bob")
	a1, a2, b1 := e.inboxItem("alice"), e.inboxItem("alice"), e.inboxItem("bob")
	alice := "Bearer " + userToken(t, "alice")

	var n struct{ Updated int }
	for _, want := range []int{2, 0} {
		e.do("POST", "/v1/users/alice/inbox/seen", map[string]any{"ids": []int64{a1.ID, a2.ID, b1.ID}}, "Authorization", alice).
			expect(t, 200, &n)
		if n.Updated != want {
			t.Fatalf("seen updated %d, want %d", n.Updated, want)
		}
	}
	e.do("POST", fmt.Sprintf("/v1/users/alice/inbox/%d/click", a1.ID), map[string]any{"action": "open"}, "Authorization", alice).
		expect(t, 204, nil)
	e.do("POST", fmt.Sprintf("/v1/users/alice/inbox/%d/click", a1.ID), nil, "Authorization", alice).expect(t, 204, nil)
	e.do("POST", fmt.Sprintf("/v1/users/alice/inbox/%d/click", b1.ID), nil, "Authorization", alice).expect(t, 404, nil)

	var page herald.InboxPage
	e.do("GET", "/v1/users/alice/inbox", nil, "Authorization", alice).expect(t, 200, &page)
	if page.Unread != 1 {
		t.Fatalf("unread = %d after one click, want 1", page.Unread)
	}
	for _, it := range page.Items {
		if it.SeenAt == nil {
			t.Fatalf("item %d not seen: %+v", it.ID, it)
		}
		if clicked := it.ID == a1.ID; clicked != (it.ClickedAt != nil) || clicked != (it.ReadAt != nil) {
			t.Fatalf("item %d: clicked_at %v, read_at %v", it.ID, it.ClickedAt, it.ReadAt)
		}
	}
	if got := e.inboxReceipts(messageDelivery(t, a1)); strings.Join(got, ",") != "seen/,read/,clicked/open" {
		t.Fatalf("clicked item's timeline receipts = %v", got)
	}
	if got := e.inboxReceipts(messageDelivery(t, b1)); len(got) != 0 {
		t.Fatalf("alice's token marked bob's item: %v", got)
	}

	// The app may name the item's message in POST /v1/receipts too: the
	// clicked receipt is already there.
	wantReceipts(t, e.receipts(userToken(t, "alice"), map[string]any{"message_id": a1.MessageID, "event": "clicked"}),
		0, 1, 0, heraldtype.ReceiptDuplicate)

	// A server key with inbox:write reaches bob's items; without it, no.
	key := e.key(auth.ScopeInboxWrite)
	e.do("POST", fmt.Sprintf("/v1/users/bob/inbox/%d/click", b1.ID), nil, "Authorization", "Bearer "+key).expect(t, 204, nil)
	if got := e.inboxReceipts(messageDelivery(t, b1)); strings.Join(got, ",") != "seen/,read/,clicked/" {
		t.Fatalf("bob's timeline receipts = %v", got)
	}
	reader := "Bearer " + e.key(auth.ScopeInboxRead)
	e.do("POST", "/v1/users/bob/inbox/seen", map[string]any{"ids": []int64{b1.ID}}, "Authorization", reader).expect(t, 403, nil)
	e.do("POST", fmt.Sprintf("/v1/users/bob/inbox/%d/click", b1.ID), nil, "Authorization", reader).expect(t, 403, nil)
	e.do("POST", "/v1/users/bob/inbox/seen", map[string]any{"ids": []int64{b1.ID}}, "Authorization", alice).expect(t, 403, nil)
}

// TestInboxSeenAndClickRefuseBadInput: the batch and the action are
// bounded, and a malformed request is invalid_argument.
func TestInboxSeenAndClickRefuseBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.seedUser("alice")
	it := e.inboxItem("alice")
	over := make([]int64, 1001)
	for i := range over {
		over[i] = int64(i + 1)
	}
	click := fmt.Sprintf("/v1/users/alice/inbox/%d/click", it.ID)
	for _, c := range []struct {
		name, path string
		body       any
	}{
		{"no ids", "/v1/users/alice/inbox/seen", map[string]any{"ids": []int64{}}},
		{"too many ids", "/v1/users/alice/inbox/seen", map[string]any{"ids": over}},
		{"bad id", "/v1/users/alice/inbox/seen", map[string]any{"ids": []int64{0}}},
		{"no body", "/v1/users/alice/inbox/seen", nil},
		{"long action", click, map[string]any{"action": strings.Repeat("a", heraldtype.MaxReceiptActionLen+1)}},
		{"control in action", click, map[string]any{"action": "a\u0007"}},
		{"unknown field", click, map[string]any{"button": "x"}},
		{"bad item id", "/v1/users/alice/inbox/x/click", nil},
	} {
		r := e.do("POST", c.path, c.body)
		var body struct{ Code string }
		r.expect(t, 400, &body)
		if body.Code != "invalid_argument" {
			t.Errorf("%s: code %q", c.name, body.Code)
		}
	}
	if got := e.inboxReceipts(messageDelivery(t, it)); len(got) != 0 {
		t.Fatalf("a refused request recorded %v", got)
	}
}
