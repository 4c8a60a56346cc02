package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
)

// TestEngagement: GET /v1/engagement answers the report a receipt shows
// up in, grouped and filtered as asked; a bad parameter is 400 naming it;
// the route needs notifications:read (issue 35 item 3). The test server
// validates every answer against the OpenAPI document.
func TestEngagement(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.seedUser("alice")
	msg, _ := e.messageID("alice")
	relay := e.key(auth.ScopeReceiptsWrite)
	wantReceipts(t, e.receipts(relay, map[string]any{"message_id": msg, "event": "opened"}), 1, 0, 0, heraldtype.ReceiptRecorded)

	var rep heraldtype.Engagement
	e.do("GET", "/v1/engagement?group_by=type,channel&interval=day", nil).expect(t, http.StatusOK, &rep)
	if len(rep.Rows) != 1 || rep.Rows[0].Type != "promo" || rep.Rows[0].Channel != heraldtype.ChannelPush ||
		rep.Rows[0].Opened != 1 || rep.Interval != "day" || rep.Rows[0].Start.IsZero() {
		t.Fatalf("report = %+v", rep)
	}
	from := url.QueryEscape(time.Now().Add(-time.Hour).Format(time.RFC3339))
	e.do("GET", "/v1/engagement?type=promo&channel=push&from="+from+"&rule=&campaign=", nil).expect(t, http.StatusOK, &rep)
	if len(rep.Rows) != 1 || len(rep.GroupBy) != 0 || rep.Total.Opened != 1 {
		t.Fatalf("filtered report = %+v", rep)
	}
	for q, field := range map[string]string{
		"group_by=user":             "group_by",
		"interval=week":             "interval",
		"channel=fax":               "channel",
		"from=yesterday":            "from",
		"nope=1":                    "nope",
		"type=a&type=b":             "type",
		"from=2025-01-01T00:00:00Z": "from", // over 400 days before now
	} {
		r := e.do("GET", "/v1/engagement?"+q, nil)
		if r.status != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400; %s", q, r.status, r.body)
			continue
		}
		if eb := r.errorBody(t); eb.Field != field {
			t.Errorf("%s: field %q, want %q", q, eb.Field, field)
		}
	}
	if r := e.do("GET", "/v1/engagement", nil, "Authorization", "Bearer "+e.key(auth.ScopeInboxRead)); r.status != http.StatusForbidden {
		t.Fatalf("a key without notifications:read: %d %s", r.status, r.body)
	}
}
