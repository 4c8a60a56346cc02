package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
)

// messageID triggers a push for user and returns its delivery's messageId
// and id.
func (e *env) messageID(user string) (string, int64) {
	e.t.Helper()
	var trig triggerAnswer
	e.do("POST", "/v1/notifications", map[string]any{"user_id": user, "type": "promo", "title": "Sale"}).
		expect(e.t, http.StatusAccepted, &trig)
	var page herald.DeliveryPage
	e.do("GET", "/v1/deliveries?notification_id="+trig.ID, nil).expect(e.t, 200, &page)
	if len(page.Deliveries) != 1 {
		e.t.Fatalf("deliveries of %s: %+v", trig.ID, page.Deliveries)
	}
	d := page.Deliveries[0]
	return heraldtype.DeliveryKey(d.NotificationID, d.ID), d.ID
}

// receipts posts a batch of receipts with the credential.
func (e *env) receipts(cred string, rs ...map[string]any) response {
	e.t.Helper()
	return e.do("POST", "/v1/receipts", map[string]any{"receipts": rs}, "Authorization", "Bearer "+cred)
}

// timelineReceipts returns the receipt rows of a delivery's timeline as
// "event/action".
func (e *env) timelineReceipts(id int64) []string {
	e.t.Helper()
	var d heraldtype.Delivery
	e.do("GET", fmt.Sprintf("/v1/deliveries/%d", id), nil).expect(e.t, 200, &d)
	var out []string
	for _, rc := range d.Receipts {
		out = append(out, string(rc.Event)+"/"+rc.Action)
	}
	if len(d.Attempts) != 0 {
		e.t.Fatalf("a receipt became an attempt: %+v", d.Attempts)
	}
	return out
}

func wantReceipts(t *testing.T, r response, recorded, duplicate, notFound int, results ...heraldtype.ReceiptResult) {
	t.Helper()
	var got heraldtype.ReceiptsResult
	r.expect(t, 200, &got)
	if got.Recorded != recorded || got.Duplicate != duplicate || got.NotFound != notFound || len(got.Results) != len(results) {
		t.Fatalf("answer %s, want %d recorded, %d duplicate, %d not found", r.body, recorded, duplicate, notFound)
	}
	for i, res := range results {
		if got.Results[i].Result != res {
			t.Fatalf("result %d = %s, want %s (%s)", i, got.Results[i].Result, res, r.body)
		}
	}
}

// TestReceipts: the app's receipts land on their delivery's timeline once
// each; a user token reaches only its own user's messages — another
// user's answers exactly as an unknown one — and a key with
// receipts:write any user's (issue 35 item 1).
func TestReceipts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t)})
	e.seedUser("alice")
	e.seedUser("bob")
	alice, aliceID := e.messageID("alice")
	bob, bobID := e.messageID("bob")
	aliceToken := userToken(t, "alice")

	batch := []map[string]any{
		{"message_id": alice, "event": "opened", "at": time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)},
		{"message_id": alice, "event": "clicked", "action": "reply"},
		{"message_id": bob, "event": "opened"},
		{"message_id": "01JQ8M5ZK3W6T1X0S9V4R2B7CD.42", "event": "opened"},
	}
	wantReceipts(t, e.receipts(aliceToken, batch...), 2, 0, 2,
		heraldtype.ReceiptRecorded, heraldtype.ReceiptRecorded, heraldtype.ReceiptNotFound, heraldtype.ReceiptNotFound)
	// Again: nothing new, the same answer for bob's and the unknown one.
	r := e.receipts(aliceToken, batch...)
	wantReceipts(t, r, 0, 2, 2,
		heraldtype.ReceiptDuplicate, heraldtype.ReceiptDuplicate, heraldtype.ReceiptNotFound, heraldtype.ReceiptNotFound)
	if strings.Contains(string(r.body), "bob") {
		t.Fatalf("the answer names another user: %s", r.body)
	}
	if got := e.timelineReceipts(aliceID); strings.Join(got, ",") != "opened/,clicked/reply" {
		t.Fatalf("alice's timeline receipts = %v", got)
	}
	if got := e.timelineReceipts(bobID); len(got) != 0 {
		t.Fatalf("alice's token put receipts on bob's timeline: %v", got)
	}

	// A server key with receipts:write reports any user's messages.
	relay := e.key(auth.ScopeReceiptsWrite)
	wantReceipts(t, e.receipts(relay, map[string]any{"message_id": bob, "event": "delivered"}), 1, 0, 0, heraldtype.ReceiptRecorded)
	if got := e.timelineReceipts(bobID); strings.Join(got, ",") != "delivered/" {
		t.Fatalf("bob's timeline receipts = %v", got)
	}
	if r := e.receipts(e.key(auth.ScopeInboxWrite), map[string]any{"message_id": bob, "event": "opened"}); r.status != 403 {
		t.Fatalf("a key without receipts:write: %d %s", r.status, r.body)
	}
}

// TestReceiptsRefuseBadInput: a malformed receipt refuses the whole batch
// with invalid_argument naming it, records nothing, and is never a 500;
// the batch is bounded (max_receipts).
func TestReceiptsRefuseBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t)})
	e.seedUser("alice")
	alice, aliceID := e.messageID("alice")
	good := map[string]any{"message_id": alice, "event": "dismissed"}
	many := make([]map[string]any, herald.DefaultMaxReceipts+1)
	for i := range many {
		many[i] = good
	}
	for _, c := range []struct {
		name  string
		body  any
		field string
	}{
		{"no receipts", map[string]any{"receipts": []any{}}, "receipts"},
		{"too many", map[string]any{"receipts": many}, "receipts"},
		{"an inbox event", map[string]any{"receipts": []any{good, map[string]any{"message_id": alice, "event": "read"}}}, "receipts[1].event"},
		{"no event", map[string]any{"receipts": []any{map[string]any{"message_id": alice}}}, "receipts[0].event"},
		{"no message id", map[string]any{"receipts": []any{map[string]any{"event": "opened"}}}, "receipts[0].message_id"},
		{"not a message id", map[string]any{"receipts": []any{map[string]any{"message_id": "hello", "event": "opened"}}}, "receipts[0].message_id"},
		{"a signed delivery id", map[string]any{"receipts": []any{map[string]any{"message_id": "n.+1", "event": "opened"}}}, "receipts[0].message_id"},
		{"a bad time", map[string]any{"receipts": []any{good, map[string]any{"message_id": alice, "event": "opened", "at": "yesterday"}}}, "receipts[1].at"},
		{"a long action", map[string]any{"receipts": []any{map[string]any{"message_id": alice, "event": "clicked", "action": strings.Repeat("a", 65)}}}, "receipts[0].action"},
		{"a control character", map[string]any{"receipts": []any{map[string]any{"message_id": alice, "event": "clicked", "action": "a\u202eb"}}}, "receipts[0].action"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", "/v1/receipts", c.body)
			if r.status != 400 {
				t.Fatalf("status %d %s, want 400", r.status, r.body)
			}
			if eb := r.errorBody(t); eb.Code != heraldtype.EINVALID || eb.Field != c.field {
				t.Fatalf("error %+v, want invalid_argument on %s", eb, c.field)
			}
		})
	}
	if r := e.do("POST", "/v1/receipts", `{"receipts":[{"message_id":"x.1","event":"opened","colour":"red"}]}`); r.status != 400 {
		t.Fatalf("an unknown field: %d %s", r.status, r.body)
	}
	if got := e.timelineReceipts(aliceID); len(got) != 0 {
		t.Fatalf("a refused batch recorded %v", got)
	}
}
